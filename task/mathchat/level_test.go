package mathchat

import (
	"reflect"
	"testing"
)

// The levels' sizes, pinned: the presets' budgets and the horizon study
// were tuned on them.
func TestLevel(t *testing.T) {
	easy := DefaultConfig()
	easy.Steps, easy.MaxNumber, easy.MaxAnswer, easy.Distractors, easy.MinHidden, easy.MaxHidden = 1, 9, 90, 0, 1, 2
	at := func(steps, maxAnswer, hidden int) Config {
		c := easy
		c.Steps, c.MaxAnswer, c.MinHidden, c.MaxHidden = steps, maxAnswer, hidden, hidden
		return c
	}
	for _, tt := range []struct {
		name string
		want Config
	}{
		{"", DefaultConfig()},
		{"easy", easy},
		{"h1", at(1, 90, 1)},
		{"h4", at(1, 90, 1)},
		{"h6", at(1, 90, 2)},
		{"h8", at(2, 999, 2)},
		{"h12", at(3, 999, 3)},
		{"h24", at(6, 999, 3)},
		{"h40", at(6, 999, 3)},
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
