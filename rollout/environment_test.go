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
