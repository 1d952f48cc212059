package mathchat

import (
	"context"
	"fmt"
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

// oracleAnswer is the answer the oracle's whole problem has.
func oracleAnswer(t *testing.T, o *dialog.Oracle) string {
	t.Helper()
	v, _, err := Solve(o.Instruction)
	if err != nil {
		t.Fatalf("solving %q: %v", o.Instruction, err)
	}
	return FormatRat(v)
}

// Played through the rollout against the human proxy, the ledger notes
// every reply but the last (the rollout notes no reply that ends the
// episode), counts down what is missing, names as next what the careful
// agent then asks, and ends where the careful agent answers with the
// oracle's answer; the scripted agent and the human proxy play exactly
// as they do without it.
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
		missing := hiddenFacts(8) + 1
		last := ""
		for j, m := range with {
			if !dialog.IsNote(m) {
				if m.Role == dialog.RoleUser && j > 0 && j < len(with)-1 && !dialog.IsNote(with[j+1]) {
					t.Fatalf("problem %d: reply %d has no note", i, j)
				}
				spoken = append(spoken, m)
				continue
			}
			if prev := with[j-1]; prev.Role != dialog.RoleUser || j == 1 {
				t.Fatalf("problem %d: note %q after %s message %d", i, m.Content, prev.Role, j-1)
			}
			last = m.Content
			if !strings.HasPrefix(m.Content, ledgerMissing) {
				continue
			}
			var n int
			if _, err := fmt.Sscanf(m.Content, ledgerMissing+" %d", &n); err != nil || n > missing || n < 1 {
				t.Fatalf("problem %d: %q after %d missing", i, m.Content, missing)
			}
			missing = n
			// The careful agent asks next for what the note names.
			next := m.Content[strings.Index(m.Content, ledgerNext)+len(ledgerNext)+1:]
			if ask := with[j+1].Content; !strings.HasSuffix(ask, next) && !strings.HasSuffix(ask, lowerFirst(next)) {
				t.Fatalf("problem %d: the note names %q next, the agent asks %q", i, next, ask)
			}
		}
		if !reflect.DeepEqual(spoken, without) {
			t.Fatalf("problem %d: the ledger changed the play:\n%v\nwant\n%v", i, spoken, without)
		}
		if strings.HasPrefix(last, ledgerAll) {
			complete++
			want := "The answer is " + oracleAnswer(t, o) + "."
			if last != ledgerAll+" "+want {
				t.Fatalf("problem %d: last note %q, want %q", i, last, ledgerAll+" "+want)
			}
			// With the ledger the careful agent answers without its
			// working: a policy cloned from it copies one number.
			if ans := with[len(with)-2].Content; ans != want {
				t.Fatalf("problem %d: the answer %q, want %q", i, ans, want)
			}
		}
	}
	if complete < 30 {
		t.Errorf("the ledger was complete in %d of 40 conversations, want most", complete)
	}
}

// The ledger records what the user said, right or wrong: a bare number
// fills what the agent asked about, a reply that tells nothing gets the
// same note again, an agent turn none, and full sentences fill what they
// name; the answer in the last note is the one the told numbers make.
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
	if want := fmt.Sprintf("%s %d numbers. %s %s", ledgerMissing, len(u)-1, ledgerNext, u[1].ask()); note != want {
		t.Fatalf("after the first number:\n%q\nwant\n%q", note, want)
	}
	say(dialog.RoleAssistant, "The answer is 5.")
	if again := say(dialog.RoleUser, "No, that's not it. It was 3 apples or 4."); again != note {
		t.Errorf("a reply to an answer, with numbers but no statement: note %q, want %q again", again, note)
	}
	say(dialog.RoleAssistant, "How many?")
	var told []string
	for _, f := range o.Facts {
		if f.Hidden {
			told = append(told, f.Text)
		}
	}
	note = say(dialog.RoleUser, "Sure. "+strings.Join(told[1:], " "))
	first := o.Facts[0]
	for _, f := range o.Facts {
		if f.Hidden {
			first = f
			break
		}
	}
	said := strings.Replace(o.Instruction, first.Text, strings.Replace(first.Text, first.Value, "97", 1), 1)
	if said == o.Instruction {
		t.Fatal("the test did not change a number")
	}
	answer, _, err := Solve(said)
	if err != nil {
		t.Fatal(err)
	}
	if want := ledgerAll + " The answer is " + FormatRat(answer) + "."; note != want {
		t.Fatalf("after every number:\n%q\nwant\n%q", note, want)
	}
	if note == ledgerAll+" The answer is "+oracleAnswer(t, o)+"." {
		t.Fatal("the ledger gave the oracle's answer, not the one the user's numbers make")
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
// writes one of its two notes after the reply.
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
		note := env.Respond(v, h)
		if note == "" || !strings.HasPrefix(note, ledgerMissing) && !strings.HasPrefix(note, ledgerAll) {
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
