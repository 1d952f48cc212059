package mathchat

import (
	"math/big"
	"regexp"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// Answer is an answer statement found in a message.
type Answer struct {
	Number
}

var (
	// boxedRe matches \boxed{...} with one level of nested braces inside.
	boxedRe = regexp.MustCompile(`\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}`)
	// answerIsRe matches the phrases that introduce a stated answer; the
	// number must follow within a few words ("The answer is 17", "Final
	// answer: $12", "the answer would be about 3/4").
	answerIsRe = regexp.MustCompile(`(?i)\banswers?\s*(?:(?:is|would be|will be|should be)\b|:|=)`)
	// trailingEqRe matches "= N" ending a message, optionally followed by
	// unit words and closing punctuation ("... = 42", "= 12 km.").
	trailingEqRe = regexp.MustCompile(`=\s*(` + numberExpr + `)\s*(?:[A-Za-z]+\s*){0,2}[.!]?\s*$`)
)

// ExtractAnswer finds the answer a message states. The answer statements
// it knows are \boxed{N}, "answer is N" (also "answer: N", "answer = N",
// "answer would be N"), and "= N" ending the message (units and a full
// stop may follow). When a message holds several, the one that starts
// last wins, so "3 × 4 = 12. The answer is 12." gives 12 from its last
// statement and "The answer is 10. No wait, the answer is 12." gives 12.
// Numbers are read by ParseNumber's rules; text after the number (units,
// "apples") is ignored.
func ExtractAnswer(msg string) (Answer, bool) {
	s := normalizeMath(msg)
	best := Answer{}
	bestAt := -1
	consider := func(at int, n Number, ok bool) {
		if ok && at >= bestAt {
			best, bestAt = Answer{n}, at
		}
	}
	for _, m := range boxedRe.FindAllStringSubmatchIndex(s, -1) {
		n, ok := firstNumber(s[m[2]:m[3]])
		consider(m[0], n, ok)
	}
	for _, m := range answerIsRe.FindAllStringIndex(s, -1) {
		rest := s[m[1]:]
		loc := numberRe.FindStringSubmatchIndex(rest)
		if loc == nil || !shortGap(rest[:loc[0]]) {
			continue // the number must follow the phrase closely
		}
		n, ok := numberFromMatch(rest, loc)
		consider(m[0], n, ok)
	}
	if m := trailingEqRe.FindStringSubmatchIndex(s); m != nil {
		n, ok := ParseNumber(s[m[2]:m[3]])
		consider(m[0], n, ok)
	}
	return best, bestAt >= 0
}

// shortGap reports whether the text between an answer phrase and its
// number is at most two words with no digits or sentence ends ("about",
// "**", "exactly").
func shortGap(gap string) bool {
	if strings.ContainsAny(gap, "0123456789.?!\n") {
		return false
	}
	return len(strings.Fields(gap)) <= 2
}

// firstNumber returns the first number in s.
func firstNumber(s string) (Number, bool) {
	ns := Numbers(s)
	if len(ns) == 0 {
		return Number{}, false
	}
	return ns[0], true
}

// FinalAnswer is the agent's final answer in a conversation: the last
// answer statement (by ExtractAnswer's rule) of the last assistant message
// that holds one. Later assistant messages without an answer statement
// (a question, a goodbye) do not cancel an earlier answer.
func FinalAnswer(msgs []dialog.Message) (Answer, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != dialog.RoleAssistant {
			continue
		}
		if a, ok := ExtractAnswer(msgs[i].Content); ok {
			return a, true
		}
	}
	return Answer{}, false
}

// Equal reports whether a states truth exactly. A percent answer ("25%")
// is accepted when either its number (25) or its fraction (0.25) equals
// truth, since problems ask for percents both ways.
func Equal(truth *big.Rat, a Answer) bool {
	if a.Value == nil || truth == nil {
		return false
	}
	if a.Value.Cmp(truth) == 0 {
		return true
	}
	if a.Percent {
		f := new(big.Rat).Quo(a.Value, big.NewRat(100, 1))
		return f.Cmp(truth) == 0
	}
	return false
}

// ParseTruth reads an oracle's Truth field.
func ParseTruth(s string) (*big.Rat, bool) {
	n, ok := ParseNumber(strings.TrimSpace(s))
	if !ok {
		return nil, false
	}
	return n.Value, true
}
