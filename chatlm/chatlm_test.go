package chatlm_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/chatlm/chatlmtest"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/task/docedit"
	"github.com/calibrl/calibrl/tokenizer"
)

func TestSequencesMaskOneSide(t *testing.T) {
	eps := chatlmtest.AddEpisodes(4, 1)
	m := chatlmtest.TinyModel(t, eps)
	ep := &eps[0]
	agent, err := m.AgentSequence(ep, nil)
	if err != nil {
		t.Fatal(err)
	}
	user, err := m.UserSequence(ep, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The agent's trained tokens decode to its message and closing token.
	var got []int
	for i, w := range agent.Mask {
		if w > 0 {
			got = append(got, agent.IDs[i+1])
		}
	}
	if want := "2 + 2 = 4."; !strings.Contains(m.Tok.Decode(got), ep.Messages[1].Content[:3]) {
		t.Fatalf("agent tokens decode to %q, want the agent's message (like %q)", m.Tok.Decode(got), want)
	}
	end, _ := m.Tok.SpecialID(tokenizer.End)
	if got[len(got)-1] != end {
		t.Fatalf("agent's trained tokens end with %d, want <|end|> %d", got[len(got)-1], end)
	}
	// The user's trained tokens are both user turns and end with <|done|>.
	got = got[:0]
	for i, w := range user.Mask {
		if w > 0 {
			got = append(got, user.IDs[i+1])
		}
	}
	done, _ := m.Tok.SpecialID(tokenizer.Done)
	if got[len(got)-1] != done {
		t.Fatalf("user's trained tokens end with %d, want <|done|>", got[len(got)-1])
	}
	text := m.Tok.Decode(got)
	if !strings.Contains(text, "what is") || !strings.Contains(text, "right, thanks!") || strings.Contains(text, " = ") {
		t.Fatalf("user's trained tokens decode to %q: want both user turns and no agent text", text)
	}
	// The oracle context is in the user's sequence, not in the agent's.
	if !strings.Contains(m.Tok.Decode(user.IDs), "Answer: "+ep.Oracle.Truth) || strings.Contains(m.Tok.Decode(agent.IDs), "Answer:") {
		t.Fatal("oracle context leaked to the agent or missing for the user")
	}
	blind, _ := m.UserSequence(ep, false, nil)
	if strings.Contains(m.Tok.Decode(blind.IDs), "Answer:") {
		t.Fatal("no-oracle-context sequence carries the answer")
	}
}

// containsTruth scores an agent turn by whether it states the truth.
type containsTruth struct{}

func (containsTruth) Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	last := msgs[len(msgs)-1].Content
	if !strings.Contains(last, "=") {
		return dialog.Score{}
	}
	return dialog.Score{Outcome: last, Success: strings.Contains(last, "= "+o.Truth)}
}

// With a judge, each delivered outcome is followed by the task's verdict
// as a system turn the simulator reads but is not trained to write; the
// ablation never sees it.
func TestJudgeMarksDeliveredOutcomes(t *testing.T) {
	eps := chatlmtest.AddEpisodes(4, 1)
	m := chatlmtest.TinyModel(t, eps)
	ep := &eps[0]
	judge := chatlm.TaskJudge(containsTruth{})
	msgs := chatlm.UserMessages(&ep.Oracle, ep.Messages, true, judge)
	var checks []string
	for i, msg := range msgs {
		if i > 0 && msg.Role == string(dialog.RoleSystem) {
			if msgs[i-1].Role != string(dialog.RoleAssistant) {
				t.Fatalf("a check follows a %s turn", msgs[i-1].Role)
			}
			checks = append(checks, msg.Content)
		}
	}
	var want []string
	for _, h := range ep.Messages {
		if h.Role == dialog.RoleAssistant && strings.Contains(h.Content, "=") {
			v := chatlm.CheckWrong
			if strings.Contains(h.Content, "= "+ep.Oracle.Truth) {
				v = chatlm.CheckRight
			}
			want = append(want, v)
		}
	}
	if len(want) == 0 || strings.Join(checks, "|") != strings.Join(want, "|") {
		t.Fatalf("checks %q, want %q", checks, want)
	}
	judged, err := m.UserSequence(ep, true, judge)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := m.UserSequence(ep, true, nil)
	if judged.Trained() != plain.Trained() {
		t.Fatalf("the check changed the trained tokens: %d vs %d", judged.Trained(), plain.Trained())
	}
	var trained []int
	for i, w := range judged.Mask {
		if w > 0 {
			trained = append(trained, judged.IDs[i+1])
		}
	}
	if strings.Contains(m.Tok.Decode(trained), "Check") || !strings.Contains(m.Tok.Decode(judged.IDs), "Check: ") {
		t.Fatal("the check must be read, not trained")
	}
	blind := chatlm.UserMessages(&ep.Oracle, ep.Messages, false, judge)
	for _, msg := range blind[1:] {
		if msg.Role == string(dialog.RoleSystem) {
			t.Fatal("the no-oracle-context ablation sees a check")
		}
	}
}

func TestAgentAndUserSpeakDeterministically(t *testing.T) {
	eps := chatlmtest.AddEpisodes(4, 1)
	m := chatlmtest.TinyModel(t, eps)
	a := &chatlm.Agent{Model: m, Gen: chatlm.GenConfig{MaxNewTokens: 12, Temperature: 1, TopP: 1}}
	u := &chatlm.User{Model: m, Oracle: true, Gen: chatlm.GenConfig{MaxNewTokens: 12, Temperature: 1, TopP: 1}}
	play := func() ([]string, [][]int) {
		var texts []string
		var ids [][]int
		for i := range eps {
			s := a.NewSession(&eps[i].View, rand.New(rand.NewPCG(uint64(i), 1)))
			us := u.NewSession(&eps[i].Oracle, rand.New(rand.NewPCG(uint64(i), 2)))
			open, err := us.Open(context.Background())
			if err != nil || open == "" {
				t.Fatalf("open: %q, %v", open, err)
			}
			h := []dialog.Message{{Role: dialog.RoleUser, Content: open}}
			text, err := s.Act(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			h = append(h, dialog.Message{Role: dialog.RoleAssistant, Content: text})
			reply, _, err := us.Reply(context.Background(), h)
			if err != nil || reply == "" {
				t.Fatalf("reply %q, %v: an untrained model's reply must still be usable", reply, err)
			}
			texts = append(texts, open, text, reply)
			as := s.(*chatlm.AgentSession)
			if len(as.Turns) != 1 || len(as.Turns[0].IDs) == 0 {
				t.Fatalf("session recorded %d turns", len(as.Turns))
			}
			sampled := as.Sampled(h)
			if sampled[2] == nil {
				t.Fatalf("sampled ids not lined up with the agent message: %v", sampled)
			}
			ids = append(ids, as.Turns[0].IDs)
		}
		return texts, ids
	}
	t1, i1 := play()
	t2, i2 := play()
	if !reflect.DeepEqual(t1, t2) || !reflect.DeepEqual(i1, i2) {
		t.Fatal("same seeds gave different conversations")
	}
}

func TestSaveLoadAndMismatch(t *testing.T) {
	eps := chatlmtest.AddEpisodes(4, 1)
	m := chatlmtest.TinyModel(t, eps)
	dir := filepath.Join(t.TempDir(), "ck")
	if err := m.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	back, _, err := chatlm.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Tok.Equal(m.Tok) || !reflect.DeepEqual(back.LM.Params.Data, m.LM.Params.Data) {
		t.Fatal("checkpoint round trip changed the model")
	}
	if _, _, err := chatlm.Load(t.TempDir()); err == nil {
		t.Fatal("empty folder: want an error")
	}
}

func TestFitPromptDropsOldTurns(t *testing.T) {
	eps := chatlmtest.AddEpisodes(1, 1)
	m := chatlmtest.TinyModel(t, eps)
	long := []dialog.Message{{Role: dialog.RoleUser, Content: "my problem"}, {Role: dialog.RoleAssistant, Content: "ok"}}
	for range 40 {
		long = append(long, dialog.Message{Role: dialog.RoleUser, Content: "what is 1 plus 2?"}, dialog.Message{Role: dialog.RoleAssistant, Content: "1 + 2 = 3."})
	}
	long = append(long, dialog.Message{Role: dialog.RoleUser, Content: "last one"})
	ids, err := m.Prompt(chatlm.AgentMessages(&eps[0].View, long), "assistant", 16)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) > m.LM.Config.Context-16 {
		t.Fatalf("prompt of %d tokens does not leave 16 of %d", len(ids), m.LM.Config.Context)
	}
	text := m.Tok.Decode(ids)
	if !strings.Contains(text, "last one") || !strings.Contains(text, "Answer sums.") || !strings.Contains(text, "my problem") {
		t.Fatalf("fitted prompt lost the system turn, the opening or the newest turn: %q", text)
	}
	if strings.Count(text, "what is 1 plus 2?") >= 40 {
		t.Fatal("no old turn was dropped")
	}
}

// A docedit turn of edit commands is checked by the document the
// environment made of it from the current document, as the full revision
// to that document is: the command that restores the first sentence a
// spoilt revision lost is right, though on the draft alone it would not be.
func TestTaskJudgeChecksCommandsInTheirConversation(t *testing.T) {
	tk, err := docedit.New(docedit.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	judge := chatlm.TaskJudge(tk)
	checked := 0
	for i := 0; i < 20; i++ {
		o, v, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		sents := docedit.SplitSentences(o.Truth)
		if strings.Contains(sents[0], `"`) {
			continue
		}
		h := []dialog.Message{
			{Role: dialog.RoleUser, Content: o.Opening},
			{Role: dialog.RoleAssistant, Content: docedit.DocMarker + "\n" + docedit.JoinSentences(append([]string{"Zzqx."}, sents[1:]...))},
			{Role: dialog.RoleUser, Content: "The first sentence is off."},
		}
		cmd := dialog.Message{Role: dialog.RoleAssistant, Content: `Take out the sentence "Zzqx.". At the start, add the sentence "` + sents[0] + `".`}
		full := dialog.Message{Role: dialog.RoleAssistant, Content: docedit.DocMarker + "\n" + o.Truth}
		for _, last := range []dialog.Message{cmd, full} {
			conv := append(append([]dialog.Message(nil), h...), last)
			if note := tk.Environment().Respond(v, conv); note != "" {
				conv = append(conv, dialog.Message{Role: dialog.RoleSystem, Content: note})
			}
			if got := judge(o, conv[:len(h)+1]); got != chatlm.CheckRight {
				t.Errorf("instance %d: %q checked %q, want %q", i, last.Content, got, chatlm.CheckRight)
			}
			msgs := chatlm.UserMessages(o, conv, true, judge)
			// system, opening, revision, its check, reply, the last turn, its check[, the note]
			if len(msgs) < 7 || msgs[3].Content != chatlm.CheckWrong || msgs[6].Content != chatlm.CheckRight {
				t.Errorf("instance %d: the simulator reads %+v", i, msgs)
			}
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d instances checked", checked)
	}
}

// JoinJudges writes both notes in one, a space between, and leaves a
// turn either one alone notes as it is; a nil one adds nothing.
func TestJoinJudges(t *testing.T) {
	say := func(s string) chatlm.Judge { return func(*dialog.Oracle, []dialog.Message) string { return s } }
	if chatlm.JoinJudges(nil, nil) != nil {
		t.Error("two nil judges joined are not nil")
	}
	for _, c := range []struct {
		a, b chatlm.Judge
		want string
	}{
		{say("Check: wrong."), say("Asked about: x."), "Check: wrong. Asked about: x."},
		{say(""), say("Asked about: x."), "Asked about: x."},
		{say("Check: right."), say(""), "Check: right."},
		{say(""), say(""), ""},
		{say("Check: right."), nil, "Check: right."},
		{nil, say("Asked about: x."), "Asked about: x."},
	} {
		if got := chatlm.JoinJudges(c.a, c.b)(nil, nil); got != c.want {
			t.Errorf("joined: %q, want %q", got, c.want)
		}
	}
}

// With mathchat's user ledger the simulator's view of a conversation has,
// right after each agent turn that asked for a withheld number, the
// statement asked about; without the notes it is the view of the task's
// check alone, byte for byte, whatever is joined to the check.
func TestUserNotesInTheSimulatorsView(t *testing.T) {
	on, err := task.Lookup("mathchat:h8:ledger:userledger")
	if err != nil {
		t.Fatal(err)
	}
	off, err := task.Lookup("mathchat:h8:ledger")
	if err != nil {
		t.Fatal(err)
	}
	if chatlm.UserNotesOf(off) != nil {
		t.Fatal("mathchat:h8:ledger shows the simulator notes")
	}
	notes := chatlm.UserNotesOf(on)
	careful, _ := on.Agent("careful")
	human, _ := on.User("human")
	eps, err := rollout.Run(context.Background(), on, careful, human, rollout.Config{Split: "test", Instances: 4, Seed: 3, MaxTurns: 8})
	if err != nil {
		t.Fatal(err)
	}
	statements := map[string]bool{}
	seen := 0
	for _, ep := range eps {
		o, h := &ep.Oracle, ep.Messages
		for _, f := range o.Facts {
			if f.Hidden {
				statements["Asked about: "+f.Text] = true
			}
		}
		check := chatlm.UserMessages(o, h, true, chatlm.TaskJudge(off))
		for _, j := range []chatlm.Judge{chatlm.JoinJudges(chatlm.TaskJudge(off), chatlm.UserNotesOf(off)), chatlm.TaskJudge(on)} {
			if got := chatlm.UserMessages(o, h, true, j); !reflect.DeepEqual(got, check) {
				t.Fatalf("%s: without notes the view differs from the check's:\n%+v\nwant\n%+v", ep.ID, got, check)
			}
		}
		view := chatlm.UserMessages(o, h, true, chatlm.JoinJudges(chatlm.TaskJudge(on), notes))
		var rest []tokenizer.Message
		for i, m := range view {
			if m.Role != string(dialog.RoleSystem) || !strings.HasPrefix(m.Content, "Asked about: ") {
				rest = append(rest, m)
				continue
			}
			seen++
			if !statements[m.Content] {
				t.Errorf("%s: note %q is no withheld statement", ep.ID, m.Content)
			}
			if view[i-1].Role != string(dialog.RoleAssistant) {
				t.Errorf("%s: note %q follows a %s message", ep.ID, m.Content, view[i-1].Role)
			}
		}
		if !reflect.DeepEqual(rest, check) {
			t.Errorf("%s: the view with notes is more than the notes added:\n%+v\nwant\n%+v", ep.ID, rest, check)
		}
		if blind := chatlm.UserMessages(o, h, false, chatlm.JoinJudges(chatlm.TaskJudge(on), notes)); len(blind) != len(h)+1 {
			t.Errorf("%s: the no-oracle-context view has %d messages for %d turns: notes are the oracle's", ep.ID, len(blind), len(h))
		}
	}
	// The careful agent asks for every withheld number (about five at h8).
	if seen < 4*len(eps) {
		t.Errorf("%d notes in %d conversations, want at least %d", seen, len(eps), 4*len(eps))
	}
}
