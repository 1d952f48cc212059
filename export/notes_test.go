package export

import (
	"context"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task/docedit"
)

// Exported docedit conversations keep the environment's note on each
// command turn where it stands, as a system message with the note's
// text, in every kind of row: the simulator's role-play chat, the
// agent's chat and each rollout prompt.
func TestExportKeepsTheEnvironmentsNotes(t *testing.T) {
	tk, err := docedit.New(docedit.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tk.Agent("careful")
	eps, err := rollout.Run(context.Background(), tk, a, docedit.Human{}, rollout.Config{Split: "train", Instances: 6, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	// notes lists the notes of msgs in order, each with the message before
	// it, or fails the test on a system message after the head that is
	// not a note on the turn before it (after, the agent's command turn).
	notes := func(name string, msgs []Message, head int, after string) []string {
		var out []string
		for i := head; i < len(msgs); i++ {
			if msgs[i].Role != "system" {
				continue
			}
			if msgs[i-1].Role != after || len(docedit.ParseCommands(msgs[i-1].Content)) == 0 {
				t.Fatalf("%s: system message %d follows a %s turn %q", name, i, msgs[i-1].Role, msgs[i-1].Content)
			}
			out = append(out, msgs[i-1].Content+"\n"+msgs[i].Content)
		}
		return out
	}
	sims, policies, rollouts := SimRows(eps), PolicyRows(eps, false), RolloutRows(eps, false)
	r := 0
	for i, ep := range eps {
		var want []string
		for k, m := range ep.Messages {
			if dialog.IsNote(m) {
				want = append(want, ep.Messages[k-1].Content+"\n"+m.Content)
			}
		}
		if len(want) == 0 {
			t.Fatalf("%s: no notes", ep.ID)
		}
		join := func(s []string) string { return strings.Join(s, "\n--\n") }
		if got := notes(ep.ID+" sim", sims[i].Messages, 2, "user"); join(got) != join(want) {
			t.Errorf("%s: the sim row's notes\n%s\nwant\n%s", ep.ID, join(got), join(want))
		}
		if got := notes(ep.ID+" policy", policies[i].Messages, 1, "assistant"); join(got) != join(want) {
			t.Errorf("%s: the policy row's notes\n%s\nwant\n%s", ep.ID, join(got), join(want))
		}
		for k, m := range ep.Messages {
			if m.Role != dialog.RoleAssistant {
				continue
			}
			var upTo []string
			for j := 1; j < k; j++ {
				if dialog.IsNote(ep.Messages[j]) {
					upTo = append(upTo, ep.Messages[j-1].Content+"\n"+ep.Messages[j].Content)
				}
			}
			if got := notes(ep.ID+" rollout", rollouts[r].Prompt, 1, "assistant"); join(got) != join(upTo) {
				t.Errorf("%s turn %d: the rollout prompt's notes\n%s\nwant\n%s", ep.ID, k, join(got), join(upTo))
			}
			r++
		}
	}
}
