package export

import (
	"context"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task/docedit"
)

// Policy data is exported as the embedded policy reads the conversation
// (chatlm.AgentMessages): the policy rows, each rollout row's prompt and
// each prompt row, system message (instructions and draft) included.
func TestExportedPolicyDataIsTheEmbeddedAgentsView(t *testing.T) {
	tk, err := docedit.New(docedit.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tk.Agent("careful")
	eps, err := rollout.Run(context.Background(), tk, a, docedit.Human{}, rollout.Config{Split: "train", Instances: 4, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	embedded := func(v *dialog.View, h []dialog.Message) []Message {
		var out []Message
		for _, m := range chatlm.AgentMessages(v, h) {
			out = append(out, Message{Role: m.Role, Content: m.Content})
		}
		return out
	}
	policies, rollouts, prompts := PolicyRows(eps, false), RolloutRows(eps, false), PromptRows(eps)
	r := 0
	for i := range eps {
		ep := &eps[i]
		if want := embedded(&ep.View, ep.Messages); !reflect.DeepEqual(policies[i].Messages, want) {
			t.Errorf("%s: policy row\n%+v\nwant\n%+v", ep.ID, policies[i].Messages, want)
		}
		if want := embedded(&ep.View, ep.Messages[:1]); !reflect.DeepEqual(prompts[i].Prompt, want) {
			t.Errorf("%s: prompt row\n%+v\nwant\n%+v", ep.ID, prompts[i].Prompt, want)
		}
		if got := policies[i].Messages[0].Content; got != docedit.AgentInstructions+"\nDraft:\n"+ep.View.Draft {
			t.Errorf("%s: system message %q, want the instructions and the draft", ep.ID, got)
		}
		for j, m := range ep.Messages {
			if m.Role != dialog.RoleAssistant {
				continue
			}
			if want := embedded(&ep.View, ep.Messages[:j]); !reflect.DeepEqual(rollouts[r].Prompt, want) {
				t.Errorf("%s turn %d: rollout prompt\n%+v\nwant\n%+v", ep.ID, rollouts[r].Turn, rollouts[r].Prompt, want)
			}
			r++
		}
	}
	if r != len(rollouts) {
		t.Fatalf("%d rollout rows, %d agent turns", len(rollouts), r)
	}
}
