package support

import (
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/tasktest"
	"github.com/calibrl/calibrl/task/userledger"
)

func userLedgerTask(t *testing.T, level string) *Task {
	t.Helper()
	cfg, err := Level(level)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserLedger = true
	tk, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// stated is the one fact of o whose value msg states, if exactly one.
func stated(o *dialog.Oracle, msg string) (dialog.Fact, bool) {
	var got []dialog.Fact
	for _, f := range o.Facts {
		if strings.Contains(msg, f.Value) {
			got = append(got, f)
		}
	}
	if len(got) != 1 {
		return dialog.Fact{}, false
	}
	return got[0], true
}

// In conversations of the scripted agents with both scripted users, at the
// easy level and at h8 (eight goals: several orders and bookings, the note
// must follow which are done), every agent turn answered with one id or
// value gets the note stating exactly that fact, and every turn that asks
// for nothing gets none, nor does any user turn.
func TestUserLedgerNotesTheFactTheUserGives(t *testing.T) {
	for _, level := range []string{"easy", "h8"} {
		tk := userLedgerTask(t, level)
		notes := tk.UserNotes()
		if notes == nil {
			t.Fatal("the user ledger is on and the task shows no notes")
		}
		checked, silent := 0, 0
		for _, user := range []dialog.UserKind{dialog.Human, dialog.Naive} {
			u, _ := tk.User(user)
			for _, prof := range []string{"careful", "hasty", "wrong-row"} {
				a, _ := tk.Agent(prof)
				for i := range 20 {
					o, v, err := tk.Instance("test", i)
					if err != nil {
						t.Fatal(err)
					}
					ep := tasktest.MustPlay(t, tk, o, v, u, a, uint64(i), 16)
					msgs := ep.Messages
					for k, m := range msgs {
						note := notes(o, msgs[:k+1])
						if m.Role != dialog.RoleAssistant {
							if note != "" {
								t.Errorf("%s: after a %s message: note %q", o.ID, m.Role, note)
							}
							continue
						}
						if readTurn(m.Content).ask == "" {
							silent++
							if note != "" {
								t.Errorf("%s %s: turn %q asks nothing, note %q", o.ID, prof, m.Content, note)
							}
							continue
						}
						if k+1 >= len(msgs) || msgs[k+1].Role != dialog.RoleUser {
							continue
						}
						f, ok := stated(o, msgs[k+1].Content)
						if !ok {
							continue
						}
						checked++
						if want := userledger.Prefix + " " + f.Text; note != want {
							t.Errorf("%s %s %s: turn %q answered %q: note %q, want %q", level, user, o.ID, m.Content, msgs[k+1].Content, note, want)
						}
					}
				}
			}
		}
		t.Logf("%s: %d answered asks, %d silent turns", level, checked, silent)
		if checked < 100 || silent < 20 {
			t.Errorf("%s: %d answered asks and %d turns asking nothing checked, want at least 100 and 20", level, checked, silent)
		}
	}
}

// The asked fact on a hand-played conversation: the account, then the
// order; once the order is cancelled the goal is met and a second ask for
// an order gets none (the human proxy has no other to give), nor does a
// turn asking for what the user does not hold (an email, when their goal
// is a cancel). With the ledger off the task shows no notes.
func TestUserLedgerHandPlayed(t *testing.T) {
	tk := userLedgerTask(t, "easy")
	var o *dialog.Oracle
	for i := 0; o == nil; i++ {
		x, _, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		if x.Family == goalCancel {
			o = x
		}
	}
	acct, order := o.Facts[0], o.Facts[1]
	notes := tk.UserNotes()
	msgs := []dialog.Message{{Role: dialog.RoleUser, Content: "Hi, " + o.Opening}}
	for _, step := range []struct{ agent, want, user string }{
		{"What is your account id?", acct.Text, acct.Text},
		{"Which order do you want to cancel?", order.Text, order.Value + "."},
		{"[cancel order " + order.Value + "] Done. What is the order again?", "", "Thanks."},
		{"What is the new email?", "", "I don't have anything like that to change."},
		{"Anything else?", "", "No."},
	} {
		msgs = append(msgs, dialog.Message{Role: dialog.RoleAssistant, Content: step.agent})
		want := ""
		if step.want != "" {
			want = userledger.Prefix + " " + step.want
		}
		if got := notes(o, msgs); got != want {
			t.Errorf("after %q: note %q, want %q", step.agent, got, want)
		}
		msgs = append(msgs, dialog.Message{Role: dialog.RoleUser, Content: step.user})
	}
	if newTask(t, "easy").UserNotes() != nil {
		t.Error("the user ledger is off and the task shows notes")
	}
}

// StatedIDs counts the ids users state and those that are theirs: the
// human proxy states its own ids (save the ones it misreads on purpose),
// and an id with two digits swapped is not one of them.
func TestStatedIDs(t *testing.T) {
	tk := newTask(t, "easy")
	o, _, err := tk.Instance("test", 0)
	if err != nil {
		t.Fatal(err)
	}
	acct := o.Facts[0].Value
	swapped := acct[:2] + string(acct[3]) + string(acct[2]) + acct[4:]
	if swapped == acct {
		t.Skipf("account %s reads the same swapped", acct)
	}
	msgs := []dialog.Message{
		{Role: dialog.RoleUser, Content: "Hi."},
		{Role: dialog.RoleAssistant, Content: "Is it " + swapped + "? [lookup account " + acct + "]"},
		{Role: dialog.RoleUser, Content: "It's " + acct + ", not " + swapped + "."},
	}
	if stated, held := StatedIDs(o, msgs); stated != 2 || held != 1 {
		t.Errorf("StatedIDs = %d stated, %d held; want 2 and 1 (agent turns not counted)", stated, held)
	}
}
