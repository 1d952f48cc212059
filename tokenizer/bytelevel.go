package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The byte-level alphabet of GPT-2 (Radford et al. 2019), also used by
// Hugging Face's ByteLevel pre-tokenizer: every byte maps to one printable
// rune, so a token's bytes can be written as a JSON string. The printable
// bytes '!'..'~', '¡'..'¬' and '®'..'ÿ' map to themselves; the other 68 map,
// in byte order, to U+0100, U+0101, … (space becomes 'Ġ', newline 'Ċ').
var (
	byteToRune [256]rune
	runeToByte = make(map[rune]byte, 256)
)

func init() {
	n := rune(0)
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = 256 + n
			n++
		}
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// byteLevelString writes raw bytes in the byte-level alphabet.
func byteLevelString(raw []byte) string {
	out := make([]rune, len(raw))
	for i, b := range raw {
		out[i] = byteToRune[b]
	}
	return string(out)
}

// byteLevelBytes inverts byteLevelString; ok is false when s holds a rune
// outside the alphabet.
func byteLevelBytes(s string) (raw []byte, ok bool) {
	raw = make([]byte, 0, len(s))
	for _, r := range s {
		b, in := runeToByte[r]
		if !in {
			return nil, false
		}
		raw = append(raw, b)
	}
	return raw, true
}

// Rune classes of the GPT-2 split pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// which Go's regexp cannot express (it has no look-ahead), so splitWords
// walks it by hand. Invalid UTF-8 bytes decode as utf8.RuneError with width
// 1 and fall in classOther, so every byte of the input lands in some piece.
const (
	classOther = iota
	classLetter
	classNumber
	classSpace
)

func classOf(r rune) int {
	if r < utf8.RuneSelf {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			return classLetter
		case r >= '0' && r <= '9':
			return classNumber
		case r == ' ' || r >= '\t' && r <= '\r':
			return classSpace
		}
		return classOther
	}
	switch {
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	case unicode.IsSpace(r):
		return classSpace
	}
	return classOther
}

// decodeAt returns the rune at s[i], its width and its class.
func decodeAt(s string, i int) (rune, int, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return rune(c), 1, classOf(rune(c))
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return r, w, classOf(r)
}

// splitWords calls emit with each piece of s, in order, as cut by
// Hugging Face's ByteLevel pre-tokenizer (use_regex true, add_prefix_space
// false). With digits set, every numeric rune is first isolated into its own
// piece, as HF's Digits pre-tokenizer (individual_digits true) placed before
// ByteLevel in a Sequence does. The pieces concatenate back to s.
func splitWords(s string, digits bool, emit func(piece string)) {
	if !digits {
		splitGPT2(s, emit)
		return
	}
	start := 0
	for i := 0; i < len(s); {
		_, w, cl := decodeAt(s, i)
		if cl == classNumber {
			if start < i {
				splitGPT2(s[start:i], emit)
			}
			emit(s[i : i+w])
			start = i + w
		}
		i += w
	}
	if start < len(s) {
		splitGPT2(s[start:], emit)
	}
}

// splitGPT2 applies the GPT-2 pattern: at each position the first
// alternative that matches wins, each alternative greedy.
func splitGPT2(s string, emit func(piece string)) {
	for i := 0; i < len(s); {
		n := matchAt(s, i)
		emit(s[i : i+n])
		i += n
	}
}

// matchAt returns the length of the pattern's match at s[i:] (always ≥ 1).
func matchAt(s string, i int) int {
	// 's|'t|'re|'ve|'m|'ll|'d (case-sensitive, even inside a word).
	if s[i] == '\'' && i+1 < len(s) {
		switch s[i+1] {
		case 's', 't', 'm', 'd':
			return 2
		case 'r', 'v':
			if i+2 < len(s) && s[i+2] == 'e' {
				return 3
			}
		case 'l':
			if i+2 < len(s) && s[i+2] == 'l' {
				return 3
			}
		}
	}
	// ` ?X+` for X = letters, numbers, other: an optional ASCII space, then
	// a run of one class.
	j := i
	if s[j] == ' ' && j+1 < len(s) {
		j++
	}
	_, w, cl := decodeAt(s, j)
	if cl != classSpace {
		j += w
		for j < len(s) {
			_, w, c := decodeAt(s, j)
			if c != cl {
				break
			}
			j += w
		}
		return j - i
	}
	// \s+(?!\S) | \s+ : a whitespace run; when a non-space follows it, its
	// last rune is left to start the next piece (so " word" keeps its space),
	// unless the run is a single rune.
	j = i
	last := 0
	for j < len(s) {
		_, w, c := decodeAt(s, j)
		if c != classSpace {
			break
		}
		last = w
		j += w
	}
	if j < len(s) && j-last > i {
		return j - last - i
	}
	return j - i
}
