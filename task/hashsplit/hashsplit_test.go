package hashsplit

import "testing"

// The splits of a few texts are pinned: a change to the hash would move
// every task's instances between train and test.
func TestOf(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"", "test"},
		{"a", "train"},
		{"b", "test"},
		{"Tom has 3 apples.", "test"},
		{"The meeting is on Monday.", "train"},
		{"one apple costs $3", "train"},
		{"hello world", "test"},
	} {
		if got := Of(tt.text); got != tt.want {
			t.Errorf("Of(%q) = %s, want %s", tt.text, got, tt.want)
		}
	}
}

// Both splits are used, about evenly.
func TestOfBalance(t *testing.T) {
	n := map[string]int{}
	for i := range 1000 {
		n[Of(string(rune('A'+i%26))+string(rune(i)))]++
	}
	if len(n) != 2 || n["train"] < 400 || n["test"] < 400 {
		t.Errorf("splits of 1000 texts: %v, want train and test each about 500", n)
	}
}
