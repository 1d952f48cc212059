package chatlm

import (
	"slices"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// The constraint allows exactly the tokens that keep every number of the
// turn one the problem holds, digit by digit, with a '.' that may end a
// sentence after a held number or continue one.
func TestNumberCopierAllows(t *testing.T) {
	text := []string{"", "a", " ", ".", "/", ". ", "x1"}
	for d := range 10 {
		text = append(text, string(rune('0'+d)))
	}
	tokens := sortCopyTokens(text)
	o := &dialog.Oracle{Instruction: "the booking A-921 on 2026-06-11", Truth: "2.5", Facts: []dialog.Fact{{Key: "share", Value: "3/4"}}}
	c := newNumberCopier(tokens, o)
	allowed := func(so string) string {
		ids := c.allow(so)
		if ids == nil {
			return "any"
		}
		var out []string
		for _, id := range ids {
			out = append(out, strings.ReplaceAll(text[id], " ", "_"))
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	set := func(s ...string) string {
		slices.Sort(s)
		return strings.Join(s, ",")
	}
	ends := []string{"", "_", "a", ".", "._", "/"} // the tokens that end a number: plain ones and the separators
	for _, c := range []struct{ so, want string }{
		// Starting a number: only digits a held number begins with
		// (921, 2026, 06, 11, 2.5, 3/4: "2026-06-11" holds 06); a token
		// holding a digit is judged by its digit.
		{"it is ", set(append(ends, "0", "1", "2", "3", "9", "x1")...)},
		// Inside one: the digit that continues it; no ending.
		{"A-9", set("2")},
		{"A-92", set("1")},
		// A held number may end, and may not go on to one not held.
		{"A-921", set(append(ends, "x1")...)},
		{"on 202", set("6")},
		// "2" is not held, "2.5" and 2026 are: its '.' may continue it,
		// nothing ends it.
		{"about 2", set("0", ".")},
		{"about 2.", set("5")},
		// 921 is held: its '.' may end a sentence; then a digit may not
		// follow (no held 921.x).
		{"A-921.", set(append(ends, "x1")...)},
		{"3/", set("4")},
		{"on 2026-06", set(append(ends, "x1")...)},
	} {
		if got := allowed(c.so); got != c.want {
			t.Errorf("after %q: allowed %s, want %s", c.so, got, c.want)
		}
	}
}
