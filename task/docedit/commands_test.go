package docedit

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

const cmdDoc = "Anna will call Ben on Monday. The room is on the second floor. Bring your badge. Lunch is at noon."

func TestParseCommands(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []Command
	}{
		{"change", `In sentence 2, change "second" to "third".`, []Command{{Kind: CmdReplace, N: 2, From: "second", To: "third"}}},
		{"replace with", `Sentence 1: replace "Monday" with "Friday".`, []Command{{Kind: CmdReplace, N: 1, From: "Monday", To: "Friday"}}},
		{"no sentence", `replace "Monday" with "Friday"`, []Command{{Kind: CmdReplace, From: "Monday", To: "Friday"}}},
		{"should say", `In sentence 1, it should say "Friday", not "Monday".`, []Command{{Kind: CmdReplace, N: 1, From: "Monday", To: "Friday"}}},
		{"to nothing", `Change "on Monday" to "".`, []Command{{Kind: CmdReplace, From: "on Monday", To: ""}}},
		{"take out quoted", `Please take out the sentence "Bring your badge."`, []Command{{Kind: CmdDeleteQuoted, From: "Bring your badge."}}},
		{"delete number", `Delete sentence 3.`, []Command{{Kind: CmdDeleteNumber, N: 3}}},
		{"insert after", `After sentence 2, add the sentence "Take the lift."`, []Command{{Kind: CmdInsert, N: 2, To: "Take the lift."}}},
		{"insert at start", `At the start, add a new sentence "Hello all."`, []Command{{Kind: CmdInsert, To: "Hello all."}}},
		{"insert in halves", "After sentence 1, add a new sentence that starts \"Take the\".\nThe new sentence goes on \"lift up.\".",
			[]Command{{Kind: CmdInsert, N: 1, To: "Take the"}, {Kind: CmdContinue, To: "lift up."}}},
		{"swap", `swap Sentences 3 and 1.`, []Command{{Kind: CmdSwap, N: 3, M: 1}}},
		{"several in order", "Swap sentences 1 and 2.\nIn sentence 4, change \"noon\" to \"one\".\nDelete sentence 3.",
			[]Command{{Kind: CmdSwap, N: 1, M: 2}, {Kind: CmdReplace, N: 4, From: "noon", To: "one"}, {Kind: CmdDeleteNumber, N: 3}}},
		{"none in a question", "What should I change? Please tell me the exact words.", nil},
		{"unquoted is no command", "Change Monday to Friday.", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseCommands(tc.text)
			for i := range got {
				got[i].Start, got[i].End = 0, 0
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Every command's String parses back to itself.
func TestCommandStringRoundTrip(t *testing.T) {
	for _, c := range []Command{
		{Kind: CmdReplace, N: 2, From: "a b", To: "c"}, {Kind: CmdReplace, From: "a", To: ""},
		{Kind: CmdDeleteQuoted, From: "A b."}, {Kind: CmdDeleteNumber, N: 4}, {Kind: CmdInsert, N: 1, To: "New one."},
		{Kind: CmdInsert, To: "First."}, {Kind: CmdSwap, N: 1, M: 3}, {Kind: CmdContinue, To: "and more."},
	} {
		got := ParseCommands(c.String())
		if len(got) != 1 {
			t.Fatalf("%q parsed to %+v", c, got)
		}
		got[0].Start, got[0].End = 0, 0
		if got[0] != c {
			t.Errorf("%q parsed to %+v, want %+v", c, got[0], c)
		}
	}
}

func TestApplyTurn(t *testing.T) {
	for _, tc := range []struct {
		name, msg, want string
		applied         int
		failures        []string
	}{
		{"replace", `In sentence 2, change "second" to "third".`, "Anna will call Ben on Monday. The room is on the third floor. Bring your badge. Lunch is at noon.", 1, nil},
		{"replace in the named sentence first", `In sentence 2, change "on" to "at".`, "Anna will call Ben on Monday. The room is at the second floor. Bring your badge. Lunch is at noon.", 1, nil},
		{"replace anywhere else", `In sentence 3, change "on" to "at".`, "Anna will call Ben at Monday. The room is on the second floor. Bring your badge. Lunch is at noon.", 1, nil},
		{"delete quoted", `Take out the sentence "Bring your badge."`, "Anna will call Ben on Monday. The room is on the second floor. Lunch is at noon.", 1, nil},
		{"delete quoted without its stop", `Take out the sentence "Bring your badge"`, "Anna will call Ben on Monday. The room is on the second floor. Lunch is at noon.", 1, nil},
		{"delete number", `Delete sentence 1.`, "The room is on the second floor. Bring your badge. Lunch is at noon.", 1, nil},
		{"insert after", `After sentence 2, add the sentence "Take the lift."`, "Anna will call Ben on Monday. The room is on the second floor. Take the lift. Bring your badge. Lunch is at noon.", 1, nil},
		{"insert at start", `At the start, add the sentence "Hello all."`, "Hello all. Anna will call Ben on Monday. The room is on the second floor. Bring your badge. Lunch is at noon.", 1, nil},
		{"insert in halves", "After sentence 4, add a new sentence that starts \"See\".\nThe new sentence goes on \"you there.\".", cmdDoc + " See you there.", 2, nil},
		{"swap", `Swap sentences 1 and 4.`, "Lunch is at noon. The room is on the second floor. Bring your badge. Anna will call Ben on Monday.", 1, nil},
		// Numbers count in the document the turn started from, however
		// the turn's own commands moved its sentences.
		{"several, numbered in the turn's starting document", "Delete sentence 1.\nSwap sentences 3 and 4.\nAfter sentence 2, add the sentence \"Take the lift.\"",
			"The room is on the second floor. Take the lift. Lunch is at noon. Bring your badge.", 3, nil},
		{"misquoted phrase does nothing and says so", `In sentence 2, change "secnod" to "third".`, cmdDoc, 0,
			[]string{`Not done: "secnod" is not in the document.`}},
		{"misquoted sentence", `Take out the sentence "Bring yuor badge."`, cmdDoc, 0,
			[]string{`Not done: the sentence "Bring yuor badge." is not in the document.`}},
		{"no such sentence", "Delete sentence 9.\nSwap sentences 2 and 2.\nThe new sentence goes on \"x\".", cmdDoc, 0,
			[]string{"Not done: there is no sentence 9.", "Not done: sentences 2 and 2 are the same.", "Not done: no new sentence was added to go on."}},
		{"one misquoted among several", "In sentence 1, change \"Monday\" to \"Friday\".\nIn sentence 4, change \"nono\" to \"one\".\nDelete sentence 3.",
			"Anna will call Ben on Friday. The room is on the second floor. Lunch is at noon.", 2, []string{`Not done: "nono" is not in the document.`}},
		{"full revision", "Revised document:\nA new text. Second one.", "A new text. Second one.", 0, nil},
		{"commands after a full revision apply to it", "Revised document:\nA new text. Second one.\n\nSwap sentences 1 and 2.\nChange \"new\" to \"fresh\".",
			"Second one. A fresh text.", 2, nil},
		{"commands before a full revision are overwritten", "Delete sentence 1.\nRevised document:\nA new text.", "A new text.", 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ApplyTurn(cmdDoc, tc.msg)
			if r.Doc != tc.want || r.Applied != tc.applied || !slices.Equal(r.Failures, tc.failures) || !r.Delivered {
				t.Errorf("got %q (applied %d, failures %q, delivered %v), want %q (applied %d, failures %q)", r.Doc, r.Applied, r.Failures, r.Delivered, tc.want, tc.applied, tc.failures)
			}
		})
	}
	if r := ApplyTurn(cmdDoc, "What should I change?"); r.Delivered || r.Doc != cmdDoc || r.Commands != 0 {
		t.Errorf("a question: %+v", r)
	}
}

func TestFinalDocumentReplaysTurns(t *testing.T) {
	msgs := []dialog.Message{
		{Role: dialog.RoleUser, Content: "Fix it."},
		{Role: dialog.RoleAssistant, Content: `Change "Monday" to "Friday".`},
		{Role: dialog.RoleSystem, Content: "Current document:\nwhatever the note says"},
		{Role: dialog.RoleUser, Content: `Delete sentence 2.`}, // the user's words are no command
		{Role: dialog.RoleAssistant, Content: "Delete sentence 2.\nWhat else?"},
	}
	want := "Anna will call Ben on Friday. Bring your badge. Lunch is at noon."
	if got := FinalDocument(cmdDoc, msgs); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEnvironmentNote(t *testing.T) {
	v := &dialog.View{Draft: cmdDoc}
	h := []dialog.Message{{Role: dialog.RoleUser, Content: "Fix it."}, {Role: dialog.RoleAssistant, Content: `Change "Monday" to "Friday". Change "Tuesday" to "x".`}}
	want := "Not done: \"Tuesday\" is not in the document.\nCurrent document:\nAnna will call Ben on Friday. The room is on the second floor. Bring your badge. Lunch is at noon."
	if got := (Environment{}).Respond(v, h); got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	h = append(h, dialog.Message{Role: dialog.RoleSystem, Content: want}, dialog.Message{Role: dialog.RoleUser, Content: "Ok."},
		dialog.Message{Role: dialog.RoleAssistant, Content: "Revised document:\nA b."})
	if got := (Environment{}).Respond(v, h); got != "" {
		t.Errorf("a full document got note %q, want none", got)
	}
	if got := (Environment{}).Respond(v, h[:1]); got != "" {
		t.Errorf("a user turn got note %q", got)
	}
	tk := newTestTask(t)
	if dialog.EnvironmentOf(tk) == nil {
		t.Error("the task offers no environment")
	}
}

// The rollout records the environment's note after each turn with
// commands, and both users read the applied document: the same commands
// as a full revision get the same reply.
func TestUsersReadTheAppliedDocument(t *testing.T) {
	tk := newTestTask(t)
	for i := 0; i < 40; i++ {
		o, v, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		var cmds []string
		for _, e := range o.Edits {
			cmds = append(cmds, e.Detail) // the user's own words, as commands
		}
		cmdTurn := "I made these changes:\n" + strings.Join(cmds, "\n")
		applied := FinalDocument(o.Draft, []dialog.Message{{Role: dialog.RoleAssistant, Content: cmdTurn}})
		if applied != o.Truth {
			t.Fatalf("instance %d: the plan's details as commands gave %q, want the target %q", i, applied, o.Truth)
		}
		fullTurn := "I made these changes:\n" + DocMarker + "\n" + applied
		for _, kind := range []dialog.UserKind{dialog.Human, dialog.Naive} {
			u, _ := tk.User(kind)
			reply := func(turn string, note bool) (string, bool) {
				s := u.NewSession(o, rand.New(rand.NewPCG(7, uint64(i))))
				open, _ := s.Open(context.Background())
				h := []dialog.Message{{Role: dialog.RoleUser, Content: open}, {Role: dialog.RoleAssistant, Content: turn}}
				if note {
					h = append(h, dialog.Message{Role: dialog.RoleSystem, Content: (Environment{}).Respond(v, h)})
				}
				r, end, err := s.Reply(context.Background(), h)
				if err != nil {
					t.Fatal(err)
				}
				return r, end
			}
			rc, ec := reply(cmdTurn, true)
			rf, ef := reply(fullTurn, false)
			if rc != rf || ec != ef || !ec {
				t.Errorf("instance %d, %s: commands got %q (end %v), the same document in full %q (end %v)", i, kind, rc, ec, rf, ef)
			}
		}
	}
	// In a rollout the note follows the agent's turn.
	a, _ := tk.Agent("careful")
	eps, err := rollout.Run(context.Background(), tk, a, Human{}, rollout.Config{Split: "test", Instances: 20, Seed: 2})
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
			if j == 0 || ep.Messages[j-1].Role != dialog.RoleAssistant || len(ParseCommands(ep.Messages[j-1].Content)) == 0 {
				t.Fatalf("%s: note %d does not follow a turn with commands", ep.ID, j)
			}
			if doc := FinalDocument(ep.Oracle.Draft, ep.Messages[:j]); !strings.HasSuffix(m.Content, CurrentMarker+"\n"+doc) {
				t.Errorf("%s: note %q does not show the current document %q", ep.ID, m.Content, doc)
			}
		}
	}
	if notes == 0 {
		t.Error("no environment notes in the careful agent's episodes")
	}
}

// An episode in which the agent never delivers a document fails with
// reward 0: the target-seeker against the human proxy, who never pastes.
func TestNoDeliveryNoReward(t *testing.T) {
	tk := newTestTask(t)
	a, _ := tk.Agent("target-seeker")
	eps, err := rollout.Run(context.Background(), tk, a, Human{}, rollout.Config{Split: "test", Instances: 50, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		if ep.Reward != 0 || ep.Success || ep.Metrics["delivered"] != 0 || ep.Metrics["bleu"] != 0 || ep.Outcome != ep.Oracle.Draft {
			t.Fatalf("%s: %v %v %v %q", ep.ID, ep.Reward, ep.Success, ep.Metrics, ep.Outcome)
		}
	}
}

// The sloppy agent sometimes misquotes: some of its commands do nothing,
// and the environment says so.
func TestSloppyMisquotes(t *testing.T) {
	tk := newTestTask(t)
	a, _ := tk.Agent("sloppy")
	eps, err := rollout.Run(context.Background(), tk, a, Human{}, rollout.Config{Split: "test", Instances: 100, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	notDone := 0
	for _, ep := range eps {
		for _, m := range ep.Messages {
			if m.Role == dialog.RoleSystem && strings.Contains(m.Content, "Not done:") {
				notDone++
			}
		}
	}
	if notDone == 0 {
		t.Error("no misquoted command in 100 sloppy episodes")
	}
}

func FuzzParseCommands(f *testing.F) {
	for _, s := range []string{
		`In sentence 2, change "a" to "b".`, `Take out the sentence "X."`, `After sentence 1, add the sentence "Y."`,
		`Swap sentences 1 and 2.`, "At the start, add a new sentence that starts \"A\".\nThe new sentence goes on \"b.\"",
		`it should say "", not "x"`, "Revised document:\nA b.\n\nDelete sentence 1.", `change "a" to "b" to "c"`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cmds := ParseCommands(text)
		end := 0
		for _, c := range cmds {
			if c.Start < end || c.End > len(text) || c.Start >= c.End {
				t.Fatalf("command %+v out of order or range in %q", c, text)
			}
			end = c.End
			// A command's own text reads as that command.
			again := ParseCommands(text[c.Start:c.End])
			if len(again) != 1 || again[0].Kind != c.Kind || again[0].From != c.From || again[0].To != c.To {
				t.Fatalf("command %+v reads back from %q as %+v", c, text[c.Start:c.End], again)
			}
			if s := c.String(); !strings.Contains(s, `"`+c.From) && c.Kind != CmdSwap && c.Kind != CmdDeleteNumber && c.Kind != CmdInsert && c.Kind != CmdContinue {
				t.Fatalf("%+v written as %q", c, s)
			}
		}
		// Applying never panics, and the document stays normalised.
		r := ApplyTurn(cmdDoc, text)
		if r.Doc != Normalize(r.Doc) || r.Applied+len(r.Failures) != r.Commands {
			t.Fatalf("turn %q gave %+v", text, r)
		}
	})
}
