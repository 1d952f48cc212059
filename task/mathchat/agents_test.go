package mathchat

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/tasktest"
)

func agentMessages(ep dialog.Episode) []string {
	var out []string
	for _, m := range ep.Messages {
		if m.Role == dialog.RoleAssistant {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestCarefulAsksOnlyHidden: against a clear, patient human the careful
// agent asks about each hidden fact once, never about a given one, and
// answers right with its working shown.
func TestCarefulAsksOnlyHidden(t *testing.T) {
	tk := newTask(t, nil)
	a, _ := tk.Agent("careful")
	for i := 0; i < 100; i++ {
		o, v, _ := tk.Instance("test", i)
		o.Persona.Clarity, o.Persona.TypoRate = 1, 0
		ep := tasktest.MustPlay(t, tk, o, v, Human{}, a, uint64(i), 12)
		end := ep.End
		msgs := agentMessages(ep)
		if end != dialog.Solved || !ep.Success {
			t.Fatalf("%s: end %s success %v\n%v", o.ID, end, ep.Success, ep.Messages)
		}
		hidden := len(o.HiddenFacts())
		if len(msgs) != hidden+1 {
			t.Fatalf("%s: %d agent messages for %d hidden facts, want %d", o.ID, len(msgs), hidden, hidden+1)
		}
		for _, m := range msgs[:hidden] {
			r := readAgent(m, o.Facts)
			if r.kind != intentAskFact || !o.Facts[r.fact].Hidden {
				t.Fatalf("%s: %q is not a question about a hidden fact", o.ID, m)
			}
		}
		last := msgs[len(msgs)-1]
		if !strings.HasSuffix(last, "The answer is "+o.Truth+".") || !strings.Contains(last, " = ") {
			t.Fatalf("%s: final message %q, want working and \"The answer is %s.\"", o.ID, last, o.Truth)
		}
	}
}

func TestGuesserNeverAsks(t *testing.T) {
	tk := newTask(t, nil)
	a, _ := tk.Agent("guesser")
	for i := 0; i < 50; i++ {
		o, v, _ := tk.Instance("test", i)
		ep := tasktest.MustPlay(t, tk, o, v, Human{}, a, uint64(i), 12)
		for _, m := range agentMessages(ep) {
			if _, ok := ExtractAnswer(m); !ok {
				t.Fatalf("%s: guesser message %q states no answer", o.ID, m)
			}
		}
	}
}

// TestSloppyRecovers: with a slip on every first answer, the sloppy agent
// is told it is wrong and then answers right.
func TestSloppyRecovers(t *testing.T) {
	tk := newTask(t, func(c *Config) { c.SlipRate = 1 })
	a, _ := tk.Agent("sloppy")
	for i := 0; i < 50; i++ {
		o, v, _ := tk.Instance("test", i)
		o.Persona.Clarity, o.Persona.TypoRate, o.Persona.Patience = 1, 0, 5
		ep := tasktest.MustPlay(t, tk, o, v, Human{}, a, uint64(i), 12)
		end := ep.End
		msgs := agentMessages(ep)
		if end != dialog.Solved || len(msgs) < 2 {
			t.Fatalf("%s: end %s after %d messages", o.ID, end, len(msgs))
		}
		first, ok := ExtractAnswer(msgs[len(msgs)-2])
		if !ok || FormatRat(first.Value) == o.Truth {
			t.Fatalf("%s: first answer %q has no slip", o.ID, msgs[len(msgs)-2])
		}
		if !strings.HasPrefix(msgs[len(msgs)-1], "Sorry, I made a mistake.") {
			t.Fatalf("%s: recovery %q", o.ID, msgs[len(msgs)-1])
		}
	}
}

func TestAnswerSeeker(t *testing.T) {
	tk := newTask(t, nil)
	a, _ := tk.Agent("answer-seeker")
	leaky, _ := NewNaive(NaiveConfig{Leakage: 1})
	o, v, _ := tk.Instance("test", 4)
	ep := tasktest.MustPlay(t, tk, o, v, leaky, a, 1, 5)
	end := ep.End
	msgs := agentMessages(ep)
	if r := readAgent(msgs[0], o.Facts); r.kind != intentAskAnswer {
		t.Fatalf("first message %q does not ask for the answer", msgs[0])
	}
	if end != dialog.Solved || msgs[1] != "The answer is "+o.Truth+"." {
		t.Fatalf("got end %s, messages %q; want it to repeat the leaked %s", end, msgs, o.Truth)
	}
}

// TestAgentsOnUnknownText: on text outside the grammar the agents ask for
// the problem again, then state a guess; they never fail or panic.
func TestAgentsOnUnknownText(t *testing.T) {
	tk := newTask(t, nil)
	for _, prof := range tk.Profiles() {
		a, _ := tk.Agent(prof)
		s := a.NewSession(&dialog.View{}, rand.New(rand.NewPCG(1, 1)))
		h := []dialog.Message{{Role: dialog.RoleUser, Content: "Janet's ducks lay 16 eggs per day. How much does she make?"}}
		m1, err := s.Act(context.Background(), h)
		if err != nil {
			t.Fatal(err)
		}
		h = append(h, dialog.Message{Role: dialog.RoleAssistant, Content: m1}, dialog.Message{Role: dialog.RoleUser, Content: "I told you already."})
		m2, err := s.Act(context.Background(), h)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ExtractAnswer(m2); !ok {
			t.Errorf("%s: second message %q states no answer", prof, m2)
		}
	}
	if _, err := tk.Agent("genius"); err == nil {
		t.Errorf("unknown profile: got nil error")
	}
	if _, err := tk.User("robot"); err == nil {
		t.Errorf("unknown user: got nil error")
	}
}

func TestScore(t *testing.T) {
	tk := newTask(t, nil)
	o := &dialog.Oracle{Truth: "17"}
	msg := func(s string) []dialog.Message {
		return []dialog.Message{{Role: dialog.RoleUser, Content: "help"}, {Role: dialog.RoleAssistant, Content: s}}
	}
	cases := []struct {
		said    string
		outcome string
		reward  float64
	}{
		{"3 + 14 = 17. The answer is 17.", "17", 1},
		{"The answer is $17.00.", "$17.00", 1},
		{"The answer is 16.", "16", 0},
		{"How many apples?", "", 0},
	}
	for _, c := range cases {
		s := tk.Score(o, msg(c.said))
		if s.Outcome != c.outcome || s.Reward != c.reward || s.Success != (c.reward == 1) {
			t.Errorf("Score(%q) = %+v, want outcome %q reward %v", c.said, s, c.outcome, c.reward)
		}
	}
}

// FuzzScriptedAgent feeds arbitrary user replies to every scripted agent
// after a real opening: no error, no panic, always a message.
func FuzzScriptedAgent(f *testing.F) {
	for _, s := range []string{"4", "It was 4.", "Then Tom buys 4 more apples.", "Which number do you mean?", "", "1/0", "$1,2,3"} {
		f.Add(s, uint64(3))
	}
	tk, err := New(DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, reply string, seed uint64) {
		o, v, err := tk.Instance("train", int(seed%64))
		if err != nil {
			t.Fatal(err)
		}
		for _, prof := range tk.Profiles() {
			a, _ := tk.Agent(prof)
			s := a.NewSession(v, rand.New(rand.NewPCG(seed, 2)))
			h := []dialog.Message{{Role: dialog.RoleUser, Content: o.Opening}}
			for range 3 {
				m, err := s.Act(context.Background(), h)
				if err != nil || m == "" {
					t.Fatalf("%s: Act = %q, %v", prof, m, err)
				}
				h = append(h, dialog.Message{Role: dialog.RoleAssistant, Content: m}, dialog.Message{Role: dialog.RoleUser, Content: reply})
			}
		}
	})
}
