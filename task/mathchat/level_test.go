package mathchat

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/tasktest"
)

// The levels' sizes, pinned: the presets' budgets and the horizon study
// were tuned on them.
func TestLevel(t *testing.T) {
	easy := DefaultConfig()
	easy.Steps, easy.MaxNumber, easy.MaxAnswer, easy.Distractors, easy.MinHidden, easy.MaxHidden = 1, 9, 90, 0, 1, 2
	at := func(hidden int) Config {
		c := easy
		c.Families, c.Items, c.MinHidden, c.MaxHidden, c.MaxAnswer = []string{"shopping"}, (hidden+1)/2, hidden, hidden, 9999
		if c.Items > 3 {
			c.MaxNumber = 20
		}
		return c
	}
	for _, tt := range []struct {
		name string
		want Config
	}{
		{"", DefaultConfig()},
		{"easy", easy},
		{"h1", at(1)},
		{"h2", at(1)},
		{"h4", at(2)},
		{"h8", at(5)},
		{"h12", at(8)},
		{"h16", at(11)},
		{"h40", at(16)},
	} {
		got, err := Level(tt.name)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Level(%q) = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("Level(%q): %v", tt.name, err)
		}
	}
	if _, err := Level("hard"); err == nil {
		t.Error(`Level("hard"): want an error`)
	}
}

// The hN levels need about H turns: the careful agent, who asks for each
// withheld number once and then answers, plays three quarters of H or
// more against the human proxy and still solves nearly every problem
// within H turns; each problem withholds hiddenFacts(H) numbers.
func TestHorizonLevelsNeedAboutHTurns(t *testing.T) {
	for _, h := range []int{2, 4, 8, 16} {
		cfg, err := Level(fmt.Sprintf("h%d", h))
		if err != nil {
			t.Fatal(err)
		}
		tk, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := tk.Agent("careful")
		const n = 60
		turns, solved := 0, 0
		for i := range n {
			o, v, err := tk.Instance("test", i)
			if err != nil {
				t.Fatalf("h%d: %v", h, err)
			}
			hidden := 0
			for _, f := range o.Facts {
				if f.Hidden {
					hidden++
				}
			}
			if hidden != hiddenFacts(h) {
				t.Fatalf("h%d problem %d withholds %d numbers, want %d", h, i, hidden, hiddenFacts(h))
			}
			ep := tasktest.MustPlay(t, tk, o, v, Human{}, a, uint64(i), h)
			end := ep.End
			for _, m := range ep.Messages {
				if m.Role == dialog.RoleAssistant {
					turns++
				}
			}
			if end == dialog.Solved {
				solved++
			}
		}
		mean, rate := float64(turns)/n, float64(solved)/n
		t.Logf("h%d: careful %.2f turns, success %.3f", h, mean, rate)
		if h > 2 && (mean < 0.7*float64(h) || mean > float64(h)) {
			t.Errorf("h%d: careful plays %.2f turns on average, want between 0.7·H and H", h, mean)
		}
		if h > 2 && rate < 0.9 {
			t.Errorf("h%d: careful solves %.3f within %d turns, want ≥ 0.9", h, rate, h)
		}
	}
}
