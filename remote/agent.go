package remote

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/calibrl/calibrl/dialog"
)

// Agent is a policy played by an LLM behind an OpenAI-compatible endpoint.
// It implements dialog.Agent and dialog.BatchAgent (a step's sessions are
// fanned out concurrently; the pool bounds requests in flight).
type Agent struct {
	pool *Pool
}

// NewAgent returns an agent backed by pool.
func NewAgent(pool *Pool) *Agent { return &Agent{pool: pool} }

// Pool is the pool the agent's completions go to.
func (a *Agent) Pool() *Pool { return a.pool }

// NewSession starts one episode's agent; request seeds follow rng.
func (a *Agent) NewSession(v *dialog.View, rng *rand.Rand) dialog.AgentSession {
	return &agentSession{a: a, v: v, seed: rng.Int64N(1 << 62)}
}

// ActBatch answers every session concurrently.
func (a *Agent) ActBatch(ctx context.Context, sessions []dialog.AgentSession, histories [][]dialog.Message) ([]string, error) {
	out := make([]string, len(sessions))
	err := fanOut(ctx, len(sessions), func(ctx context.Context, i int) error {
		var err error
		out[i], err = sessions[i].Act(ctx, histories[i])
		return err
	})
	return out, err
}

type agentSession struct {
	a    *Agent
	v    *dialog.View
	seed int64
	turn int64
}

// Act returns the model's next message.
func (s *agentSession) Act(ctx context.Context, history []dialog.Message) (string, error) {
	seed := s.seed + s.turn
	s.turn++
	resp, err := s.a.pool.Complete(ctx, Request{Messages: dialog.AgentChat(s.v, history), Seed: &seed})
	if err != nil {
		return "", fmt.Errorf("remote agent: %w", err)
	}
	return resp.Text, nil
}
