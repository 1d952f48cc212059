package docedit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A document is one paragraph: sentences joined by single spaces. Every
// text that enters the task (generated, loaded, or written by an agent) is
// normalised to that form first, so that comparing, splitting and editing
// agree on where words and sentences start.

// Normalize collapses every run of whitespace (newlines included) to one
// space and trims the ends.
func Normalize(text string) string { return strings.Join(strings.Fields(text), " ") }

// abbreviations end with a period but do not end a sentence.
var abbreviations = map[string]bool{
	"mr.": true, "mrs.": true, "ms.": true, "dr.": true, "st.": true, "e.g.": true, "i.e.": true,
	"etc.": true, "vs.": true, "no.": true, "prof.": true, "inc.": true, "jr.": true, "sr.": true,
}

// SplitSentences splits a document into sentences. A sentence ends at a
// word ending in '.', '!' or '?' (optionally followed by a closing quote
// or bracket) when the next word starts with an upper-case letter, a digit
// or an opening quote, unless the word is a common abbreviation ("Mr.").
// Joining the result with single spaces gives Normalize(text) back.
func SplitSentences(text string) []string {
	words := strings.Fields(text)
	var out []string
	start := 0
	for i, w := range words {
		if i+1 < len(words) && !endsSentence(w, words[i+1]) {
			continue
		}
		out = append(out, strings.Join(words[start:i+1], " "))
		start = i + 1
	}
	return out
}

func endsSentence(w, next string) bool {
	core := strings.TrimRight(w, "\"')]”’")
	if core == "" {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(core)
	if last != '.' && last != '!' && last != '?' {
		return false
	}
	if abbreviations[strings.ToLower(core)] {
		return false
	}
	first, _ := utf8.DecodeRuneInString(next)
	return unicode.IsUpper(first) || unicode.IsDigit(first) || strings.ContainsRune("\"'“‘(", first)
}

// JoinSentences joins sentences into a document.
func JoinSentences(sents []string) string { return strings.Join(sents, " ") }

// isWordRune is what a phrase match may not touch on either side.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// findPhrase returns the byte offset of the first occurrence of phrase in
// text that is not glued to a letter or digit on either side ("box" is not
// found in "boxes"), or -1.
func findPhrase(text, phrase string) int {
	if phrase == "" {
		return -1
	}
	for off := 0; off <= len(text)-len(phrase); {
		i := strings.Index(text[off:], phrase)
		if i < 0 {
			return -1
		}
		i += off
		if boundaryAt(text, i, i+len(phrase)) {
			return i
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		off = i + size
	}
	return -1
}

func boundaryAt(text string, start, end int) bool {
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:start])
		if isWordRune(r) {
			return false
		}
	}
	if end < len(text) {
		r, _ := utf8.DecodeRuneInString(text[end:])
		if isWordRune(r) {
			return false
		}
	}
	return true
}

// countPhrase counts the non-overlapping bounded occurrences of phrase.
func countPhrase(text, phrase string) int {
	n := 0
	for {
		i := findPhrase(text, phrase)
		if i < 0 {
			return n
		}
		n++
		text = text[i+len(phrase):]
	}
}

// replacePhrase replaces the first bounded occurrence of from with to and
// reports whether there was one. Replacing with "" also removes one space
// next to the phrase, so no double space is left behind.
func replacePhrase(text, from, to string) (string, bool) {
	i := findPhrase(text, from)
	if i < 0 {
		return text, false
	}
	if to == "" {
		start, end := i, i+len(from)
		switch {
		case end < len(text) && text[end] == ' ':
			end++
		case start > 0 && text[start-1] == ' ':
			start--
		}
		return text[:start] + text[end:], true
	}
	return text[:i] + to + text[i+len(from):], true
}

// wordCount counts space-separated words.
func wordCount(s string) int { return len(strings.Fields(s)) }
