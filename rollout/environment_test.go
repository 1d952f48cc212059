package rollout

import (
	"context"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// echoEnvTask is guessTask with an environment that notes every even
// guess.
type echoEnvTask struct{ guessTask }

type evenNote struct{}

func (evenNote) Respond(_ *dialog.View, h []dialog.Message) string {
	if last := h[len(h)-1]; last.Role == dialog.RoleAssistant && last.Content != "" && (last.Content[0]-'0')%2 == 0 {
		return "even: " + last.Content
	}
	return ""
}

func (echoEnvTask) Environment() dialog.Environment { return evenNote{} }

// The environment's note follows the agent's turn, before the user's
// reply, which reads it in its history.
func TestEnvironmentNote(t *testing.T) {
	eps, err := Run(context.Background(), echoEnvTask{}, randomAgent{}, guessUser{}, Config{Split: "test", Instances: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, ep := range eps {
		for j, m := range ep.Messages {
			if m.Role != dialog.RoleSystem {
				continue
			}
			notes++
			if prev := ep.Messages[j-1]; prev.Role != dialog.RoleAssistant || m.Content != "even: "+prev.Content || m.Tokens == 0 {
				t.Fatalf("%s: note %q after %+v", ep.ID, m.Content, prev)
			}
		}
	}
	if notes == 0 {
		t.Error("no notes")
	}
	plain, _ := Run(context.Background(), guessTask{}, randomAgent{}, guessUser{}, Config{Split: "test", Instances: 20, Seed: 1})
	for _, ep := range plain {
		for _, m := range ep.Messages {
			if m.Role == dialog.RoleSystem {
				t.Fatalf("a task without an environment got a note in %s", ep.ID)
			}
		}
	}
}

// replyNote notes every reply of the user's but the opening.
type replyNote struct{}

func (replyNote) Respond(_ *dialog.View, h []dialog.Message) string {
	if n := len(h); n > 1 && h[n-1].Role == dialog.RoleUser {
		return "after: " + h[n-1].Content
	}
	return ""
}

// An environment may note the user's replies too: the note follows the
// reply while the episode goes on, the agent reads it, an exchange
// returns it, and the reply that ends the episode gets none.
func TestEnvironmentNoteOnReplies(t *testing.T) {
	ep := logged(t, Config{Split: "test", Seed: 1, MaxTurns: 3}, 0, 0)
	l := Begin(ep, nil, guessUser{}, Rules{Env: replyNote{}})
	l.Opened("hi")
	if len(l.Ep.Messages) != 1 {
		t.Fatalf("the opening got a note: %+v", l.Ep.Messages)
	}
	x, err := l.Exchange(context.Background(), "1")
	if err != nil || x.Note != "" || x.ReplyNote != "after: "+x.Reply || x.End {
		t.Fatalf("exchange: %+v, %v", x, err)
	}
	if n := len(l.Ep.Messages); l.Ep.Messages[n-1].Content != x.ReplyNote || !dialog.IsNote(l.Ep.Messages[n-1]) {
		t.Fatalf("the note is not recorded after the reply: %+v", l.Ep.Messages)
	}
	l.Said("2")
	if note := l.Heard("no", true); note != "" || !l.Done() {
		t.Fatalf("the last reply got the note %q (done %v)", note, l.Done())
	}
}
