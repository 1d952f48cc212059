package metric

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenize13a tokenises one segment the way sacreBLEU's tokenizer_13a does
// (itself a port of the tokenisation in mteval-v13a.pl, the WMT standard),
// and returns the tokens joined by single spaces. The rules, applied in this
// order to the whole string:
//
//  1. Remove every "<skipped>".
//  2. Join words hyphenated across lines: remove every "-\n".
//  3. Replace every remaining "\n" by a space.
//  4. Unescape the four SGML entities, in this order and each in one
//     left-to-right pass: "&quot;" → `"`, "&amp;" → "&", "&lt;" → "<",
//     "&gt;" → ">". The order matters: "&amp;lt;" ends as "<" but
//     "&amp;quot;" as "&quot;".
//  5. Pad the line with one space on each side.
//  6. Put spaces around every ASCII character in { | } ~ [ \ ] ^ _ ` space
//     ! " # $ % & ( ) * + : ; < = > ? @ / — the regex
//     ([\{-\~\[-\` -\&\(-\+\:-\@\/]). The apostrophe, hyphen, period and
//     comma are not in the set.
//  7. Split a period or comma from a preceding non-digit: ([^0-9])([\.,])
//     becomes "\1 \2 ".
//  8. Split a period or comma from a following non-digit: ([\.,])([^0-9])
//     becomes " \1 \2". So "3.5" and "1,000" stay whole, "end." splits.
//  9. Split a hyphen from a preceding digit: ([0-9])(-) becomes "\1 \2 ".
//  10. Split on whitespace and join with single spaces.
//
// Rules 7–9 replace non-overlapping matches scanning left to right, exactly
// as Python's re.sub does: after a match the scan resumes behind it, so in
// "a.,b" rule 7 splits "a." and then cannot use the "." again for ".,".
// "Digit" means ASCII 0–9 only; every other code point is a non-digit.
//
// Whitespace in rule 10 is Python's str.isspace set: Go's unicode.IsSpace
// plus the information separators U+001C–U+001F. Invalid UTF-8 bytes are
// read as U+FFFD (Python would have failed to decode them); nothing panics.
//
// sacreBLEU's BLEU also strips trailing whitespace before calling the
// tokeniser (so a final "-\n" is not joined); [BLEU] does that, this
// function does not.
func Tokenize13a(line string) string {
	line = strings.ReplaceAll(line, "<skipped>", "")
	line = strings.ReplaceAll(line, "-\n", "")
	line = strings.ReplaceAll(line, "\n", " ")
	if strings.Contains(line, "&") {
		line = strings.ReplaceAll(line, "&quot;", `"`)
		line = strings.ReplaceAll(line, "&amp;", "&")
		line = strings.ReplaceAll(line, "&lt;", "<")
		line = strings.ReplaceAll(line, "&gt;", ">")
	}

	src := make([]rune, 0, utf8.RuneCountInString(line)+2)
	src = append(src, ' ')
	for _, r := range line {
		src = append(src, r)
	}
	src = append(src, ' ')

	// Rule 6: one code point at a time, so no overlap question arises.
	dst := make([]rune, 0, 2*len(src))
	for _, r := range src {
		if isPunct13a(r) {
			dst = append(dst, ' ', r, ' ')
		} else {
			dst = append(dst, r)
		}
	}

	// Rules 7–9: two-code-point patterns, non-overlapping, left to right.
	src, dst = dst, src[:0]
	for i := 0; i < len(src); i++ {
		if i+1 < len(src) && !isDigit(src[i]) && isPeriodComma(src[i+1]) {
			dst = append(dst, src[i], ' ', src[i+1], ' ')
			i++
			continue
		}
		dst = append(dst, src[i])
	}
	src, dst = dst, src[:0]
	for i := 0; i < len(src); i++ {
		if i+1 < len(src) && isPeriodComma(src[i]) && !isDigit(src[i+1]) {
			dst = append(dst, ' ', src[i], ' ', src[i+1])
			i++
			continue
		}
		dst = append(dst, src[i])
	}
	src, dst = dst, src[:0]
	for i := 0; i < len(src); i++ {
		if i+1 < len(src) && isDigit(src[i]) && src[i+1] == '-' {
			dst = append(dst, src[i], ' ', '-', ' ')
			i++
			continue
		}
		dst = append(dst, src[i])
	}

	// Rule 10.
	var b strings.Builder
	b.Grow(len(dst))
	inToken := false
	for _, r := range dst {
		if isPySpace(r) {
			inToken = false
			continue
		}
		if !inToken && b.Len() > 0 {
			b.WriteByte(' ')
		}
		inToken = true
		b.WriteRune(r)
	}
	return b.String()
}

// isPunct13a reports membership in rule 6's character class
// [\{-\~\[-\` -\&\(-\+\:-\@\/].
func isPunct13a(r rune) bool {
	switch {
	case r >= '{' && r <= '~': // { | } ~
		return true
	case r >= '[' && r <= '`': // [ \ ] ^ _ `
		return true
	case r >= ' ' && r <= '&': // space ! " # $ % &
		return true
	case r >= '(' && r <= '+': // ( ) * +
		return true
	case r >= ':' && r <= '@': // : ; < = > ? @
		return true
	case r == '/':
		return true
	}
	return false
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isPeriodComma(r rune) bool { return r == '.' || r == ',' }

// isPySpace is Python's str.isspace for one code point, which str.split()
// and the re module's \s use: Go's unicode.IsSpace misses only the four
// information separators U+001C–U+001F, which Python counts as whitespace.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyFields splits s on runs of Python whitespace, like Python's str.split().
func pyFields(s string) []string {
	return strings.FieldsFunc(s, isPySpace)
}

// pyRStrip removes trailing Python whitespace, like Python's str.rstrip().
func pyRStrip(s string) string {
	return strings.TrimRightFunc(s, isPySpace)
}
