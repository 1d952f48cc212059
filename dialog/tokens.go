package dialog

import "unicode"

// ApproxTokens counts words and punctuation marks: a tokenizer-free length
// for agents and users that are not language models. Model agents report
// their own tokenizer's counts instead.
func ApproxTokens(s string) int {
	n := 0
	inWord := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			inWord = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				n++
				inWord = true
			}
		default:
			n++
			inWord = false
		}
	}
	return n
}
