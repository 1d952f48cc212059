package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
// logged episode's turn limit (default the server's --max-turns, else the
// task level's limit, which also bounds it: Server.turnLimit): export writes both into interaction_kwargs.
type CreateRequest struct {
	Task        string `json:"task"`
	Split       string `json:"split,omitempty"` // default "train"
	Seed        Seed   `json:"seed"`
	User        string `json:"user,omitempty"` // default dialog.Human
	Index       *int   `json:"index,omitempty"`
	Sample      int    `json:"sample,omitempty"`
	EpisodeSeed *Seed  `json:"episode_seed,omitempty"`
	MaxTurns    int    `json:"max_turns,omitempty"`
	// Opening and LoggedUser are an exported row's
	// (export.InteractionKwargs): the user's opening its prompt ends with,
	// which the trainer's agent reads, and the user who said it. When
	// LoggedUser names another user than User (rows logged against the
	// human proxy, trained against a simulator), the episode opens with
	// Opening and User continues from it: the agent and the user read the
	// same conversation. Otherwise User opens as always, and an opening
	// other than Opening is refused with its cause (openingMismatch).
	Opening    *string `json:"opening,omitempty"`
	LoggedUser string  `json:"logged_user,omitempty"`
}

// codeOpeningMismatch: the user opens the episode otherwise than the
// row the client holds, though the row names no other user.
const codeOpeningMismatch = "opening_mismatch"

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

// TurnRequest is the agent's next message. Messages, when sent, is the
// conversation before it as the client holds it (the message list a
// trainer such as verl passes every turn; it may end with Message itself):
// with it any replica answers the turn, rebuilding the episode from its id
// and the agent's earlier turns when it does not hold it (recover.go,
// docs/serve.md). Without it a turn needs the replica that holds the
// episode.
type TurnRequest struct {
	Message  string           `json:"message"`
	Messages []HistoryMessage `json:"messages,omitempty"`
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
	// Replayed is how many earlier turns this replica replayed to answer
	// this one (the episode was rebuilt or caught up from Messages).
	Replayed int `json:"replayed,omitempty"`
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
	e, rerr := s.create(r.Context(), req)
	if rerr != nil {
		rerr.write(w)
		return
	}
	view := &e.live.Ep.View
	writeJSON(w, http.StatusCreated, CreateResponse{ID: e.id, Observation: Observation{
		System: view.System(), Instructions: view.Instructions, Draft: view.Draft, Messages: append([]dialog.Message(nil), e.live.Ep.Messages...),
	}})
}

// create starts the episode req asks for and stores it: the episode API's
// create and OpenEnv's reset alike.
func (s *Server) create(ctx context.Context, req CreateRequest) (*episode, *replyError) {
	k := episodeKey{Task: req.Task, Split: req.Split, User: req.User, Sample: req.Sample, MaxTurns: req.MaxTurns, Nonce: newKeyNonce()}
	if k.Split == "" {
		k.Split = "train"
	}
	if k.User == "" {
		k.User = dialog.Human.String()
	}
	if k.MaxTurns == 0 {
		k.MaxTurns = s.turnLimit(k.Task)
	}
	k.Index = int(req.Seed % (1 << 31))
	if req.Index != nil {
		k.Index = *req.Index
	}
	if ke := s.check(k); ke != nil {
		return nil, &replyError{status: http.StatusBadRequest, typ: errInvalid, param: ke.Param, message: ke.Message}
	}
	k.Seed = Seed(rollout.EpisodeSeed(uint64(req.Seed), k.Index, k.Sample))
	if req.EpisodeSeed != nil {
		k.Seed = *req.EpisodeSeed
	}
	var given *string
	if req.Opening != nil && req.LoggedUser != "" && req.LoggedUser != k.User {
		k.Given, given = true, req.Opening
	}
	e, rerr := s.openCharged(ctx, k, given)
	if rerr != nil {
		return nil, rerr
	}
	if req.Opening != nil && !k.Given {
		if rerr := openingMismatch(k, req.LoggedUser, *req.Opening, e.live.Ep.Messages[0].Content); rerr != nil {
			s.dropUnstored(e)
			return nil, rerr
		}
	}
	held, err := s.store.add(e)
	if err != nil {
		s.dropUnstored(e)
		return nil, &replyError{status: http.StatusTooManyRequests, typ: errCapacity, message: fmt.Sprintf("%v (cap %d): finish or DELETE episodes, or wait for them to expire", err, s.cfg.MaxEpisodes)}
	}
	if held != e { // the id was taken (ids carry a random nonce: never seen)
		s.dropUnstored(e)
		return nil, &replyError{status: http.StatusConflict, typ: errConflict, message: fmt.Sprintf("episode %s is held already; create it again", e.id)}
	}
	s.log.Debug("episode created", "id", e.id, "task", k.Task, "split", k.Split, "index", k.Index, "user", k.User)
	return e, nil
}

// openingMismatch refuses an episode whose user opened it otherwise than
// the client's row (opening, logged by loggedUser, "" when the row does
// not say), naming the cause the row allows.
func openingMismatch(k episodeKey, loggedUser, opening, got string) *replyError {
	if opening == got {
		return nil
	}
	what := fmt.Sprintf("the row's opening %.60q is not what user %s says opening episode %s/%s/%d (seed %d): %.60q", opening, k.User, k.Task, k.Split, k.Index, uint64(k.Seed), got)
	cause := "the row was logged with this same user, so this server plays other data or another calibrl version than the one that logged it: serve the row's calibrl version with the same --data"
	if loggedUser == "" {
		cause = "the row does not say which user it was logged with (an older export): if it was another user than " + k.User + ", export it again with this calibrl (its rows carry logged_user, and the episode then opens with the row's opening); if it was " + k.User + ", this server plays other data or another calibrl version than the one that logged it"
	}
	return &replyError{http.StatusConflict, errConflict, codeOpeningMismatch, "opening", what + ": " + cause}
}

// open begins the episode k names and has the user open it: the one way
// an episode starts, for a create request and for a recovery alike, so a
// recovered episode is the created one. k has passed check. When opening
// is not nil the episode opens with it instead (k.Given: a row's opening,
// logged with another user; or the opening a client's messages hold, to
// rebuild an episode whose user cannot be replayed): a scripted user is
// walked through its own opening, its words discarded, so its state is
// that of a user who opened (as rollout.Resume walks one); a model-backed
// user reads everything from the conversation. The episode uses its
// cached environment until it is dropped: the store drops the episodes it
// held, and whoever does not store one drops it (dropUnstored).
func (s *Server) open(ctx context.Context, k episodeKey, opening *string) (*episode, *replyError) {
	env, u, err := s.envs.get(k.Task, k.User)
	if errors.Is(err, errEnvsFull) {
		return nil, &replyError{http.StatusTooManyRequests, errCapacity, "environments_exceeded", "task", fmt.Sprintf(
			"%v: %d environments are cached and each has live episodes (--max-environments %d): finish or DELETE episodes of other tasks, or wait for them to expire", err, s.cfg.MaxEnvironments, s.cfg.MaxEnvironments)}
	}
	if err != nil {
		if n, perr := task.ParseName(k.Task); perr == nil && n.Data.SHA256 != "" {
			// What is wrong with the server's data (a file changed or
			// gone since --data) names the server's paths: the log has it,
			// the client is told what it can act on.
			s.log.Warn("task data unusable", "task", k.Task, "err", err)
			return nil, &replyError{status: http.StatusBadRequest, typ: errInvalid, param: "task", message: fmt.Sprintf(
				"task %q: the server holds no usable data with sha256 %s (not given with --data, or changed since; its log says which)", k.Task, n.Data.SHA256)}
		}
		return nil, &replyError{status: http.StatusBadRequest, typ: errInvalid, message: err.Error()}
	}
	t := env.task
	oracle, view, err := t.Instance(k.Split, k.Index)
	if err != nil {
		s.envs.release(env)
		return nil, &replyError{status: http.StatusBadRequest, typ: errInvalid, message: fmt.Sprintf("instance %s/%d: %v", k.Split, k.Index, err)}
	}
	e := &episode{id: k.id(), key: k, task: t, env: env, live: rollout.Begin(dialog.Episode{
		ID: k.id(), Task: k.Task, Split: k.Split, User: k.User, Agent: "serve", MaxTurns: k.MaxTurns,
		Seed: uint64(k.Seed), Index: k.Index, Sample: k.Sample, Oracle: *oracle, View: *view,
	}, nil, u, rollout.Rules{Env: dialog.EnvironmentOf(t)})}
	if err := openWith(ctx, e.live, u, opening); err != nil {
		s.dropUnstored(e)
		s.log.Warn("user open failed", "task", k.Task, "user", k.User, "err", err)
		return nil, &replyError{status: http.StatusBadGateway, typ: errServer, message: "user could not open the conversation: " + err.Error()}
	}
	return e, nil
}

// openWith has the user open l, or records opening as the user's first
// message when it is not nil (open).
func openWith(ctx context.Context, l *rollout.Live, u dialog.User, opening *string) error {
	if opening == nil {
		return l.Open(ctx)
	}
	if _, batch := u.(dialog.BatchUser); !batch {
		if _, err := l.User.Open(ctx); err != nil {
			return err
		}
	}
	l.Opened(*opening)
	return nil
}

// dropUnstored drops an episode the store never took.
func (s *Server) dropUnstored(e *episode) {
	e.dropOnce.Do(func() { s.dropEpisode(e) })
}

// serverFull refuses a request that would take the server past
// MaxHeldBytes.
// openCharged opens the episode k names (open) and charges what it holds
// to the server's byte bound, for a create and a recovery alike: a full
// server drops it again and answers 429.
func (s *Server) openCharged(ctx context.Context, k episodeKey, opening *string) (*episode, *replyError) {
	e, rerr := s.open(ctx, k, opening)
	if rerr != nil {
		return nil, rerr
	}
	if !s.bytes.reserve(e, messageBytes(e.live.Ep.Messages)) {
		s.dropUnstored(e)
		return nil, s.serverFull()
	}
	return e, nil
}

func (s *Server) serverFull() *replyError {
	return &replyError{http.StatusTooManyRequests, errCapacity, "server_bytes_exceeded", "", fmt.Sprintf(
		"the server holds %d bytes of messages, at most %d (--max-held-bytes): finish and DELETE episodes, or wait for them to expire", s.bytes.total(), s.cfg.MaxHeldBytes)}
}

// step plays the agent's turn text on e, whose lock the caller holds: the
// environment's note, the user's reply and, when that ends the episode,
// the score. A live turn and a replayed one are this same step. When the
// user cannot answer, e is left as it was.
func (e *episode) step(ctx context.Context, text string) (TurnResponse, error) {
	x, err := e.live.Exchange(ctx, text)
	if err != nil {
		return TurnResponse{}, err
	}
	ep := &e.live.Ep
	resp := TurnResponse{Note: x.Note, Reply: x.Reply, ReplyNote: x.ReplyNote, Info: TurnInfo{Turn: ep.Turns, MaxTurns: ep.MaxTurns, UserEnded: x.End}}
	if e.live.Done() {
		e.live.Finish(e.task)
		e.closed.Store(true)
		resp.Done, resp.Reward = true, ep.Reward
		resp.Info.End, resp.Info.Success, resp.Info.Outcome, resp.Info.Metrics = ep.End, ep.Success, ep.Outcome, ep.Metrics
	}
	return resp, nil
}

func (s *Server) turn(w http.ResponseWriter, r *http.Request) {
	var req TurnRequest
	if !decode(w, r, s.cfg.MaxBodyBytes, &req, true) {
		return
	}
	var h history
	if req.Messages != nil {
		var err error
		if h, err = splitHistory(req.Messages, req.Message); err != nil {
			writeErrorCode(w, http.StatusBadRequest, errInvalid, "", "messages", err.Error())
			return
		}
	}
	id := r.PathValue("id")
	e, ok := s.store.get(id)
	if !ok {
		if req.Messages == nil {
			if _, err := parseEpisodeID(id); err == nil {
				writeErrorCode(w, http.StatusNotFound, errNotFound, codeNotHeld, "messages", fmt.Sprintf("episode %s is not held here (another replica opened it, or this one restarted): send the turn with the conversation so far in messages and it is rebuilt", id))
				return
			}
			writeError(w, http.StatusNotFound, errNotFound, fmt.Sprintf("no episode %q (unknown, expired or deleted)", id))
			return
		}
		var rerr *replyError
		if e, rerr = s.recoverEpisode(r.Context(), id, h); rerr != nil {
			rerr.write(w)
			return
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	replayed := 0
	if req.Messages != nil {
		var rerr *replyError
		replayed, rerr = s.catchUp(r.Context(), e, h)
		s.bytes.settle(e, messageBytes(e.live.Ep.Messages))
		if rerr != nil {
			rerr.write(w)
			return
		}
	}
	resp, rerr := s.play(r.Context(), e, req.Message)
	if rerr != nil {
		rerr.write(w)
		return
	}
	resp.Info.Replayed = replayed
	writeJSON(w, http.StatusOK, resp)
}

// play is a client's turn on e, whose lock the caller holds: refused once
// the episode is over or past its bytes, else the step. The episode API's
// turn and OpenEnv's step alike.
func (s *Server) play(ctx context.Context, e *episode, text string) (TurnResponse, *replyError) {
	if e.live.Done() {
		return TurnResponse{}, &replyError{status: http.StatusConflict, typ: errConflict, message: fmt.Sprintf("episode %s is over (%s); read it with GET or start another", e.id, e.live.Ep.End)}
	}
	before, n := messageBytes(e.live.Ep.Messages), int64(len(text))
	if before+n > s.cfg.MaxEpisodeBytes {
		return TurnResponse{}, &replyError{status: http.StatusRequestEntityTooLarge, typ: errTooLarge, code: "episode_bytes_exceeded", param: "message", message: fmt.Sprintf(
			"episode %s holds %d bytes of messages and this one is %d: an episode holds at most %d (--max-episode-bytes); send a shorter message or start another episode", e.id, before, n, s.cfg.MaxEpisodeBytes)}
	}
	if !s.bytes.reserve(e, n) {
		return TurnResponse{}, s.serverFull()
	}
	// The environment answers the turn before the user does, as in the
	// rollout; a turn the user could not answer is not recorded, so the
	// client may send it again.
	resp, err := e.step(ctx, text)
	s.bytes.settle(e, messageBytes(e.live.Ep.Messages))
	if err != nil {
		status := http.StatusBadGateway
		if ctx.Err() != nil {
			status = 499 // the client left; nobody reads this reply
		}
		s.log.Warn("user reply failed", "id", e.id, "err", err)
		return TurnResponse{}, &replyError{status: status, typ: errServer, message: "user could not reply: " + err.Error()}
	}
	if resp.Done {
		s.log.Debug("episode done", "id", e.id, "end", resp.Info.End, "reward", resp.Reward, "turns", resp.Info.Turn)
	}
	return resp, nil
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) (*episode, bool) {
	id := r.PathValue("id")
	e, ok := s.store.get(id)
	if !ok {
		writeError(w, http.StatusNotFound, errNotFound, fmt.Sprintf("no episode %q (unknown, expired or deleted)", id))
	}
	return e, ok
}

func (s *Server) getEpisode(w http.ResponseWriter, r *http.Request) {
	e, ok := s.lookup(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, e.transcript())
}

// transcript is the episode as clients may read it.
func (e *episode) transcript() Transcript {
	e.mu.Lock()
	defer e.mu.Unlock()
	ep := &e.live.Ep
	t := Transcript{
		ID: e.id, Task: ep.Task, Split: ep.Split, User: ep.User, EpisodeSeed: Seed(ep.Seed), Index: ep.Index, Sample: ep.Sample, MaxTurns: ep.MaxTurns,
		Created: e.created, Messages: append([]dialog.Message(nil), ep.Messages...), Turns: ep.Turns, Done: e.live.Done(),
		End: ep.End, Reward: ep.Reward, Success: ep.Success, Outcome: ep.Outcome, Metrics: ep.Metrics,
	}
	for _, m := range ep.Messages {
		t.Tokens += m.Tokens
	}
	return t
}

func (s *Server) deleteEpisode(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.store.remove(id) {
		writeError(w, http.StatusNotFound, errNotFound, fmt.Sprintf("no episode %q", id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
