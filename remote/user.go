package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/reply"
)

// DefaultFormatRetries is how many extra completions a malformed reply gets.
const DefaultFormatRetries = 2

// User is a user played by an LLM behind an OpenAI-compatible endpoint,
// prompted with the oracle context (UserSystemPrompt). It implements
// dialog.User, dialog.BatchUser and dialog.BatchOpener.
type User struct {
	pool *Pool
	// FormatRetries is how many times a malformed reply is asked for again
	// before the turn is read as reply.Unclear. Default DefaultFormatRetries;
	// negative means none.
	FormatRetries int

	malformed, unclear, dropped atomic.Int64
}

// NewUser returns a user backed by pool.
func NewUser(pool *Pool) *User { return &User{pool: pool, FormatRetries: DefaultFormatRetries} }

// Pool is the pool the user's completions go to.
func (u *User) Pool() *Pool { return u.pool }

// Malformed counts model replies that were not in the JSON shape, and
// Unclear the turns that fell back to reply.Unclear after every retry.
func (u *User) Malformed() int64 { return u.malformed.Load() }
func (u *User) Unclear() int64   { return u.unclear.Load() }

// Dropped counts the earlier exchanges left out of requests because the
// conversation no longer fitted the model's context (see ask).
func (u *User) Dropped() int64 { return u.dropped.Load() }

// NewSession starts one episode's user. The request seeds are drawn from
// rng, so they follow the episode's seed.
func (u *User) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	return &userSession{u: u, o: o, seed: rng.Int64N(1 << 62)}
}

// ReplyBatch answers every session concurrently; the pool bounds how many
// requests are in flight.
func (u *User) ReplyBatch(ctx context.Context, sessions []dialog.UserSession, histories [][]dialog.Message) ([]string, []bool, error) {
	replies := make([]string, len(sessions))
	ends := make([]bool, len(sessions))
	err := fanOut(ctx, len(sessions), func(ctx context.Context, i int) error {
		var err error
		replies[i], ends[i], err = sessions[i].Reply(ctx, histories[i])
		return err
	})
	return replies, ends, err
}

// OpenBatch writes every session's opening concurrently
// (dialog.BatchOpener).
func (u *User) OpenBatch(ctx context.Context, sessions []dialog.UserSession) ([]string, error) {
	out := make([]string, len(sessions))
	err := fanOut(ctx, len(sessions), func(ctx context.Context, i int) error {
		var err error
		out[i], err = sessions[i].Open(ctx)
		return err
	})
	return out, err
}

type userSession struct {
	u      *User
	o      *dialog.Oracle
	seed   int64
	turn   int64
	reason dialog.EndReason
}

// Open asks the model for the opening. If its replies stay malformed the
// oracle's scripted opening is used: an episode must start somewhere.
func (s *userSession) Open(ctx context.Context) (string, error) {
	r, ok, err := s.ask(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("remote user open: %w", err)
	}
	if !ok || r.Message == "" {
		return s.o.Opening, nil
	}
	return r.Message, nil
}

// Reply answers the last agent message.
func (s *userSession) Reply(ctx context.Context, history []dialog.Message) (string, bool, error) {
	r, ok, err := s.ask(ctx, history)
	if err != nil {
		return "", false, fmt.Errorf("remote user: %w", err)
	}
	if !ok {
		s.u.unclear.Add(1)
		return reply.Unclear, false, nil
	}
	if r.End {
		s.reason = dialog.UserEnded
		if r.Satisfied {
			s.reason = dialog.Solved
		}
	}
	return r.Message, r.End, nil
}

// ResumeAt makes the session continue an episode whose first asks
// requests (the opening, when the session asked for it, and each reply)
// another session made, on another replica: each request is seeded by
// its number, so the next one is the request the first session would
// have sent.
func (s *userSession) ResumeAt(asks int) { s.turn = int64(asks) }

// EndReason reports why the session ended, for the rollout.
func (s *userSession) EndReason() dialog.EndReason { return s.reason }

// ask completes the role-play chat, retrying malformed replies. ok is
// false when every reply was malformed; err is set only for failures of
// the endpoint or the context.
//
// When the endpoint refuses the chat as longer than its context, the
// oldest exchange after the opening (an agent turn and the reply to it) is
// left out and the request sent again, as calibrl's own model users drop
// the oldest turns to fit; the system prompt, the opening and the agent's
// last turn always stay. Dropped counts what was left out.
func (s *userSession) ask(ctx context.Context, history []dialog.Message) (reply.User, bool, error) {
	msgs := RolePlayChat(s.o, history, false, false)
	retries := s.u.FormatRetries
	if retries < 0 {
		retries = 0
	}
	for try := 0; try <= retries; try++ {
		seed := s.seed + s.turn*64 + int64(try)
		resp, err := s.u.pool.Complete(ctx, Request{Messages: msgs, Seed: &seed, JSON: true})
		for n := oldestExchange(msgs); err != nil && tooLong(err) && n > 0; n = oldestExchange(msgs) {
			msgs = append(msgs[:keepHead:keepHead], msgs[keepHead+n:]...)
			s.u.dropped.Add(1)
			resp, err = s.u.pool.Complete(ctx, Request{Messages: msgs, Seed: &seed, JSON: true})
		}
		if err != nil {
			return reply.User{}, false, err
		}
		r, perr := reply.ParseUser(resp.Text)
		if perr == nil {
			s.turn++
			return r, true, nil
		}
		s.u.malformed.Add(1)
		slog.Debug("remote user: malformed reply", "model", s.u.pool.Model(), "episode", s.o.ID, "try", try, "err", perr)
	}
	s.turn++
	return reply.User{}, false, nil
}

// keepHead is the part of a role-play chat never dropped to fit a
// context: the system prompt, the opening cue and the user's opening.
const keepHead = 3

// oldestExchange is the length of the oldest exchange after a role-play
// chat's head: an agent turn, the environment's notes on it and the
// user's reply; 0 when dropping it would leave out the agent's last turn.
func oldestExchange(msgs []dialog.Message) int {
	n := 1
	for keepHead+n < len(msgs) && msgs[keepHead+n].Role == dialog.RoleSystem {
		n++
	}
	if keepHead+n >= len(msgs) || msgs[keepHead+n].Role != dialog.RoleAssistant {
		return 0
	}
	n++
	if keepHead+n >= len(msgs) {
		return 0
	}
	return n
}

// tooLong reports an endpoint's refusal of a prompt longer than its
// context: OpenAI's code context_length_exceeded, or the message vLLM and
// others send with a plain 400.
func tooLong(err error) bool {
	var apiErr *apiError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		return false
	}
	return apiErr.Code == "context_length_exceeded" || strings.Contains(strings.ToLower(apiErr.Message), "maximum context length")
}

// fanOut runs f(0..n-1) concurrently and returns the first error; the
// others are cancelled.
func fanOut(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx, i); err != nil {
				cancel(fmt.Errorf("conversation %d: %w", i, err))
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}
