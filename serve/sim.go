package serve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/remote"
	"github.com/calibrl/calibrl/reply"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/tokenizer"
)

// Simulator serves a calibrated user simulator (a train-sim checkpoint)
// as a chat model, in the one wire format every LLM user in calibrl
// speaks: the chat remote.RolePlayChat writes and `calibrl export --kind
// sim` exports (system: remote.UserSystemPrompt; then the opening cue; the
// agent's turns as "user"; the user's own turns as "assistant" replies in
// the JSON shape reply.User). It answers in that JSON shape too, so a
// `remote:MODEL` user pointed at this server plays the simulator as
// `learned:DIR` plays it in process.
//
// The model was trained on a shorter context of its own (chatlm's
// OracleContext and, when trained with the task's check, a "Check:"
// system turn after each delivered outcome). The translation happens here:
// the oracle is read back from the system prompt, and the checks are
// computed from the task's own scorer, never asked of the client.
type Simulator struct {
	user   *chatlm.User
	scorer dialog.Scorer

	mu  sync.Mutex // guards rng and the model, which is not safe for concurrent use
	rng *rand.Rand
}

// NewSimulator serves u, whose model it then owns (nothing else may run
// it concurrently); scorer is the task the simulator was trained on
// (its checks and the "satisfied" flag come from it). Requests without a
// seed draw from a stream seeded by seed, so a server's answers are
// reproducible in order.
func NewSimulator(u *chatlm.User, scorer dialog.Scorer, seed uint64) *Simulator {
	return &Simulator{user: u, scorer: scorer, rng: rand.New(rand.NewPCG(seed, 0x636f6d70))}
}

// Context is the simulator's context length in tokens.
func (s *Simulator) Context() int { return s.user.Model.LM.Config.Context }

// Translate turns a wire-format chat into the model's own conversation
// and the dialogue it holds. Exposed for tests: the served prompt must be
// token for token what the in-process learned user renders.
func (s *Simulator) Translate(msgs []dialog.Message) ([]tokenizer.Message, *dialog.Oracle, []dialog.Message, error) {
	o, history, err := remote.ReadRolePlayChat(msgs)
	if err != nil {
		return nil, nil, nil, &InvalidRequest{Param: "messages", Message: err.Error()}
	}
	return chatlm.UserMessages(o, history, s.user.Oracle, s.user.Judge), o, history, nil
}

// Complete writes the simulated user's next turn.
func (s *Simulator) Complete(ctx context.Context, req ChatRequest) (ChatReply, error) {
	if err := ctx.Err(); err != nil {
		return ChatReply{}, err
	}
	conv, o, history, err := s.Translate(req.Messages)
	if err != nil {
		return ChatReply{}, err
	}
	gc := s.user.Gen
	if req.MaxTokens > 0 {
		// max_tokens bounds the simulator's own tokens; the turn length it
		// was configured with stays the bound below it.
		gc.MaxNewTokens = min(gc.MaxNewTokens, req.MaxTokens)
	}
	if req.Temperature != nil {
		gc.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		gc.TopP = *req.TopP
	}
	m := s.user.Model
	// The prompt is the one the in-process learned user samples from: the
	// same chatlm.Model.Prompt drops the oldest turns after the system turn
	// and the opening when the conversation outgrows the context, so a
	// served conversation plays on where the in-process one does. Only a
	// bound that leaves no room for any prompt is refused.
	if room := s.Context() - gc.MaxNewTokens; room < chatlm.MinPrompt {
		return ChatReply{}, &InvalidRequest{Param: "max_tokens", Code: "context_length_exceeded", Message: fmt.Sprintf(
			"this model's maximum context length is %d tokens and the reply may take %d (max_tokens, or the simulator's turn bound), which leaves %d for the conversation (at least %d): lower max_tokens",
			s.Context(), gc.MaxNewTokens, room, chatlm.MinPrompt)}
	}
	ids, err := m.Prompt(conv, string(dialog.RoleUser), gc.MaxNewTokens)
	if err != nil {
		return ChatReply{}, fmt.Errorf("render the simulator's prompt: %w", err)
	}
	// The turn is written by a session of the same simulator with this
	// request's sampling, so it is what the in-process learned user writes
	// for this context (its fallbacks included: the task's opening for an
	// unusable opening, reply.Unclear for an unusable reply).
	if req.Stream != nil {
		gc.Observe = turnStreamer(m.Tok, req.Stream)
	}
	gen := &chatlm.User{Model: m, Oracle: s.user.Oracle, Judge: s.user.Judge, Gen: gc}
	s.mu.Lock()
	seed := s.rng.Uint64()
	if req.Seed != nil {
		seed = uint64(*req.Seed)
	}
	// The seed is a user session's as the rollout seeds it: a client that
	// sends an episode's seed gets that episode's user's draws.
	sess := gen.NewSession(o, rollout.UserRand(seed))
	var r reply.User
	if len(history) == 0 {
		r.Message, err = sess.Open(ctx)
	} else {
		r.Message, r.End, err = sess.Reply(ctx, history)
	}
	s.mu.Unlock()
	if err != nil {
		return ChatReply{}, err
	}
	if r.End {
		r.Satisfied = s.lastRight(o, history)
	}
	// Usage counts the turn's text in the model's tokens and its closing
	// token (re-encoded, so within a token or two of what was sampled); a
	// turn that reached the bound was cut by it and used exactly the bound.
	n := len(m.Tok.Encode(r.Message)) + 1
	finish := "stop"
	if n >= gc.MaxNewTokens {
		n, finish = gc.MaxNewTokens, "length"
	}
	return ChatReply{Text: r.Encode(), Finish: finish, Usage: Usage{PromptTokens: len(ids), CompletionTokens: n}}, nil
}

// lastRight reports whether the last outcome the agent delivered is right
// by the task's verdict on that turn in its conversation (dialog.Verdict):
// a user who ends then ends satisfied.
func (s *Simulator) lastRight(o *dialog.Oracle, history []dialog.Message) bool {
	for i := len(history) - 1; i >= 0; i-- {
		if delivered, right := dialog.Verdict(s.scorer, o, history[:i+1]); delivered {
			return right
		}
	}
	return false
}
