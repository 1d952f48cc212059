package docedit

import (
	"context"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

// splitFix is a conversation whose last turn fixes the document only
// with what the turn before it made: a full revision with the target's
// first sentence spoilt ("Zzqx."), the user's reply, then commands that
// take "Zzqx." out and, when fix is set, add the first sentence back.
// Applied to the draft alone the commands deliver nothing (the draft has
// no "Zzqx."). full is the same document as a full revision. ok is false
// for a target whose first sentence holds a quote.
func splitFix(o *dialog.Oracle, fix bool) (ctx []dialog.Message, cmd, full dialog.Message, ok bool) {
	sents := SplitSentences(o.Truth)
	if strings.Contains(sents[0], `"`) {
		return nil, cmd, full, false
	}
	spoilt := JoinSentences(append([]string{"Zzqx."}, sents[1:]...))
	ctx = []dialog.Message{
		{Role: dialog.RoleUser, Content: o.Opening},
		{Role: dialog.RoleAssistant, Content: DocMarker + "\n" + spoilt},
		{Role: dialog.RoleUser, Content: "The first sentence is off."},
	}
	cmds, doc := `Take out the sentence "Zzqx.".`, JoinSentences(sents[1:])
	if fix {
		cmds += "\n" + `At the start, add the sentence "` + sents[0] + `".`
		doc = o.Truth
	}
	return ctx, dialog.Message{Role: dialog.RoleAssistant, Content: cmds}, dialog.Message{Role: dialog.RoleAssistant, Content: DocMarker + "\n" + doc}, true
}

// A command turn is judged on the document the environment makes of it
// from the current document, so a command that fixes the document scores
// as the full revision to the same document does, right or wrong, and the
// commands that take "Zzqx." out, judged against the draft alone (the
// old single-turn judgement), deliver nothing.
func TestScoreTurnJudgesCommandsInTheirConversation(t *testing.T) {
	tk := newTestTask(t)
	tested := 0
	for i := 0; i < 30; i++ {
		o, _, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name  string
			right bool
		}{{"fixes", true}, {"drops the first sentence", false}} {
			ctx, cmd, full, ok := splitFix(o, tc.right)
			if !ok || Normalize(strings.TrimPrefix(full.Content, DocMarker+"\n")) == Normalize(o.Draft) {
				continue // the draft itself lacks only the first sentence: no delivery either way
			}
			tested++
			withCmd, withFull := append(append([]dialog.Message(nil), ctx...), cmd), append(append([]dialog.Message(nil), ctx...), full)
			d1, r1 := dialog.Verdict(tk, o, withCmd)
			d2, r2 := dialog.Verdict(tk, o, withFull)
			if !d1 || !d2 || r1 != tc.right || r2 != tc.right {
				t.Errorf("instance %d, %s: commands judged (delivered %v, right %v), the full revision (%v, %v), want (true, %v)", i, tc.name, d1, r1, d2, r2, tc.right)
			}
			s1, s2 := tk.Score(o, withCmd), tk.Score(o, withFull)
			if s1.Outcome != s2.Outcome || s1.Reward != s2.Reward || s1.Success != s2.Success {
				t.Errorf("instance %d, %s: commands scored %+v, the full revision %+v", i, tc.name, s1, s2)
			}
			if d, _ := dialog.Verdict(tk, o, []dialog.Message{cmd}); !tc.right && d {
				t.Errorf("instance %d, %s: the commands alone, on the draft, delivered", i, tc.name)
			}
		}
	}
	if tested < 20 {
		t.Fatalf("only %d cases", tested)
	}
	// A question delivers nothing, a user turn is not judged.
	o, _, _ := tk.Instance("test", 0)
	h := []dialog.Message{{Role: dialog.RoleUser, Content: o.Opening}, {Role: dialog.RoleAssistant, Content: "What should I change?"}}
	if d, _ := dialog.Verdict(tk, o, h); d {
		t.Error("a question delivered")
	}
	if d, _ := dialog.Verdict(tk, o, h[:1]); d {
		t.Error("a user turn delivered")
	}
}

// A turn that hands the draft back, shown in full or left as it was by a
// command that changes nothing, delivers nothing: ScoreTurn says so
// itself, so dialog.Verdict need not read the draft.
func TestHandingTheDraftBackDeliversNothing(t *testing.T) {
	tk := newTestTask(t)
	for i := range 10 {
		o, _, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		words := strings.Fields(o.Draft)
		for _, turn := range []string{DocMarker + "\n" + o.Draft, `Change "` + words[0] + `" to "` + words[0] + `".`} {
			msgs := []dialog.Message{{Role: dialog.RoleUser, Content: o.Opening}, {Role: dialog.RoleAssistant, Content: turn}}
			if d, _ := tk.ScoreTurn(o, msgs); d {
				t.Errorf("instance %d: %q delivered the draft", i, turn)
			}
			if d, _ := dialog.Verdict(tk, o, msgs); d {
				t.Errorf("instance %d: %q: Verdict delivered the draft", i, turn)
			}
		}
	}
}

// In the scripted agents' logged episodes every command turn gets the
// verdict of the full revision to the document it made, and some of
// them, judged against the draft alone, would get another.
func TestLoggedCommandTurnsJudgedAsTheirDocument(t *testing.T) {
	tk := newTestTask(t)
	var eps []dialog.Episode
	for _, profile := range tk.Profiles() {
		a, _ := tk.Agent(profile)
		e, err := rollout.Run(context.Background(), tk, a, Human{}, rollout.Config{Split: "test", Instances: 20, Seed: 3, MaxTurns: 8})
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, e...)
	}
	commands, differ := 0, 0
	for _, ep := range eps {
		for j, m := range ep.Messages {
			if m.Role != dialog.RoleAssistant || len(ParseCommands(m.Content)) == 0 {
				continue
			}
			commands++
			doc := FinalDocument(ep.Oracle.Draft, ep.Messages[:j+1])
			full := append(append([]dialog.Message(nil), ep.Messages[:j]...), dialog.Message{Role: dialog.RoleAssistant, Content: DocMarker + "\n" + doc})
			d1, r1 := dialog.Verdict(tk, &ep.Oracle, ep.Messages[:j+1])
			d2, r2 := dialog.Verdict(tk, &ep.Oracle, full)
			if d1 != d2 || r1 != r2 {
				t.Errorf("%s turn %d: commands judged (%v, %v), the full revision (%v, %v)", ep.ID, j, d1, r1, d2, r2)
			}
			if d, r := dialog.Verdict(tk, &ep.Oracle, ep.Messages[j:j+1]); d != d1 || r != r1 {
				differ++
			}
		}
	}
	if commands == 0 || differ == 0 {
		t.Fatalf("%d command turns, %d judged otherwise alone: the test shows nothing", commands, differ)
	}
}
