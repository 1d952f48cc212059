package remote

import (
	"context"
	"fmt"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/reply"
)

// Judge scores an outcome against the oracle with an LLM, for tasks whose
// outcomes no rule can check (free-form documents, open answers) and for
// auditing rule-based rewards.
type Judge struct {
	pool *Pool
	// FormatRetries is how many times a malformed verdict is asked for
	// again. Default DefaultFormatRetries.
	FormatRetries int
}

// NewJudge returns a judge backed by pool.
func NewJudge(pool *Pool) *Judge { return &Judge{pool: pool, FormatRetries: DefaultFormatRetries} }

// Score asks the judge for a verdict on outcome, the agent's final answer
// or document, given the conversation. Unlike the user, a judge whose
// replies stay malformed is an error: a guessed score would corrupt the
// reward. seed is sent as the request seed.
func (j *Judge) Score(ctx context.Context, o *dialog.Oracle, history []dialog.Message, outcome string, seed int64) (reply.Verdict, error) {
	msgs := judgePrompt(o, history, outcome)
	var last error
	for try := 0; try <= max(j.FormatRetries, 0); try++ {
		s := seed + int64(try)
		resp, err := j.pool.Complete(ctx, Request{Messages: msgs, Seed: &s, JSON: true, MaxTokens: 256})
		if err != nil {
			return reply.Verdict{}, fmt.Errorf("judge %s: %w", o.ID, err)
		}
		v, err := reply.ParseVerdict(resp.Text)
		if err == nil {
			return v, nil
		}
		last = err
	}
	return reply.Verdict{}, fmt.Errorf("judge %s: %w", o.ID, last)
}
