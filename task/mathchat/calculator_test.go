package mathchat

import (
	"context"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

func TestCalculatorCompletesSteps(t *testing.T) {
	c := Calculator{}
	for _, tc := range []struct{ text, want string }{
		{"3 + 4 =", " 7"},
		{"Thanks. 12 - 15 =", " -3"},
		{"7 × 8 =", " 56"},
		{"48 ÷ 2 =", " 24"},
		{"23 ÷ 5 =", " 4 remainder 3"},
		{"75% of 80 =", " 60"},
		{"1.5 + 2.25 =", " 3.75"},
		{"Got it. 6×7=", " 42"},
		{"So 9 ÷ 0 =", ""},  // no value
		{"2 + 3 + 4 =", ""}, // a chain is not one step
		{"3 + 4 = 7. 7 × 2 =", " 14"},
		{"3 + 4", ""},             // no "=" yet
		{"The answer is 7 =", ""}, // no operation
		{"", ""},
	} {
		if got := c.Complete(tc.text); got != tc.want {
			t.Errorf("Complete(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	if got := (Calculator{Fractions: true}).Complete("23 ÷ 5 ="); got != " 4.6" {
		t.Errorf("with fractions, 23 ÷ 5 = %q, want exact 4.6", got)
	}
}

func TestCalculatorApplyRewritesResults(t *testing.T) {
	c := Calculator{}
	for _, tc := range []struct{ in, want string }{
		{"3 + 4 = 7. The answer is 7.", "3 + 4 = 7. The answer is 7."},
		{"3 + 4 = 8. 8 × 2 = 16. The answer is 16.", "3 + 4 = 7. 8 × 2 = 16. The answer is 16."},
		{"23 ÷ 5 = 5 remainder 4.", "23 ÷ 5 = 4 remainder 3."},
		{"75% of 80 = 61.", "75% of 80 = 60."},
		{"What is the price?", "What is the price?"},
	} {
		if got := c.Apply(tc.in); got != tc.want {
			t.Errorf("Apply(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// What the calculator wrote in a turn is found again in the finished text.
func TestForcedSpansFindTheCalculatorsResults(t *testing.T) {
	text := "3 + 4 = 7. 7 × 20 = 140. The answer is 140."
	spans := dialog.ForcedSpans(Calculator{}, text)
	var got []string
	for _, sp := range spans {
		got = append(got, text[sp[0]:sp[1]])
	}
	if len(got) != 2 || got[0] != " 7" || got[1] != " 140" {
		t.Fatalf("forced spans %q, want [\" 7\" \" 140\"]", got)
	}
	if s := dialog.ForcedSpans(Calculator{}, "3 + 4 = 8."); len(s) != 0 {
		t.Fatalf("a wrong written result is not the tool's: %v", s)
	}
}

// An agent that computes right anyway gets exactly the same episodes with
// the calculator on; a sloppy one keeps slipping, now by carrying a
// misread number, and is still caught by the human proxy.
func TestCalculatorLeavesCarefulAgentUnchanged(t *testing.T) {
	on, off := DefaultConfig(), DefaultConfig()
	off.Calculator = false
	tOn, err := New(on)
	if err != nil {
		t.Fatal(err)
	}
	tOff, err := New(off)
	if err != nil {
		t.Fatal(err)
	}
	if dialog.ToolOf(tOn) == nil || dialog.ToolOf(tOff) != nil {
		t.Fatal("Tool() must be the calculator exactly when it is on")
	}
	play := func(tk *Task, profile string) []dialog.Episode {
		a, err := tk.Agent(profile)
		if err != nil {
			t.Fatal(err)
		}
		eps, err := rollout.Run(context.Background(), tk, a, Human{}, rollout.Config{Split: "test", Instances: 150, MaxTurns: 8, Seed: 5, AgentName: profile})
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}
	a, b := play(tOn, "careful"), play(tOff, "careful")
	for i := range a {
		if a[i].Reward != b[i].Reward || len(a[i].Messages) != len(b[i].Messages) {
			t.Fatalf("careful episode %d: reward %v with the calculator, %v without", i, a[i].Reward, b[i].Reward)
		}
		for j := range a[i].Messages {
			if a[i].Messages[j].Content != b[i].Messages[j].Content {
				t.Fatalf("careful episode %d message %d differs:\n%q\n%q", i, j, a[i].Messages[j].Content, b[i].Messages[j].Content)
			}
		}
	}
	// Every step a scripted agent writes with the calculator on is right.
	c := Calculator{}
	for _, ep := range play(tOn, "sloppy") {
		for _, m := range ep.Messages {
			if m.Role == dialog.RoleAssistant && c.Apply(m.Content) != m.Content {
				t.Fatalf("sloppy turn with a wrong result under the calculator: %q", m.Content)
			}
		}
	}
}
