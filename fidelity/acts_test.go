package fidelity

import (
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

var mathOracle = &dialog.Oracle{
	Task: "mathchat", Truth: "102",
	Opening: "Eva earns $17 per hour. Eva works 2 hours a day. Eva works for some days in total. How much money does Eva earn in all?",
	Facts: []dialog.Fact{
		{Key: "rate", Text: "Eva earns $17 per hour.", Value: "17", Cues: []string{"earn", "hour"}},
		{Key: "days", Text: "Eva works for 3 days in total.", Value: "3", Cues: []string{"days", "total"}, Hidden: true},
	},
}

var docOracle = &dialog.Oracle{
	Task: "docedit", Draft: "The meeting is on Monday. Bring the blue folder. Lunch is at noon.",
	Truth: "The meeting is on Tuesday. Bring the red folder. Lunch is at noon.",
	Edits: []dialog.Edit{{Kind: "replace", From: "Monday", To: "Tuesday"}, {Kind: "replace", From: "blue", To: "red"}},
}

func TestClassifyLabelledExamples(t *testing.T) {
	cases := []struct {
		o     *dialog.Oracle
		msg   string
		ended bool
		want  Act
	}{
		// The human proxy's phrasing.
		{mathOracle, "Let me check. Eva works for 3 days in total.", false, ProvideFact},
		{mathOracle, "It was 3, I think... the days in total.", false, ProvideFact},
		{mathOracle, "Hmm, that doesn't match what I got.", false, Reject},
		{mathOracle, "That still doesn't look right to me.", false, Reject},
		{mathOracle, "Yes, that's what I got. Thanks!", true, Accept},
		{mathOracle, "I'm not sure what you mean.", false, Clarify},
		{mathOracle, "Which number do you mean?", false, Clarify},
		{mathOracle, "I don't know, that's why I'm asking you.", false, Other},
		{mathOracle, "This is taking too long. Bye.", true, End},
		{mathOracle, "Can you help me with this problem? " + mathOracle.Opening, false, Other},
		// The naive simulator's artifacts.
		{mathOracle, "The answer is 102.", false, Leak},
		{mathOracle, "It's $1,02.", false, Other}, // not the number 102
		{mathOracle, "Great, thank you so much for your help!", true, Accept},
		{mathOracle, "Thanks, I think I can finish it from here.", true, End},
		{mathOracle, "Hmm, I don't think that's right.", false, Reject},
		// Documents.
		{docOracle, "It should say 'Tuesday', not 'Monday'.", false, ProvideFact},
		{docOracle, "The second sentence is off.", false, Other},
		{docOracle, "Here is what I want: " + docOracle.Truth, false, Leak},
		{docOracle, "You changed it back, that undid my fix.", false, Reject},
		{docOracle, "Can you help me fix this memo? A few things in it are wrong.", false, Other},
		{docOracle, "That didn't make it better.", false, Reject},
		{docOracle, "That looks good now, thanks!", true, Accept},
	}
	for _, c := range cases {
		if got := Classify(c.o, c.msg, c.ended); got != c.want {
			t.Errorf("Classify(%q, ended=%v) = %s, want %s", c.msg, c.ended, got, c.want)
		}
	}
}

func TestLeakIgnoresAnswerThatIsAlsoAFact(t *testing.T) {
	o := *mathOracle
	o.Truth = "17" // equal to a given fact's value: stating 17 is ambiguous
	if got := Classify(&o, "Eva earns $17 per hour.", false); got == Leak {
		t.Fatalf("restating a given fact equal to the answer classified as leak")
	}
}

// A truth that is text holding numbers (support's tool call) leaks when a
// turn states it, even though its first number is also a fact's id: only
// a truth that is a number and nothing else is compared as a number.
func TestLeakOfATextTruthHoldingNumbers(t *testing.T) {
	o := &dialog.Oracle{
		Truth: "[change booking B-5349 date=2026-06-11]",
		Facts: []dialog.Fact{
			{Key: "booking1", Text: "The booking is B-5349.", Value: "B-5349", Cues: []string{"booking"}, Hidden: true},
			{Key: "date1", Text: "The new date is 2026-06-11.", Value: "2026-06-11", Cues: []string{"date"}, Hidden: true},
		},
	}
	if got := Classify(o, "Please do exactly this: [change booking B-5349 date=2026-06-11]", false); got != Leak {
		t.Errorf("stating the whole tool call classified as %s, want %s", got, Leak)
	}
	if got := Classify(o, "The booking is B-5349.", false); got == Leak {
		t.Errorf("giving one asked-for id classified as %s", got)
	}
}

func TestTVAndActsByTurn(t *testing.T) {
	p := map[Act]float64{Accept: 0.5, Reject: 0.5}
	q := map[Act]float64{Accept: 0.5, Leak: 0.5}
	if got := TV(p, q); got != 0.5 {
		t.Fatalf("TV = %v, want 0.5", got)
	}
	if got := TV(p, p); got != 0 {
		t.Fatalf("TV(p,p) = %v, want 0", got)
	}
	eps := []dialog.Episode{
		{Oracle: *mathOracle, End: dialog.Solved, Messages: []dialog.Message{
			{Role: dialog.RoleUser, Content: "Help me. " + mathOracle.Opening},
			{Role: dialog.RoleAssistant, Content: "The answer is 102."},
			{Role: dialog.RoleUser, Content: "Yes, that's what I got. Thanks!"},
		}},
		{Oracle: *mathOracle, End: dialog.GaveUp, Messages: []dialog.Message{
			{Role: dialog.RoleUser, Content: "Help me."},
			{Role: dialog.RoleAssistant, Content: "blah"},
		}},
	}
	d := ActsByTurn(eps, 3)
	if d[0][Other] != 1 || d[1][Accept] != 0.5 || d[1][End] != 0.5 || d[2][Gone] != 1 {
		t.Fatalf("acts by turn = %v", d)
	}
}
