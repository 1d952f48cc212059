package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task"
)

// CreateRequest starts an episode. Index picks the instance of the split
// (default: seed mod 2^31); Seed and Sample seed the user exactly as
// rollout.Run does for (Seed, Index, Sample), so a served episode with the
// same user and agent turns replays an offline one.
//
// EpisodeSeed, when set, is used as the episode's seed as is, instead of
// deriving it from (Seed, Index, Sample): it is the "seed" field of a
// logged episode, so a dataset exported from logs (export kind prompts)
// replays each logged episode's user, opening included. Task is the full
// name, level and options included ("mathchat:easy"), and MaxTurns the
// logged episode's turn limit (default the server's --max-turns, which
// also bounds it): export writes both into interaction_kwargs.
type CreateRequest struct {
	Task        string `json:"task"`
	Split       string `json:"split,omitempty"` // default "train"
	Seed        Seed   `json:"seed"`
	User        string `json:"user,omitempty"` // default "human"
	Index       *int   `json:"index,omitempty"`
	Sample      int    `json:"sample,omitempty"`
	EpisodeSeed *Seed  `json:"episode_seed,omitempty"`
	MaxTurns    int    `json:"max_turns,omitempty"`
}

// MaxExactJSONInt is the largest integer every JSON parser reads exactly:
// JavaScript and jq read numbers as doubles, which hold integers up to
// 2^53 − 1 and round the ones above.
const MaxExactJSONInt = 1<<53 - 1

// Seed is a 64-bit seed on the wire: a decimal string (any uint64), or a
// JSON number up to MaxExactJSONInt. A larger number is refused, since the
// client that wrote it may have rounded it already (a rounded seed opens
// another episode, silently). Seeds are written as strings.
type Seed uint64

// UnmarshalJSON reads a string or an exactly representable number.
func (s *Seed) UnmarshalJSON(b []byte) error {
	text := strings.TrimSpace(string(b))
	if strings.HasPrefix(text, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		v, err := strconv.ParseUint(strings.TrimSpace(str), 10, 64)
		if err != nil {
			return fmt.Errorf("seed %q: want a decimal unsigned 64-bit integer", str)
		}
		*s = Seed(v)
		return nil
	}
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return fmt.Errorf("seed %s: want a non-negative integer (send seeds above 2^53 - 1 as strings)", text)
	}
	if v > MaxExactJSONInt {
		return fmt.Errorf("seed %s is above 2^53 - 1: JSON parsers that read numbers as doubles round it, so it may not be the seed that was logged: send it as a string (\"%s\")", text, text)
	}
	*s = Seed(v)
	return nil
}

// MarshalJSON writes the seed as a decimal string.
func (s Seed) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatUint(uint64(s), 10) + `"`), nil
}

// Observation is the agent's first view of an episode.
type Observation struct {
	// System is the agent's system message, exactly as calibrl's own
	// policy reads it and exported policy data holds it (dialog.View's
	// System: the instructions, then the draft when there is one). A
	// client that sends it as the system message sees what the embedded
	// policy sees.
	System string `json:"system"`
	// Instructions and Draft are System's parts: the task's instructions
	// and the document the agent starts from (docedit).
	Instructions string `json:"instructions"`
	Draft        string `json:"draft,omitempty"`
	// Messages holds the user's opening.
	Messages []dialog.Message `json:"messages"`
}

// CreateResponse names the new episode and shows its first view.
type CreateResponse struct {
	ID          string      `json:"id"`
	Observation Observation `json:"observation"`
}

// TurnRequest is the agent's next message.
type TurnRequest struct {
	Message string `json:"message"`
}

// TurnResponse is the user's answer. Reward is 0 until Done, then the
// task's score of the conversation. Note is the task environment's note
// on the agent's message (dialog.Environment: docedit's current document
// after a turn of edit commands), "" for none: the transcript records it
// as a system message before the reply, the user read it, and the agent
// should be shown it as a system message before the reply, as calibrl's
// own agents are. ReplyNote is the environment's note on the reply
// (mathchat's ledger on the horizon levels: the numbers still missing),
// "" for none: the transcript records it as a system message after the
// reply, and the agent should be shown it there before its next turn.
type TurnResponse struct {
	Note      string   `json:"note,omitempty"`
	Reply     string   `json:"reply"`
	ReplyNote string   `json:"reply_note,omitempty"`
	Done      bool     `json:"done"`
	Reward    float64  `json:"reward"`
	Info      TurnInfo `json:"info"`
}

// TurnInfo is what a trainer may log about a turn.
type TurnInfo struct {
	Turn      int                `json:"turn"`
	MaxTurns  int                `json:"max_turns"`
	End       dialog.EndReason   `json:"end,omitempty"`
	Success   bool               `json:"success"`
	Outcome   string             `json:"outcome,omitempty"`
	Metrics   map[string]float64 `json:"metrics,omitempty"`
	UserEnded bool               `json:"user_ended"`
}

// Transcript is an episode as GET /v1/episodes/{id} shows it. It leaves
// out the oracle context: the ground truth never reaches the agent side.
//
// Task, Split, Index, Sample, EpisodeSeed and MaxTurns are what replays
// the episode: POST them to /v1/episodes.
type Transcript struct {
	ID          string             `json:"id"`
	Task        string             `json:"task"`
	Split       string             `json:"split"`
	User        string             `json:"user"`
	EpisodeSeed Seed               `json:"episode_seed"`
	Index       int                `json:"index"`
	Sample      int                `json:"sample"`
	MaxTurns    int                `json:"max_turns"`
	Created     time.Time          `json:"created"`
	Messages    []dialog.Message   `json:"messages"`
	Turns       int                `json:"turns"`
	Tokens      int                `json:"tokens"`
	Done        bool               `json:"done"`
	End         dialog.EndReason   `json:"end,omitempty"`
	Reward      float64            `json:"reward"`
	Success     bool               `json:"success"`
	Outcome     string             `json:"outcome,omitempty"`
	Metrics     map[string]float64 `json:"metrics,omitempty"`
}

func (s *Server) createEpisode(w http.ResponseWriter, r *http.Request) {
	var req CreateRequest
	if !decode(w, r, s.cfg.MaxBodyBytes, &req, true) {
		return
	}
	if req.Split == "" {
		req.Split = "train"
	}
	if req.User == "" {
		req.User = "human"
	}
	if req.Task == "" {
		writeError(w, http.StatusBadRequest, errInvalid, "no task: want {\"task\": NAME} with one of "+fmt.Sprint(task.Names()))
		return
	}
	if err := task.CheckSplit(req.Split); err != nil {
		writeError(w, http.StatusBadRequest, errInvalid, err.Error())
		return
	}
	if req.MaxTurns == 0 {
		req.MaxTurns = s.cfg.MaxTurns
	}
	if req.MaxTurns < 0 || req.MaxTurns > s.cfg.MaxTurns {
		writeErrorCode(w, http.StatusBadRequest, errInvalid, "", "max_turns", fmt.Sprintf("max_turns %d: want 1 to %d (the server's --max-turns)", req.MaxTurns, s.cfg.MaxTurns))
		return
	}
	index := int(req.Seed % (1 << 31))
	if req.Index != nil {
		index = *req.Index
	}
	if index < 0 || req.Sample < 0 {
		writeError(w, http.StatusBadRequest, errInvalid, "index and sample must not be negative")
		return
	}
	if !slices.Contains(s.cfg.Users, req.User) {
		writeError(w, http.StatusBadRequest, errInvalid, fmt.Sprintf("user %q is not served here (served: %s)", req.User, strings.Join(s.cfg.Users, ", ")))
		return
	}
	t, u, err := s.envs.get(req.Task, req.User)
	if err != nil {
		writeError(w, http.StatusBadRequest, errInvalid, err.Error())
		return
	}
	oracle, view, err := t.Instance(req.Split, index)
	if err != nil {
		writeError(w, http.StatusBadRequest, errInvalid, fmt.Sprintf("instance %s/%d: %v", req.Split, index, err))
		return
	}
	seed := rollout.EpisodeSeed(uint64(req.Seed), index, req.Sample)
	if req.EpisodeSeed != nil {
		seed = uint64(*req.EpisodeSeed)
	}
	e := &episode{task: t, live: rollout.Begin(dialog.Episode{
		Task: req.Task, Split: req.Split, User: req.User, Agent: "serve", MaxTurns: req.MaxTurns,
		Seed: seed, Index: index, Sample: req.Sample, Oracle: *oracle, View: *view,
	}, nil, u, rollout.Rules{Env: dialog.EnvironmentOf(t)})}
	if err := e.live.Open(r.Context()); err != nil {
		s.log.Warn("user open failed", "task", req.Task, "user", req.User, "err", err)
		writeError(w, http.StatusBadGateway, errServer, "user could not open the conversation: "+err.Error())
		return
	}
	if err := s.store.add(e); err != nil {
		writeError(w, http.StatusTooManyRequests, errCapacity, fmt.Sprintf("%v (cap %d): finish or DELETE episodes, or wait for them to expire", err, s.cfg.MaxEpisodes))
		return
	}
	e.live.Ep.ID = e.id
	s.log.Debug("episode created", "id", e.id, "task", req.Task, "split", req.Split, "index", index, "user", req.User)
	writeJSON(w, http.StatusCreated, CreateResponse{ID: e.id, Observation: Observation{
		System: view.System(), Instructions: view.Instructions, Draft: view.Draft, Messages: append([]dialog.Message(nil), e.live.Ep.Messages...),
	}})
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) (*episode, bool) {
	id := r.PathValue("id")
	e, ok := s.store.get(id)
	if !ok {
		writeError(w, http.StatusNotFound, errNotFound, fmt.Sprintf("no episode %q (unknown, expired or deleted)", id))
	}
	return e, ok
}

func (s *Server) turn(w http.ResponseWriter, r *http.Request) {
	var req TurnRequest
	if !decode(w, r, s.cfg.MaxBodyBytes, &req, true) {
		return
	}
	e, ok := s.lookup(w, r)
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.live.Done() {
		writeError(w, http.StatusConflict, errConflict, fmt.Sprintf("episode %s is over (%s); read it with GET or start another", e.id, e.live.Ep.End))
		return
	}
	// The environment answers the turn before the user does, as in the
	// rollout; a turn the user could not answer is not recorded, so the
	// client may send it again.
	x, err := e.live.Exchange(r.Context(), req.Message)
	if err != nil {
		status := http.StatusBadGateway
		if r.Context().Err() != nil {
			status = 499 // the client left; nobody reads this reply
		}
		s.log.Warn("user reply failed", "id", e.id, "err", err)
		writeError(w, status, errServer, "user could not reply: "+err.Error())
		return
	}
	ep := &e.live.Ep
	resp := TurnResponse{Note: x.Note, Reply: x.Reply, ReplyNote: x.ReplyNote, Info: TurnInfo{Turn: ep.Turns, MaxTurns: ep.MaxTurns, UserEnded: x.End}}
	if e.live.Done() {
		e.live.Finish(e.task)
		e.closed.Store(true)
		resp.Done, resp.Reward = true, ep.Reward
		resp.Info.End, resp.Info.Success, resp.Info.Outcome, resp.Info.Metrics = ep.End, ep.Success, ep.Outcome, ep.Metrics
		s.log.Debug("episode done", "id", e.id, "end", ep.End, "reward", ep.Reward, "turns", ep.Turns)
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) getEpisode(w http.ResponseWriter, r *http.Request) {
	e, ok := s.lookup(w, r)
	if !ok {
		return
	}
	e.mu.Lock()
	ep := &e.live.Ep
	t := Transcript{
		ID: e.id, Task: ep.Task, Split: ep.Split, User: ep.User, EpisodeSeed: Seed(ep.Seed), Index: ep.Index, Sample: ep.Sample, MaxTurns: ep.MaxTurns,
		Created: e.created, Messages: append([]dialog.Message(nil), ep.Messages...), Turns: ep.Turns, Done: e.live.Done(),
		End: ep.End, Reward: ep.Reward, Success: ep.Success, Outcome: ep.Outcome, Metrics: ep.Metrics,
	}
	for _, m := range ep.Messages {
		t.Tokens += m.Tokens
	}
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) deleteEpisode(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.store.remove(id) {
		writeError(w, http.StatusNotFound, errNotFound, fmt.Sprintf("no episode %q", id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
