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
	tok, err := chatlm.TrainTokenizer(context.Background(), eps, 400)
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

// A served docedit episode answers a turn of edit commands with the
// environment's note, the current document, records it as a system
// message before the user's reply, as the rollout does, and scores the
// document the commands made.
func TestServedEpisodeReturnsTheEnvironmentsNote(t *testing.T) {
	_, ts := newTestServer(t, func(_ *Config, o *Options) { o.Task = task.Lookup })
	c := ts.Client()
	var created CreateResponse
	idx := 0
	if st := call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "docedit", Split: "test", Seed: 1, Index: &idx}, &created); st != 201 {
		t.Fatalf("create: status %d", st)
	}
	tk, _ := task.Lookup("docedit")
	o, v, _ := tk.Instance("test", 0)
	// The observation's system message is the embedded policy's.
	if want := dialog.AgentChat(v, nil)[0]; created.Observation.System != want.Content || want.Role != dialog.RoleSystem || !strings.Contains(want.Content, v.Draft) {
		t.Fatalf("observation system %q, want %+v", created.Observation.System, want)
	}
	var cmds []string
	for _, e := range o.Edits {
		cmds = append(cmds, e.Detail) // the user's own words, as commands: they make the target
	}
	var resp TurnResponse
	if st := call(t, c, "POST", ts.URL+"/v1/episodes/"+created.ID+"/turns", "", TurnRequest{Message: strings.Join(cmds, "\n")}, &resp); st != 200 {
		t.Fatalf("turn: status %d", st)
	}
	if want := docedit.CurrentMarker + "\n" + docedit.Normalize(o.Truth); !strings.HasSuffix(resp.Note, want) {
		t.Fatalf("note %q, want it to end with %q", resp.Note, want)
	}
	if !resp.Done || resp.Reward != 1 || !resp.Info.Success {
		t.Fatalf("got %+v, want the target delivered and accepted", resp)
	}
	var tr Transcript
	call(t, c, "GET", ts.URL+"/v1/episodes/"+created.ID, "", nil, &tr)
	if len(tr.Messages) < 3 || tr.Messages[1].Role != dialog.RoleAssistant || tr.Messages[2].Role != dialog.RoleSystem || tr.Messages[2].Content != resp.Note {
		t.Fatalf("transcript %+v, want the note after the agent's turn", tr.Messages)
	}
	// A question gets no note.
	if st := call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "docedit", Split: "test", Seed: 1, Index: &idx}, &created); st != 201 {
		t.Fatalf("create: status %d", st)
	}
	var asked TurnResponse
	call(t, c, "POST", ts.URL+"/v1/episodes/"+created.ID+"/turns", "", TurnRequest{Message: "What should I change?"}, &asked)
	if asked.Note != "" || asked.Reply == "" {
		t.Errorf("a question got note %q and reply %q, want none and a reply", asked.Note, asked.Reply)
	}
}
