// Package typo puts the slips people make when typing into the scripted
// users' messages: two neighbouring letters swapped, one dropped or one
// doubled, in one word.
package typo

import (
	"math/rand/v2"
	"strings"
)

// Misspell misspells one word of msg, chosen at random among the
// space-separated words for which eligible returns true (it sees every
// word once, in order, so it may track state such as being inside quotes).
// msg comes back unchanged when no word is eligible. Words of fewer than
// two bytes are never eligible.
func Misspell(rng *rand.Rand, msg string, eligible func(word string) bool) string {
	words := strings.Split(msg, " ")
	var cand []int
	for i, w := range words {
		if eligible(w) && len(w) >= 2 {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		return msg
	}
	i := cand[rng.IntN(len(cand))]
	w := []byte(words[i])
	j := rng.IntN(len(w) - 1)
	switch rng.IntN(3) {
	case 0:
		w[j], w[j+1] = w[j+1], w[j]
	case 1:
		w = append(w[:j:j], w[j+1:]...)
	default:
		w = append(w[:j+1:j+1], w[j:]...)
	}
	words[i] = string(w)
	return strings.Join(words, " ")
}

// Letters reports whether w is made of ASCII letters only, so that digits
// and punctuation (numbers, quotes) survive a typo.
func Letters(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
