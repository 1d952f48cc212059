package tasktest

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// countUser ends after its third reply; its sessions tell no EndReason.
type countUser struct{}

func (countUser) NewSession(*dialog.Oracle, *rand.Rand) dialog.UserSession { return &countSession{} }

type countSession struct{ n int }

func (*countSession) Open(context.Context) (string, error) { return "hi", nil }
func (s *countSession) Reply(context.Context, []dialog.Message) (string, bool, error) {
	s.n++
	return "r" + strconv.Itoa(s.n), s.n == 3, nil
}

type echoAgent struct{}

func (echoAgent) NewSession(*dialog.View, *rand.Rand) dialog.AgentSession { return echoSession{} }

type echoSession struct{}

func (echoSession) Act(_ context.Context, msgs []dialog.Message) (string, error) {
	return "a" + strconv.Itoa(len(msgs)), nil
}

type lenScore struct{}

func (lenScore) Score(_ *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	return dialog.Score{Reward: float64(len(msgs)), Success: len(msgs) == 7}
}

// Play alternates from the user's opening, stops at the user's end or the
// turn limit, and scores what was said.
func TestPlayEndsAtTheUserOrTheLimit(t *testing.T) {
	for _, c := range []struct {
		limit, msgs int
		end         dialog.EndReason
	}{{10, 7, dialog.UserEnded}, {2, 5, dialog.MaxTurns}} {
		ep := MustPlay(t, lenScore{}, &dialog.Oracle{}, &dialog.View{}, countUser{}, echoAgent{}, 1, c.limit)
		if len(ep.Messages) != c.msgs || ep.End != c.end || ep.Reward != float64(c.msgs) || ep.Messages[1].Content != "a1" || ep.Messages[2].Content != "r1" {
			t.Errorf("limit %d: %d messages, end %s, reward %v: %+v", c.limit, len(ep.Messages), ep.End, ep.Reward, ep.Messages)
		}
	}
}
