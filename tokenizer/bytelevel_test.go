package tokenizer

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

func pieces(s string, digits bool) []string {
	var out []string
	splitWords(s, digits, func(p string) { out = append(out, p) })
	return out
}

// The expected splits follow Hugging Face's own ByteLevel and Digits tests
// (tokenizers/src/pre_tokenizers) and the GPT-2 pattern read by hand.
func TestSplitWords(t *testing.T) {
	tests := []struct {
		in     string
		digits bool
		want   []string
	}{
		{"Hello my friend, how is your day going?", false,
			[]string{"Hello", " my", " friend", ",", " how", " is", " your", " day", " going", "?"}},
		{"Hello there\nHello there", false, []string{"Hello", " there", "\n", "Hello", " there"}},
		{"Hello there       dear", false, []string{"Hello", " there", "      ", " dear"}},
		{"i⭢j", false, []string{"i", "⭢", "j"}},
		{"I'm don't we'll they've 'sam", false, []string{"I", "'m", " don", "'t", " we", "'ll", " they", "'ve", " '", "sam"}},
		{"x  \n\ty", false, []string{"x", "  \n", "\t", "y"}},
		{"end  ", false, []string{"end", "  "}},
		{" ", false, []string{" "}},
		{"a\tb", false, []string{"a", "\t", "b"}},
		{"costs $12.50!!", false, []string{"costs", " $", "12", ".", "50", "!!"}},
		{"Hey 123 friend!", true, []string{"Hey", " ", "1", "2", "3", " friend", "!"}},
		{"x=42", true, []string{"x", "=", "4", "2"}},
		{"½ and ٣", true, []string{"½", " and", " ", "٣"}},
		{"\xff\xfeab\x80", false, []string{"\xff\xfe", "ab", "\x80"}},
		{"<|end|>", false, []string{"<|", "end", "|>"}},
		{"", false, nil},
	}
	for _, tc := range tests {
		if got := pieces(tc.in, tc.digits); !slices.Equal(got, tc.want) {
			t.Errorf("splitWords(%q, digits=%v): got %q, want %q", tc.in, tc.digits, got, tc.want)
		}
	}
}

// Whatever the input, the pieces are non-empty and concatenate back to it.
func TestSplitWordsCovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		s := randomString(rng, 1+rng.IntN(40))
		for _, d := range []bool{false, true} {
			ps := pieces(s, d)
			for _, p := range ps {
				if p == "" {
					t.Fatalf("case %d: empty piece in %q", i, ps)
				}
			}
			if got := strings.Join(ps, ""); got != s {
				t.Fatalf("case %d: pieces of %q join to %q", i, s, got)
			}
		}
	}
}

func TestByteLevelAlphabet(t *testing.T) {
	seen := map[rune]bool{}
	for b := range 256 {
		r := byteToRune[b]
		if seen[r] {
			t.Fatalf("rune %U used twice", r)
		}
		seen[r] = true
	}
	for _, tc := range []struct {
		b    byte
		want rune
	}{{' ', 'Ġ'}, {'\n', 'Ċ'}, {'a', 'a'}, {0, 'Ā'}, {0xAD, 'Ń'}} {
		if got := byteToRune[tc.b]; got != tc.want {
			t.Errorf("byte 0x%02x: got %q, want %q", tc.b, got, tc.want)
		}
	}
	raw := []byte{0, ' ', 'z', 0xff, 0x80}
	if got, ok := byteLevelBytes(byteLevelString(raw)); !ok || string(got) != string(raw) {
		t.Errorf("byte-level round trip: got %q, want %q", got, raw)
	}
	if _, ok := byteLevelBytes("a b"); ok {
		t.Error("byteLevelBytes accepted a plain space")
	}
}

// randomString mixes the cases that break tokenizers: random bytes
// (invalid UTF-8), multi-byte runes, whitespace runs, apostrophes, digits,
// and special-token spellings.
func randomString(rng *rand.Rand, n int) string {
	atoms := []string{" ", "  ", "\n", "\t", "'", "'s", "a", "Z", "é", "你", "🙂", "1", "42", "\xff", "\xc3", "\x80",
		"<|end|>", "<|user|>", "<|", "|>", ".", "!?", "\u00a0", "\u2028", "½", "\x00", "the", " the"}
	var b strings.Builder
	for range n {
		switch rng.IntN(4) {
		case 0:
			b.WriteByte(byte(rng.IntN(256)))
		case 1:
			b.WriteRune(rune(rng.IntN(0x30000)))
		default:
			b.WriteString(atoms[rng.IntN(len(atoms))])
		}
	}
	return b.String()
}

// TestSplitGolden compares splitWords with the GPT-2 pattern itself, run by
// Python's regex module (testdata/gen_split_golden.py).
func TestSplitGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/split_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		In     string   `json:"in"`
		Pieces []string `json:"pieces"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 1000 {
		t.Fatalf("golden file holds %d cases, want ≥ 1000", len(cases))
	}
	bad := 0
	for _, c := range cases {
		if got := pieces(c.In, false); !slices.Equal(got, c.Pieces) {
			t.Errorf("splitWords(%q): got %q, want %q", c.In, got, c.Pieces)
			if bad++; bad > 10 {
				t.FailNow()
			}
		}
	}
}
