package dialog

import (
	"regexp"
	"strings"
)

// NumberPattern matches a number as the tasks' people write one: "17",
// "-3", "1,200", "2.5", "3/4". It is the one definition both the facts
// check (fidelity: is a stated number one the problem holds?) and the
// simulator's copy constraint (chatlm.User.Copy = CopyNumbers) read numbers by.
var NumberPattern = regexp.MustCompile(`-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+)?`)

// CanonNumber normalises the first number of s ("1,200", "1200.0" and
// "$1200" alike give "1200"); "" when s holds none.
func CanonNumber(s string) string {
	n := NumberPattern.FindString(s)
	if n == "" {
		return ""
	}
	n = strings.ReplaceAll(n, ",", "")
	if strings.Contains(n, ".") && !strings.Contains(n, "/") {
		n = strings.TrimRight(strings.TrimRight(n, "0"), ".")
	}
	return n
}

// KnownNumbers are the canonical numbers the problem holds: every number
// of the instruction (and of the opening, its vague form), of each fact's
// value and of the truth. Each number of a value counts ("2026-06-11"
// gives three), so a date or an id is checked piece by piece.
func (o *Oracle) KnownNumbers() map[string]bool {
	known := map[string]bool{}
	for _, s := range o.heldTexts() {
		for _, n := range NumberPattern.FindAllString(s, -1) {
			known[CanonNumber(n)] = true
		}
	}
	return known
}

// heldTexts are the texts a problem's facts are read from, by the facts
// check and the copy constraints alike: the instruction, the opening, the
// truth and each fact's value.
func (o *Oracle) heldTexts() []string {
	texts := []string{o.Instruction, o.Opening, o.Truth}
	for _, f := range o.Facts {
		texts = append(texts, f.Value)
	}
	return texts
}
