package serve

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/remote"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/task/docedit"
)

// A served docedit simulator reads a conversation with the environment's
// notes as the in-process learned user does (the notes where they stand,
// each command turn checked by the document it made), and a user who
// ends is satisfied by the verdict on the agent's last delivery in its
// conversation: a command turn that restores the document is right.
func TestServedSimulatorReadsDoceditNotesAndCommands(t *testing.T) {
	tk, err := task.Lookup("docedit")
	if err != nil {
		t.Fatal(err)
	}
	var eps []dialog.Episode
	h, _ := tk.User("human")
	for _, profile := range []string{"careful", "sloppy"} {
		a, _ := tk.Agent(profile)
		e, err := rollout.Run(context.Background(), tk, a, h, rollout.Config{Split: "train", Instances: 8, Seed: 5, MaxTurns: 6})
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, e...)
	}
	tok, err := chatlm.TrainTokenizer(eps, 400)
	if err != nil {
		t.Fatal(err)
	}
	m, err := chatlm.NewModel(tok, lm.Config{Context: 4096, Dim: 16, Layers: 1, Heads: 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	u := &chatlm.User{Model: m, Oracle: true, Judge: chatlm.TaskJudge(tk), Gen: chatlm.GenConfig{MaxNewTokens: 8, Temperature: 1, TopP: 1}}
	sim := NewSimulator(u, tk, 1)
	notes, rights := 0, 0
	for i := range eps {
		ep := &eps[i]
		for j, msg := range ep.Messages {
			if dialog.IsNote(msg) {
				notes++
			}
			if msg.Role != dialog.RoleAssistant {
				continue
			}
			end := j + 1
			for end < len(ep.Messages) && dialog.IsNote(ep.Messages[end]) {
				end++
			}
			history := ep.Messages[:end]
			conv, _, _, err := sim.Translate(remote.RolePlayChat(&ep.Oracle, history, false, false))
			if err != nil {
				t.Fatalf("episode %s turn %d: %v", ep.ID, j, err)
			}
			if want := chatlm.UserMessages(&ep.Oracle, history, true, u.Judge); !reflect.DeepEqual(conv, want) {
				t.Fatalf("episode %s turn %d: served context\n%+v\nwant\n%+v", ep.ID, j, conv, want)
			}
			_, right := dialog.Verdict(tk, &ep.Oracle, ep.Messages[:j+1])
			if delivered, _ := dialog.Verdict(tk, &ep.Oracle, ep.Messages[:j+1]); delivered {
				if got := sim.lastRight(&ep.Oracle, history); got != right {
					t.Errorf("episode %s turn %d: satisfied %v, the verdict on the turn in its conversation %v", ep.ID, j, got, right)
				}
				if right {
					rights++
				}
			}
		}
	}
	if notes == 0 || rights == 0 {
		t.Fatalf("%d notes, %d right deliveries: the test shows nothing", notes, rights)
	}
	// A revision that spoils the first sentence, then a command that puts
	// it back: on the draft alone the command finds no "Zzqx." and the
	// last delivery would be the spoilt revision.
	fixed := 0
	for i := 0; i < 10; i++ {
		o, _, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		sents := docedit.SplitSentences(o.Truth)
		if strings.Contains(sents[0], `"`) {
			continue
		}
		history := []dialog.Message{
			{Role: dialog.RoleUser, Content: o.Opening},
			{Role: dialog.RoleAssistant, Content: docedit.DocMarker + "\n" + docedit.JoinSentences(append([]string{"Zzqx."}, sents[1:]...))},
			{Role: dialog.RoleUser, Content: "The first sentence is off."},
			{Role: dialog.RoleAssistant, Content: `In sentence 1, change "Zzqx." to "` + sents[0] + `".`},
		}
		if sim.lastRight(o, history[:2]) || !sim.lastRight(o, history) {
			t.Errorf("instance %d: the spoilt revision satisfied %v, the command restoring it %v; want false, true", i, sim.lastRight(o, history[:2]), sim.lastRight(o, history))
		}
		fixed++
	}
	if fixed == 0 {
		t.Fatal("no instance to fix")
	}
}
