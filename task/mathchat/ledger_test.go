package mathchat

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

// ledgerTask is the h8 level's task with the ledger.
func ledgerTask(t testing.TB) *Task {
	t.Helper()
	cfg := mustLevel(t, "h8")
	cfg.Ledger = true
	tk, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// statements is a problem's text without its question: what the
// ledger's last note states once every number is told.
func statements(o *dialog.Oracle) string {
	s := splitSentences(o.Instruction)
	return strings.Join(s[:len(s)-1], " ")
}

// fullNote is the ledger's last note on a problem whose statements, as
// the user told them, are stmts: them, then the working Solve gives for
// them with the oracle's question.
func fullNote(t *testing.T, o *dialog.Oracle, stmts string) string {
	t.Helper()
	s := splitSentences(o.Instruction)
	_, steps, err := Solve(stmts + " " + s[len(s)-1])
	if err != nil {
		t.Fatalf("solving %q: %v", stmts, err)
	}
	return ledgerAll + " " + stmts + " " + ledgerWorking + " " + strings.Join(steps, ". ") + "."
}

// Played through the rollout against the human proxy, the ledger notes
// each reply that tells a number, only replies, and ends where the
// careful agent answers with the whole problem as the oracle has it; the
// scripted agent and the human proxy play exactly as they do without it.
func TestLedgerFollowsTheConversation(t *testing.T) {
	tk := ledgerTask(t)
	env := dialog.EnvironmentOf(tk)
	if env == nil {
		t.Fatal("h8 has no environment")
	}
	a, _ := tk.Agent("careful")
	ctx := context.Background()
	complete := 0
	for i := range 40 {
		o, v, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		ep := dialog.Episode{ID: "ledger", Task: Name, Split: "test", MaxTurns: 8, Seed: uint64(i), Oracle: *o, View: *v}
		play := func(r rollout.Rules) []dialog.Message {
			l := rollout.Begin(ep, a, Human{}, r)
			if err := l.Open(ctx); err != nil {
				t.Fatal(err)
			}
			for !l.Done() {
				if err := l.AgentTurn(ctx); err != nil {
					t.Fatal(err)
				}
				if err := l.UserTurn(ctx); err != nil {
					t.Fatal(err)
				}
			}
			return l.Ep.Messages
		}
		with, without := play(rollout.Rules{Env: env}), play(rollout.Rules{})
		var spoken []dialog.Message
		missing := len(strings.Split(o.Opening, "some")) // an upper bound: every withheld sentence says "some"
		last := ""
		for j, m := range with {
			if !dialog.IsNote(m) {
				spoken = append(spoken, m)
				continue
			}
			if prev := with[j-1]; prev.Role != dialog.RoleUser || j == 1 {
				t.Fatalf("problem %d: note %q after %s message %d", i, m.Content, prev.Role, j-1)
			}
			if m.Content == last {
				t.Fatalf("problem %d: the note %q repeated", i, m.Content)
			}
			last = m.Content
			if n := len(strings.Split(m.Content, "some")); strings.HasPrefix(m.Content, ledgerMissing) && n > missing {
				t.Fatalf("problem %d: %q lists more missing than before", i, m.Content)
			} else {
				missing = n
			}
		}
		if !reflect.DeepEqual(spoken, without) {
			t.Fatalf("problem %d: the ledger changed the play:\n%v\nwant\n%v", i, spoken, without)
		}
		if strings.HasPrefix(last, ledgerAll) {
			complete++
			if want := fullNote(t, o, statements(o)); last != want {
				t.Fatalf("problem %d: last note\n%q\nwant\n%q", i, last, want)
			}
			// The careful agent's answer is the note's working, then
			// the answer: a policy that copies the note has the sum.
			working := last[strings.Index(last, ledgerWorking)+len(ledgerWorking)+1:]
			if ans := with[len(with)-2].Content; !strings.HasPrefix(ans, working+" The answer is ") {
				t.Fatalf("problem %d: the answer %q does not follow the working %q", i, ans, working)
			}
		}
	}
	if complete < 30 {
		t.Errorf("the ledger was complete in %d of 40 conversations, want most", complete)
	}
}

// The ledger records what the user said, right or wrong: a bare number
// fills what the agent asked about, a reply that tells nothing adds no
// note, nor does an agent turn, and full sentences fill what they name.
func TestLedgerRecordsWhatTheUserSaid(t *testing.T) {
	tk := ledgerTask(t)
	env := dialog.EnvironmentOf(tk)
	o, v, err := tk.Instance("test", 3)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := grammar()
	p := l.read(o.Opening)
	u := p.unknown()
	if len(u) != hiddenFacts(8) {
		t.Fatalf("read %d withheld numbers, want %d", len(u), hiddenFacts(8))
	}
	h := []dialog.Message{{Role: dialog.RoleUser, Content: "Help me. " + o.Opening}}
	say := func(role dialog.Role, text string) string {
		h = append(h, dialog.Message{Role: role, Content: text})
		note := env.Respond(v, h)
		if note != "" {
			h = append(h, dialog.Message{Role: dialog.RoleSystem, Content: note})
		}
		return note
	}
	if note := env.Respond(v, h[:1]); note != "" {
		t.Errorf("note on the opening: %q", note)
	}
	if note := say(dialog.RoleAssistant, u[0].ask()); note != "" {
		t.Errorf("note on an agent turn: %q", note)
	}
	note := say(dialog.RoleUser, "I think it was 97, let me check... yes, 97.")
	var rest []string
	for _, st := range u[1:] {
		rest = append(rest, st.vague)
	}
	if want := ledgerMissing + " " + strings.Join(rest, " "); note != want {
		t.Fatalf("after the first number:\n%q\nwant\n%q", note, want)
	}
	say(dialog.RoleAssistant, "The answer is 5.")
	if note := say(dialog.RoleUser, "No, that's not it. It was 3 apples or 4."); note != "" {
		t.Errorf("a reply to an answer, with numbers but no statement: note %q", note)
	}
	say(dialog.RoleAssistant, "How many?")
	var told []string
	for _, f := range o.Facts {
		if f.Hidden {
			told = append(told, f.Text)
		}
	}
	note = say(dialog.RoleUser, "Sure. "+strings.Join(told[1:], " "))
	want := statements(o)
	first := o.Facts[0]
	for _, f := range o.Facts {
		if f.Hidden {
			first = f
			break
		}
	}
	want = strings.Replace(want, first.Text, strings.Replace(first.Text, first.Value, "97", 1), 1)
	if want = fullNote(t, o, want); note != want {
		t.Fatalf("after every number:\n%q\nwant\n%q", note, want)
	}
}

// The ledger is there when Config.Ledger asks for it, at any level, and
// not otherwise.
func TestLedgerOnlyWhenAsked(t *testing.T) {
	for _, name := range []string{"", "easy", "h2", "h16"} {
		for _, on := range []bool{false, true} {
			cfg := mustLevel(t, name)
			cfg.Ledger = on
			tk, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := dialog.EnvironmentOf(tk) != nil; got != on {
				t.Errorf("level %q, Ledger %v: environment %v", name, on, got)
			}
		}
	}
}

// Whatever the agent and the user write, the ledger does not fail and
// writes one of its two notes or none.
func FuzzLedger(f *testing.F) {
	f.Add("How many eggs does Gina buy?", "It was 4.")
	f.Add("The answer is 5.", "Gina buys 7 eggs. The eggs cost $2 each.")
	f.Add("", "I think it was 1/2, let me check... yes, 0.5.")
	env := dialog.EnvironmentOf(ledgerTask(f))
	o, v, err := ledgerTask(f).Instance("test", 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, agent, reply string) {
		h := []dialog.Message{{Role: dialog.RoleUser, Content: o.Opening}, {Role: dialog.RoleAssistant, Content: agent}, {Role: dialog.RoleUser, Content: reply}}
		if note := env.Respond(v, h); note != "" && !isLedgerNote(note) {
			t.Fatalf("note %q", note)
		}
	})
}

func mustLevel(tb testing.TB, name string) Config {
	tb.Helper()
	cfg, err := Level(name)
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}
