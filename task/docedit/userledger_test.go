package docedit

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

// In conversations of the scripted agents with the human proxy, at the
// easy and the default level, every agent turn the human answers with a
// concrete change (quoted words) and that the ledger notes gets the note
// of that very change: its words to copy are the ones the human quotes.
// Turns that ask nothing, or ask for the whole text, get no note, nor
// does any user message; and no note holds a target sentence the draft
// lacks (leaks, read on the note as if a user had said it).
func TestUserLedgerNotesTheChangeTheUserStates(t *testing.T) {
	for _, level := range []string{"easy", ""} {
		tk := userLedgerTask(t, level)
		notes := tk.UserNotes()
		if notes == nil {
			t.Fatal("the user ledger is on and the task shows no notes")
		}
		u, _ := tk.User("human")
		agree, silent := 0, 0
		for _, prof := range []string{"careful", "sloppy", "guesser", "target-seeker"} {
			a, _ := tk.Agent(prof)
			for i := range 30 {
				o, v, err := tk.Instance("test", i)
				if err != nil {
					t.Fatal(err)
				}
				msgs := tasktest.MustPlay(t, tk, o, v, u, a, uint64(i), 10).Messages
				for k, m := range msgs {
					note := notes(o, msgs[:k+1])
					if note != "" {
						if s, ok := leaks(o, []dialog.Message{{Role: dialog.RoleUser, Content: note}}); ok {
							t.Errorf("%s: note %q holds a target sentence the draft lacks (%q)", o.ID, note, s)
						}
					}
					if m.Role != dialog.RoleAssistant {
						if note != "" {
							t.Errorf("%s: after a %s message: note %q", o.ID, m.Role, note)
						}
						continue
					}
					r := readAgent(m.Content)
					if r.askTarget || !(r.askChange || r.askRest) {
						silent++
						if note != "" {
							t.Errorf("%s %s: turn %q asks for no change, note %q", o.ID, prof, m.Content, note)
						}
						continue
					}
					f, ok := Asked(o, msgs[:k+1])
					if !ok || k+1 >= len(msgs) || !strings.Contains(msgs[k+1].Content, `"`) {
						continue
					}
					if want := userledger.Prefix + " " + f.Text; note != want {
						t.Errorf("%s: note %q, want %q", o.ID, note, want)
					}
					if f.Value != "" && !strings.Contains(msgs[k+1].Content, `"`+f.Value+`"`) {
						t.Errorf("%s %s: turn %q answered %q: note %q", level, o.ID, m.Content, msgs[k+1].Content, note)
					}
					agree++
				}
			}
		}
		t.Logf("%q: %d concrete answers checked, %d turns asking for no change", level, agree, silent)
		if agree < 100 || silent < 20 {
			t.Errorf("%q: %d concrete answers and %d turns asking for no change checked, want at least 100 and 20", level, agree, silent)
		}
	}
}

// A hand-played conversation: asked what to change, the note is the first
// change numbered in the draft; once the agent's command makes it, the
// next change, numbered in the document as changed; asked for the whole
// text, none. With the ledger off the task shows no notes.
func TestUserLedgerFollowsTheDocument(t *testing.T) {
	tk := userLedgerTask(t, "")
	var o *dialog.Oracle
	for i := 0; o == nil && i < 200; i++ {
		x, _, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		if len(x.Edits) >= 2 && x.Edits[0].Kind == KindReplace && x.Edits[1].Kind == KindReplace {
			o = x
		}
	}
	if o == nil {
		t.Fatal("no test instance opens with two replacements")
	}
	notes := tk.UserNotes()
	e0, e1 := o.Edits[0], o.Edits[1]
	ask := "What should I change? Exact words, please."
	msgs := []dialog.Message{{Role: dialog.RoleUser, Content: o.Opening}, {Role: dialog.RoleAssistant, Content: ask}}
	if got := notes(o, msgs); !strings.Contains(got, `"`+e0.To+`"`) || !strings.HasPrefix(got, userledger.Prefix) {
		t.Errorf("first ask: note %q, want the first change (to %q)", got, e0.To)
	}
	i, _ := where(e0, SplitSentences(Normalize(o.Draft)))
	cmd := `In sentence ` + string(rune('1'+i)) + `, change "` + e0.From + `" to "` + e0.To + `".`
	msgs = append(msgs, dialog.Message{Role: dialog.RoleUser, Content: "Change it."},
		dialog.Message{Role: dialog.RoleAssistant, Content: cmd + "\n\nAnything else? Exact words, please."})
	cur := SplitSentences(FinalDocument(o.Draft, msgs))
	if stateOf(e0, cur) != stateDone {
		t.Fatalf("command %q did not make the first change", cmd)
	}
	if got := notes(o, msgs); !strings.Contains(got, `"`+e1.To+`"`) {
		t.Errorf("after the first change: note %q, want the second (to %q)", got, e1.To)
	}
	msgs = append(msgs, dialog.Message{Role: dialog.RoleUser, Content: "Okay."},
		dialog.Message{Role: dialog.RoleAssistant, Content: "Could you paste the full text you want?"})
	if got := notes(o, msgs); got != "" {
		t.Errorf("asked for the whole text: note %q, want none", got)
	}
	if newTestTask(t).UserNotes() != nil {
		t.Error("the user ledger is off and the task shows notes")
	}
}
