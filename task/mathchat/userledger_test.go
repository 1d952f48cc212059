package mathchat

import (
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// userLedgerProblem is an h8 problem with the user ledger on, and the
// grammar's question for each of its facts (TestAsksResolve: each is read
// as asking about exactly its fact).
func userLedgerProblem(t *testing.T) (*Task, *dialog.Oracle, []string) {
	t.Helper()
	cfg := mustLevel(t, "h8")
	cfg.UserLedger = true
	tk, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := tk.Instance("test", 0)
	if err != nil {
		t.Fatal(err)
	}
	var asks []string
	for _, s := range tk.lang.read(o.Instruction).stmts {
		if s.pat.num != numNone {
			asks = append(asks, s.ask())
		}
	}
	if len(asks) != len(o.Facts) {
		t.Fatalf("%d questions for %d facts", len(asks), len(o.Facts))
	}
	return tk, o, asks
}

// After an agent turn that asks for a withheld number, the simulator's
// note is the statement asked about with its true number; after any other
// turn, and after a reply, there is none. A question about a number the
// opening gives is read as the users read it (about that fact, which the
// human proxy answers "It is in the problem.") and gets no note.
func TestUserLedgerNotesTheAskedStatement(t *testing.T) {
	tk, o, asks := userLedgerProblem(t)
	notes := tk.UserNotes()
	if notes == nil {
		t.Fatal("the user ledger is on and the task shows no notes")
	}
	opening := dialog.Message{Role: dialog.RoleUser, Content: o.Opening}
	note := func(turn string) string {
		return notes(o, []dialog.Message{opening, {Role: dialog.RoleAssistant, Content: turn}})
	}
	hidden, given := 0, -1
	for k, f := range o.Facts {
		if !f.Hidden {
			given = k
			continue
		}
		hidden++
		want := "Asked about: " + f.Text
		if got := note(asks[k]); got != want {
			t.Errorf("asked %q: note %q, want %q", asks[k], got, want)
		}
	}
	if hidden < 4 || given < 0 {
		t.Fatalf("problem %s withholds %d facts and gives %d: want a long problem that gives one", o.ID, hidden, given)
	}
	if r := readAgent(asks[given], o.Facts); r.kind != intentAskFact || r.fact != given {
		t.Fatalf("asked the given %q: read %+v, want fact %d", o.Facts[given].Text, r, given)
	}
	for _, turn := range []string{
		asks[given],                    // a number the opening gives
		"Let me work through it.",      // asks nothing
		"The answer is 42.",            // an answer
		"What answer did you get?",     // asks for the answer
		"How many do you buy?",         // fits several facts
		"Can you tell me the weather?", // off topic
	} {
		if got := note(turn); got != "" {
			t.Errorf("turn %q: note %q, want none", turn, got)
		}
	}
	k := 0
	for !o.Facts[k].Hidden {
		k++
	}
	asked := []dialog.Message{opening, {Role: dialog.RoleAssistant, Content: asks[k]}, {Role: dialog.RoleUser, Content: o.Facts[k].Value}}
	if got := notes(o, asked); got != "" {
		t.Errorf("after the reply: note %q, want none (notes follow agent turns)", got)
	}
	if got := notes(o, asked[:0]); got != "" {
		t.Errorf("no conversation: note %q", got)
	}
	off, err := New(mustLevel(t, "h8"))
	if err != nil {
		t.Fatal(err)
	}
	if off.UserNotes() != nil {
		t.Error("the user ledger is off and the task shows notes")
	}
}
