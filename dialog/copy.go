package dialog

import (
	"fmt"
	"regexp"
	"strings"
)

// Copy is how a calibrated simulator is held, at decoding time, to the
// facts its problem holds (chatlm.User.Copy). The embedded simulators are
// conditioned on every fact and still misstate some ("A-912" for A-921,
// "omar84@mail.com" for @inbox.org); each misstatement gives the agent
// another problem than the one it is scored on.
type Copy int

const (
	// CopyOff leaves the simulator's turns as the model writes them.
	CopyOff Copy = iota
	// CopyNumbers: every number a turn states is one the problem holds
	// (KnownNumbers), digit by digit; letters, signs and punctuation
	// around it are free. Mathchat's facts are numbers.
	CopyNumbers
	// CopyValues: every value a turn states (a run of ValueRun's
	// characters holding a digit or an '@': an id, a date, an email, a
	// number) is a whole one the problem holds (HeldValues), character
	// by character. Support's facts are such values, which numbers alone
	// do not pin: a copied "omar84@" may still go on to another domain,
	// a date lose its month.
	CopyValues
)

// copyNames are the Copy kinds as flags and specs write them.
var copyNames = []string{CopyOff: "off", CopyNumbers: "numbers", CopyValues: "values"}

func (c Copy) String() string {
	if c < 0 || int(c) >= len(copyNames) {
		return fmt.Sprintf("Copy(%d)", int(c))
	}
	return copyNames[c]
}

// ParseCopy reads a Copy kind by its String.
func ParseCopy(s string) (Copy, error) {
	for c, n := range copyNames {
		if s == n {
			return Copy(c), nil
		}
	}
	return CopyOff, fmt.Errorf("unknown copy %q (want %s)", s, strings.Join(copyNames, ", "))
}

// ValueRun matches a run of the characters a value is written in: letters,
// digits and "@._+-". Any other character (a space, a comma, '$', '=')
// ends a value, so "date=2026-06-11," holds the runs "date" and
// "2026-06-11".
var ValueRun = regexp.MustCompile(`[A-Za-z0-9@._+\-]+`)

// IsValue reports whether a run states a value: it holds a digit or an
// '@'. Other runs are words ("follow-up", "e-mail"), which copying leaves
// free.
func IsValue(run string) bool { return strings.ContainsAny(run, "0123456789@") }

// ValueEdge is what TrimValue strips from a run's ends: a sentence's
// period or a dash around a value is not part of it. With '@', letters
// and digits they are ValueRun's characters.
const ValueEdge = "._+-"

// TrimValue is run without the separators at its ends ("A-921." gives
// "A-921").
func TrimValue(run string) string { return strings.Trim(run, ValueEdge) }

// HeldValues are the whole values the problem holds, as CopyValues reads
// them: every run of the instruction, the opening, the truth and each
// fact's value that states a value (IsValue), its edge separators
// trimmed.
func (o *Oracle) HeldValues() map[string]bool {
	held := map[string]bool{}
	for _, s := range o.heldTexts() {
		for _, run := range ValueRun.FindAllString(s, -1) {
			if v := TrimValue(run); IsValue(v) {
				held[v] = true
			}
		}
	}
	return held
}
