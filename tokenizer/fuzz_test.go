package tokenizer

import (
	"bytes"
	"strings"
	"testing"
)

func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "hello world", "\xff\xfe\x00", "<|end|>", "  \n\t x", "'s 're 123", "你好🙂", strings.Repeat("ab", 40)} {
		f.Add(s)
	}
	tok := mustDialog(f)
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		if got := tok.Decode(ids); got != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, got)
		}
		for _, id := range ids {
			if tok.IsSpecial(id) {
				t.Fatalf("Encode(%q) produced special id %d", s, id)
			}
		}
		if got := tok.Decode(tok.EncodeWithSpecials(s)); got != s {
			t.Fatalf("Decode(EncodeWithSpecials(%q)) = %q", s, got)
		}
	})
}

// FuzzParse feeds Parse outside input: it must never panic, and whatever it
// accepts must save and parse back to an equal tokenizer that round-trips
// text. The seeds are ~5 KB files and Go spends up to a minute minimizing
// each new input by default, which stalls the fuzzer; run it with
//
//	go test -run '^$' -fuzz FuzzParse -fuzzminimizetime 20x ./tokenizer
func FuzzParse(f *testing.F) {
	hand := handTokenizer(f, false).Bytes()
	f.Add(hand)
	f.Add(handTokenizer(f, true).Bytes())
	f.Add(bytes.Replace(hand, []byte(`"a b"`), []byte(`["a", "b"]`), 1))
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {}, "merges": []}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := Parse(data)
		if err != nil {
			return
		}
		again, err := Parse(tok.Bytes())
		if err != nil {
			t.Fatalf("Parse(Bytes()) of an accepted file: %v", err)
		}
		if !again.Equal(tok) {
			t.Fatal("Parse(Bytes()) differs")
		}
		for _, s := range []string{"ab ab cd", "\xff x 12", "<|end|>"} {
			if got := tok.Decode(tok.Encode(s)); got != s {
				t.Fatalf("round trip of %q: got %q", s, got)
			}
		}
	})
}
