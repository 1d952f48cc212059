package docedit

import (
	"reflect"
	"testing"
)

// The levels' sizes, pinned: the presets' budgets and the horizon study
// were tuned on them.
func TestLevel(t *testing.T) {
	easy := DefaultConfig()
	easy.MinSentences, easy.MaxSentences, easy.MinWords, easy.MaxWords, easy.MinEdits, easy.MaxEdits = 2, 3, 12, 24, 1, 2
	long := func(edits int) Config {
		c := DefaultConfig()
		c.MinEdits, c.MaxEdits = edits, edits
		return c
	}
	for _, tt := range []struct {
		name string
		want Config
	}{
		{"", DefaultConfig()},
		{"easy", easy},
		{"h1", long(1)},
		{"h2", long(1)},
		{"h5", long(2)},
		{"h8", long(4)},
		{"h10", long(5)},
		{"h24", long(5)},
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
