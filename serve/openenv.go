package serve

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calibrl/calibrl/dialog"
)

// OpenEnv's environment interface (meta-pytorch/OpenEnv, rfcs/002-env-spec.md
// and src/openenv/core/env_server/http_server.py at 685de41, May 2026):
// a WebSocket session at /ws (what OpenEnv's EnvClient speaks), and
// POST /reset, POST /step, GET /state, GET /schema, GET /health,
// GET /metadata. OpenEnv's own HTTP /reset and /step build a fresh
// environment per request; here they start and play stored episodes, so
// /step and /state take the episode_id that /reset returned. Every path
// starts episodes with startEpisode and plays turns with playTurn, as the
// episode API does: one lifecycle, the reward computed by the task.

//go:embed openenv_schema.json
var openEnvSchema []byte

// OpenEnvReset is a reset's data: the episode API's CreateRequest, with
// OpenEnv's seed optional (a reset without one takes the server's next
// seed in turn, reported in the observation and the state) and OpenEnv's
// own episode_id. Seeds are OpenEnvSeed: OpenEnv's ResetRequest types the
// seed a Python int, which its client writes as a JSON number of any size.
type OpenEnvReset struct {
	Task        string       `json:"task"`
	Split       string       `json:"split,omitempty"`
	Seed        *OpenEnvSeed `json:"seed,omitempty"`
	User        string       `json:"user,omitempty"`
	Index       *int         `json:"index,omitempty"`
	Sample      int          `json:"sample,omitempty"`
	EpisodeSeed *OpenEnvSeed `json:"episode_seed,omitempty"`
	MaxTurns    int          `json:"max_turns,omitempty"`
	// EpisodeID is OpenEnv's "custom episode identifier" (ResetRequest,
	// at most MaxOpenEnvEpisodeIDLen characters). It does not name the
	// stored episode (whose id carries what rebuilds it, recover.go): it
	// is echoed as the observation's and the state's client_episode_id.
	EpisodeID *string `json:"episode_id,omitempty"`
}

// MaxOpenEnvEpisodeIDLen bounds a reset's episode_id, as OpenEnv's
// ResetRequest does (max_length 255).
const MaxOpenEnvEpisodeIDLen = 255

// OpenEnvSeed is a seed as OpenEnv's clients send it: a JSON number (any
// uint64: Python's json writes a big int exactly, and `calibrl eval`
// logs episode seeds as numbers) or a decimal string. The episode API's
// Seed refuses numbers above 2^53 − 1 because its clients (verl's
// parquet reader, JavaScript) may have rounded them already; OpenEnv's
// reset is typed an int, so a number there is taken as written.
type OpenEnvSeed uint64

// UnmarshalJSON reads a string or any non-negative integer up to 2^64 − 1.
func (s *OpenEnvSeed) UnmarshalJSON(b []byte) error {
	text := strings.TrimSpace(string(b))
	if strings.HasPrefix(text, `"`) {
		var v Seed
		if err := v.UnmarshalJSON(b); err != nil {
			return err
		}
		*s = OpenEnvSeed(v)
		return nil
	}
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return fmt.Errorf("seed %s: want an integer from 0 to 2^64 - 1, as a number or a decimal string", text)
	}
	*s = OpenEnvSeed(v)
	return nil
}

// OpenEnvAction is a step's action: the agent's message. Metadata is
// OpenEnv's Action field, accepted and not read.
type OpenEnvAction struct {
	// Message is required (/schema says so): a pointer tells a step
	// without one from an empty message.
	Message  *string        `json:"message"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// OpenEnvObservation is what the agent sees after a reset or a step.
// Messages are the ones to add to the agent's chat, in order: on reset its
// system message and the user's opening (with the environment's note on
// it, if any); on a step the environment's note on the agent's message
// (system), the user's reply (user) and the note on the reply (system),
// each only when there is one. Reply, Note and ReplyNote are the same
// texts by name.
type OpenEnvObservation struct {
	EpisodeID string `json:"episode_id"`
	// ClientEpisodeID is the episode_id the reset was given, if any.
	ClientEpisodeID string             `json:"client_episode_id,omitempty"`
	Task            string             `json:"task"`
	EpisodeSeed     Seed               `json:"episode_seed"`
	Instructions    string             `json:"instructions,omitempty"`
	Draft           string             `json:"draft,omitempty"`
	Messages        []dialog.Message   `json:"messages"`
	Reply           string             `json:"reply"`
	Note            string             `json:"note,omitempty"`
	ReplyNote       string             `json:"reply_note,omitempty"`
	Turn            int                `json:"turn"`
	MaxTurns        int                `json:"max_turns"`
	End             dialog.EndReason   `json:"end,omitempty"`
	Success         bool               `json:"success"`
	Outcome         string             `json:"outcome,omitempty"`
	Metrics         map[string]float64 `json:"metrics,omitempty"`
}

// OpenEnvResult is OpenEnv's StepResult on the wire: the reward is null on
// reset, 0 on a turn that does not end the episode, and the task's score
// of the conversation on the one that does.
type OpenEnvResult struct {
	Observation OpenEnvObservation `json:"observation"`
	Reward      *float64           `json:"reward"`
	Done        bool               `json:"done"`
}

// OpenEnvState is OpenEnv's State (episode_id, step_count) with the
// episode's transcript.
type OpenEnvState struct {
	EpisodeID       string `json:"episode_id"`
	ClientEpisodeID string `json:"client_episode_id,omitempty"`
	StepCount       int    `json:"step_count"`
	Transcript
}

// openEnv holds what the OpenEnv surface keeps besides the episodes.
type openEnv struct {
	sessions atomic.Int64  // WebSocket sessions open
	seeds    atomic.Uint64 // seeds of resets that name none, in turn

	live     sync.WaitGroup // session handlers running
	stop     chan struct{}  // closed when the server shuts down
	stopOnce sync.Once
}

func (o *openEnv) shutdown() { o.stopOnce.Do(func() { close(o.stop) }) }

// wait waits for the sessions to end, within ctx.
func (o *openEnv) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { o.live.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// openEnvRoutes registers OpenEnv's routes. /health, /schema and
// /metadata are open, like /healthz; the rest take the bearer token.
func (s *Server) openEnvRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ws", s.auth(s.openEnvSession))
	mux.HandleFunc("POST /reset", s.auth(s.openEnvHTTPReset))
	mux.HandleFunc("POST /step", s.auth(s.openEnvHTTPStep))
	mux.HandleFunc("GET /state", s.auth(s.openEnvHTTPState))
	mux.HandleFunc("GET /schema", s.openEnvSchema)
	mux.HandleFunc("GET /health", s.openEnvHealth)
	mux.HandleFunc("GET /metadata", s.openEnvMetadata)
}

// openEnvReset starts an episode from a reset's data.
func (s *Server) openEnvReset(ctx context.Context, raw []byte) (*episode, OpenEnvResult, *replyError) {
	var req OpenEnvReset
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := strictJSON(raw, &req); err != nil {
			return nil, OpenEnvResult{}, &replyError{status: http.StatusBadRequest, typ: errInvalid, message: "reset: " + err.Error() + " (fields: task, split, seed, user, index, sample, episode_seed, max_turns, episode_id)"}
		}
	}
	if req.EpisodeID != nil && len(*req.EpisodeID) > MaxOpenEnvEpisodeIDLen {
		return nil, OpenEnvResult{}, &replyError{status: http.StatusUnprocessableEntity, typ: errInvalid, param: "episode_id", message: fmt.Sprintf("reset: episode_id is %d characters: OpenEnv allows at most %d", len(*req.EpisodeID), MaxOpenEnvEpisodeIDLen)}
	}
	if req.Task == "" {
		req.Task = s.cfg.OpenEnvTask
	}
	seed := Seed(s.openenv.seeds.Add(1) - 1)
	if req.Seed != nil {
		seed = Seed(*req.Seed)
	}
	var episodeSeed *Seed
	if req.EpisodeSeed != nil {
		v := Seed(*req.EpisodeSeed)
		episodeSeed = &v
	}
	e, f := s.create(ctx, CreateRequest{
		Task: req.Task, Split: req.Split, Seed: seed, User: req.User, Index: req.Index,
		Sample: req.Sample, EpisodeSeed: episodeSeed, MaxTurns: req.MaxTurns,
	})
	if f != nil {
		return nil, OpenEnvResult{}, f
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ep := &e.live.Ep
	if req.EpisodeID != nil {
		e.clientID = *req.EpisodeID
	}
	obs := OpenEnvObservation{
		EpisodeID: e.id, ClientEpisodeID: e.clientID, Task: ep.Task, EpisodeSeed: Seed(ep.Seed), Instructions: ep.View.Instructions, Draft: ep.View.Draft,
		Messages: append([]dialog.Message{{Role: dialog.RoleSystem, Content: ep.View.System()}}, ep.Messages...),
		MaxTurns: ep.MaxTurns,
	}
	for _, m := range ep.Messages {
		if m.Role == dialog.RoleUser {
			obs.Reply = m.Content
		}
	}
	return e, OpenEnvResult{Observation: obs}, nil
}

// openEnvStep plays one action in episode e.
func (s *Server) openEnvStep(ctx context.Context, e *episode, raw []byte) (OpenEnvResult, *replyError) {
	var act OpenEnvAction
	if err := strictJSON(raw, &act); err != nil {
		return OpenEnvResult{}, &replyError{status: http.StatusUnprocessableEntity, typ: errInvalid, param: "action", message: "action: " + err.Error() + ` (want {"message": TEXT})`}
	}
	if act.Message == nil {
		return OpenEnvResult{}, &replyError{status: http.StatusUnprocessableEntity, typ: errInvalid, param: "message", message: `action: the required field "message" is missing (want {"message": TEXT}; /schema lists it as required)`}
	}
	e.mu.Lock()
	before := len(e.live.Ep.Messages)
	resp, f := s.play(ctx, e, *act.Message)
	var added []dialog.Message
	for _, m := range e.live.Ep.Messages[min(before, len(e.live.Ep.Messages)):] {
		if m.Role != dialog.RoleAssistant {
			added = append(added, m)
		}
	}
	task, seed, clientID := e.live.Ep.Task, e.live.Ep.Seed, e.clientID
	e.mu.Unlock()
	if f != nil {
		return OpenEnvResult{}, f
	}
	reward := resp.Reward
	return OpenEnvResult{Reward: &reward, Done: resp.Done, Observation: OpenEnvObservation{
		EpisodeID: e.id, ClientEpisodeID: clientID, Task: task, EpisodeSeed: Seed(seed), Messages: added,
		Reply: resp.Reply, Note: resp.Note, ReplyNote: resp.ReplyNote,
		Turn: resp.Info.Turn, MaxTurns: resp.Info.MaxTurns, End: resp.Info.End,
		Success: resp.Info.Success, Outcome: resp.Info.Outcome, Metrics: resp.Info.Metrics,
	}}, nil
}

func openEnvState(e *episode) OpenEnvState {
	t := e.transcript()
	e.mu.Lock()
	client := e.clientID
	e.mu.Unlock()
	return OpenEnvState{EpisodeID: t.ID, ClientEpisodeID: client, StepCount: t.Turns, Transcript: t}
}

// strictJSON reads one JSON object into v, refusing unknown fields.
func strictJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("more than one JSON value")
	}
	return nil
}

// readBody reads a request body bounded by the server's limit; an empty
// body is allowed (OpenEnv's reset takes none).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if !jsonContent(r) {
		writeError(w, http.StatusUnsupportedMediaType, errInvalid, fmt.Sprintf("Content-Type %q: send the body as application/json", r.Header.Get("Content-Type")))
		return nil, false
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, errTooLarge, fmt.Sprintf("request body larger than %d bytes", mbe.Limit))
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, errInvalid, "read the body: "+err.Error())
		return nil, false
	}
	return b, true
}

// POST /reset: {"task", "seed", ...} (every field optional) -> the result.
func (s *Server) openEnvHTTPReset(w http.ResponseWriter, r *http.Request) {
	raw, ok := s.readBody(w, r)
	if !ok {
		return
	}
	_, res, f := s.openEnvReset(r.Context(), raw)
	if f != nil {
		f.write(w)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// openEnvStepRequest is OpenEnv's StepRequest, with the episode it plays.
type openEnvStepRequest struct {
	Action    json.RawMessage `json:"action"`
	EpisodeID string          `json:"episode_id"`
	TimeoutS  *float64        `json:"timeout_s,omitempty"`
	RequestID string          `json:"request_id,omitempty"`
}

// POST /step: {"action": {"message"}, "episode_id"} -> the result.
func (s *Server) openEnvHTTPStep(w http.ResponseWriter, r *http.Request) {
	raw, ok := s.readBody(w, r)
	if !ok {
		return
	}
	var req openEnvStepRequest
	if err := strictJSON(raw, &req); err != nil {
		writeError(w, http.StatusBadRequest, errInvalid, "step: "+err.Error()+` (want {"action": {"message": TEXT}, "episode_id": ID})`)
		return
	}
	if req.EpisodeID == "" {
		writeErrorCode(w, http.StatusBadRequest, errInvalid, "", "episode_id", "step: no episode_id: over HTTP each step names the episode /reset started (its observation's episode_id); OpenEnv's EnvClient keeps the episode in its WebSocket session (/ws) instead")
		return
	}
	if len(req.Action) == 0 {
		writeErrorCode(w, http.StatusBadRequest, errInvalid, "", "action", `step: no action: want {"action": {"message": TEXT}}`)
		return
	}
	ctx := r.Context()
	if req.TimeoutS != nil {
		if !(*req.TimeoutS > 0) {
			writeErrorCode(w, http.StatusBadRequest, errInvalid, "", "timeout_s", "timeout_s must be positive")
			return
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(*req.TimeoutS*float64(time.Second)))
		defer cancel()
	}
	e, ok := s.store.get(req.EpisodeID)
	if !ok {
		writeError(w, http.StatusNotFound, errNotFound, fmt.Sprintf("no episode %q (unknown, expired or deleted)", req.EpisodeID))
		return
	}
	res, f := s.openEnvStep(ctx, e, req.Action)
	if f != nil {
		f.write(w)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// GET /state?episode_id=ID -> the episode's state.
func (s *Server) openEnvHTTPState(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("episode_id")
	if id == "" {
		writeErrorCode(w, http.StatusBadRequest, errInvalid, "", "episode_id", "state: want ?episode_id=ID (the observation's episode_id); OpenEnv's EnvClient asks its WebSocket session (/ws) instead")
		return
	}
	e, ok := s.store.get(id)
	if !ok {
		writeError(w, http.StatusNotFound, errNotFound, fmt.Sprintf("no episode %q (unknown, expired or deleted)", id))
		return
	}
	writeJSON(w, http.StatusOK, openEnvState(e))
}

// GET /schema: the action's, observation's and state's JSON schemas.
func (s *Server) openEnvSchema(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openEnvSchema)
}

// GET /health: OpenEnv's HealthResponse.
func (s *Server) openEnvHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "healthy"})
}

// GET /metadata: OpenEnv's EnvironmentMetadata.
func (s *Server) openEnvMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"name":        "calibrl",
		"description": "calibrl's multi-turn dialogue tasks with a user inside the environment (the human proxy, a calibrated simulator or a remote LLM); the reward is the task's score of the conversation, on the step that ends it",
		"version":     "1",
	})
}
