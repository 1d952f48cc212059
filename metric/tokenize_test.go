package metric

import "testing"

func TestTokenize13aRules(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"spaces only", " \t\n ", ""},
		{"rule 1 skipped", "<skipped>word", "word"},
		{"rule 2 line hyphen", "hyphen-\nated", "hyphenated"},
		{"rule 3 newline", "two\nlines", "two lines"},
		{"rule 4 entities", "&quot;hi&quot; &amp; &lt;b&gt;", `" hi " & < b >`},
		{"rule 4 order amp-lt", "&amp;lt;", "<"},
		{"rule 4 order amp-quot", "&amp;quot;", "& quot ;"},
		{"rule 6 brackets", "(x) [y] {z}", "( x ) [ y ] { z }"},
		{"rule 6 symbols", "a/b@c:d;e?f!g", "a / b @ c : d ; e ? f ! g"},
		{"rule 6 apostrophe kept", "It wasn't", "It wasn't"},
		{"rule 7 period after word", "Hello, world.", "Hello , world ."},
		{"rule 7/8 decimal kept", "3.5 and 1,000.", "3.5 and 1,000 ."},
		{"rule 7 space then period", ".5 .x", ". 5 . x"},
		{"rule 7 abbreviation", "U.S.A.", "U . S . A ."},
		{"rule 7 non-overlap", "a..5", "a . .5"},
		{"rule 7 digit dots", "1..2", "1 . . 2"},
		{"rule 9 digit dash", "pages 3-4", "pages 3 - 4"},
		{"rule 9 word dash kept", "state-of-the-art", "state-of-the-art"},
		{"rule 9 leading minus kept", "-5", "-5"},
		{"rule 10 python whitespace", "a\x1cb\u00a0c\u3000d", "a b c d"},
		{"unicode digits are non-digits", "٣.", "٣ ."},
		{"unicode letters", "Straße café 東京.", "Straße café 東京 ."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Tokenize13a(tc.in); got != tc.want {
				t.Errorf("Tokenize13a(%q): got %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestTokenize13aPython compares with the same rules run by Python's re
// engine (testdata/nltk_vectors.py, section tokenize_13a).
func TestTokenize13aPython(t *testing.T) {
	v := loadNLTK(t)
	if len(v.Tokenize13a) < 100 {
		t.Fatalf("only %d tokenizer vectors", len(v.Tokenize13a))
	}
	for _, tc := range v.Tokenize13a {
		if got := Tokenize13a(tc.In); got != tc.Out {
			t.Errorf("Tokenize13a(%q): got %q, want %q (Python)", tc.In, got, tc.Out)
		}
	}
}
