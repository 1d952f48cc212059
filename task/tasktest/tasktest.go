// Package tasktest plays a task's episodes for the task's own tests: the
// user opens, then agent and user alternate, with the task's own users
// and agents and no rollout around them, so a task's tests see its
// sessions' messages as they are sent. One definition for every task's
// tests; rollout plays the real thing (environment notes, budgets).
package tasktest

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// Scorer is what Play needs of a task: its score of a conversation.
type Scorer interface {
	Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score
}

// Play runs one conversation: the user opens, then agent and user
// alternate until the user ends or maxTurns agent messages have been
// sent. The user's session draws from PCG(seed, 1), the agent's from
// PCG(seed, 2). The episode's End is the user session's EndReason when it
// tells one, else dialog.UserEnded, or dialog.MaxTurns at the limit.
func Play(s Scorer, o *dialog.Oracle, v *dialog.View, u dialog.User, a dialog.Agent, seed uint64, maxTurns int) (dialog.Episode, error) {
	ctx := context.Background()
	us := u.NewSession(o, rand.New(rand.NewPCG(seed, 1)))
	as := a.NewSession(v, rand.New(rand.NewPCG(seed, 2)))
	open, err := us.Open(ctx)
	if err != nil {
		return dialog.Episode{}, err
	}
	msgs := []dialog.Message{{Role: dialog.RoleUser, Content: open}}
	end := dialog.MaxTurns
	for turn := 0; turn < maxTurns; turn++ {
		act, err := as.Act(ctx, msgs)
		if err != nil {
			return dialog.Episode{}, err
		}
		msgs = append(msgs, dialog.Message{Role: dialog.RoleAssistant, Content: act})
		reply, done, err := us.Reply(ctx, msgs)
		if err != nil {
			return dialog.Episode{}, err
		}
		if reply != "" {
			msgs = append(msgs, dialog.Message{Role: dialog.RoleUser, Content: reply})
		}
		if done {
			end = dialog.UserEnded
			if r, ok := us.(interface{ EndReason() dialog.EndReason }); ok {
				end = r.EndReason()
			}
			break
		}
	}
	sc := s.Score(o, msgs)
	return dialog.Episode{Oracle: *o, Messages: msgs, Outcome: sc.Outcome, Reward: sc.Reward, Success: sc.Success, End: end}, nil
}

// MustPlay is Play failing t on an error.
func MustPlay(t testing.TB, s Scorer, o *dialog.Oracle, v *dialog.View, u dialog.User, a dialog.Agent, seed uint64, maxTurns int) dialog.Episode {
	t.Helper()
	ep, err := Play(s, o, v, u, a, seed, maxTurns)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}
