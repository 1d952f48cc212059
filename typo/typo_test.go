package typo

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestMisspellChangesOneEligibleWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	msg := "Tom buys 12 apples at the market"
	long := func(w string) bool { return len(w) >= 4 && Letters(w) }
	for range 200 {
		got := Misspell(rng, msg, long)
		a, b := strings.Split(msg, " "), strings.Split(got, " ")
		if len(a) != len(b) {
			t.Fatalf("%q: word count changed", got)
		}
		changed := 0
		for i := range a {
			if a[i] != b[i] {
				changed++
				if !long(a[i]) {
					t.Fatalf("%q: changed ineligible word %q", got, a[i])
				}
				if d := len(b[i]) - len(a[i]); d < -1 || d > 1 {
					t.Fatalf("%q: %q → %q is not one slip", got, a[i], b[i])
				}
			}
		}
		if changed > 1 {
			t.Fatalf("%q: %d words changed, want at most 1", got, changed)
		}
	}
	if got := Misspell(rng, "12 34 !", long); got != "12 34 !" {
		t.Fatalf("no eligible word: got %q", got)
	}
}

func TestLetters(t *testing.T) {
	for w, want := range map[string]bool{"apple": true, "Tom": true, "12": false, "it's": false, "": true, "é": false} {
		if got := Letters(w); got != want {
			t.Errorf("Letters(%q) = %v, want %v", w, got, want)
		}
	}
}
