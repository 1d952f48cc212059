package chatlm

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/reply"
	"github.com/calibrl/calibrl/tokenizer"
)

// Completer serves a user-simulator checkpoint as a chat model for an
// OpenAI-compatible endpoint. The chat is role-flipped, as `calibrl export
// --kind sim` writes it: the system message is the oracle context (in the
// form OracleContext writes), the simulator's own earlier turns are the
// assistant's, the agent's are the user's. A simulator trained with the
// task's check (sft.Meta.Judged) expects a system message "Check: right."
// or "Check: wrong." after every agent turn that delivers an outcome, as
// UserMessages places them. Each completion draws from a
// stream seeded once, so a server's answers are reproducible in order.
type Completer struct {
	User *User

	mu  sync.Mutex
	rng *rand.Rand
}

// NewCompleter serves u with completions seeded by seed.
func NewCompleter(u *User, seed uint64) *Completer {
	return &Completer{User: u, rng: rand.New(rand.NewPCG(seed, 0x636f6d70))}
}

// Complete writes the simulator's next turn in the user's wire shape
// (reply.User; it never marks the end satisfied) and returns
// the prompt and completion token counts.
func (c *Completer) Complete(ctx context.Context, messages []dialog.Message) (string, int, int, error) {
	if err := ctx.Err(); err != nil {
		return "", 0, 0, err
	}
	if len(messages) == 0 {
		return "", 0, 0, errors.New("no messages")
	}
	conv := make([]tokenizer.Message, 0, len(messages)+1)
	if messages[0].Role != dialog.RoleSystem {
		conv = append(conv, tokenizer.Message{Role: string(dialog.RoleSystem), Content: "You are the user."})
	}
	for _, m := range messages {
		role := m.Role
		switch m.Role {
		case dialog.RoleUser:
			role = dialog.RoleAssistant
		case dialog.RoleAssistant:
			role = dialog.RoleUser
		}
		conv = append(conv, tokenizer.Message{Role: string(role), Content: m.Content})
	}
	c.mu.Lock()
	seed := c.rng.Uint64()
	prompt, err := c.User.Model.Prompt(conv, string(dialog.RoleUser), c.User.Gen.MaxNewTokens)
	var turns []Turn
	if err == nil {
		c.User.mu.Lock()
		turns, err = c.User.Model.Generate([][]tokenizer.Message{conv}, string(dialog.RoleUser), c.User.Gen, []*rand.Rand{rand.New(rand.NewPCG(seed, 1))}, nil)
		c.User.mu.Unlock()
	}
	c.mu.Unlock()
	if err != nil {
		return "", 0, 0, err
	}
	t := turns[0]
	r := reply.User{Message: t.Text, End: t.Done}
	if r.Message == "" && !r.End {
		r.Message = reply.Unclear
	}
	return r.Encode(), len(prompt), len(t.IDs), nil
}
