package tokenizer

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// dialogTokenizer is trained once on the synthetic dialogue corpus and shared
// by the tests that only read it.
var dialogTokenizer = sync.OnceValues(func() (*Tokenizer, error) {
	cfg := DefaultTrainConfig()
	cfg.VocabSize = 512
	return Train(dialogCorpus(1, 1000), cfg)
})

func mustDialog(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := dialogTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// mergeStrings lists the merges as "left right" in the byte-level alphabet,
// as tokenizer.json spells them.
func mergeStrings(tok *Tokenizer) []string {
	var out []string
	for _, m := range tok.merges {
		out = append(out, vocabString(tok, int(m.left))+" "+vocabString(tok, int(m.right)))
	}
	return out
}

func TestTrainHandChecked(t *testing.T) {
	// Pieces: "ab", " ab", " ab", " cd", "\n" (×2) and "x".
	// Pair counts: (a,b) 3, ( ,a) 2, ( ,c) 1, (c,d) 1 → merge "a b" first;
	// then ( ,ab) 2 → merge "Ġ ab"; every other pair occurs once.
	cfg := DefaultTrainConfig()
	cfg.VocabSize = 300
	tok, err := Train([]string{"ab ab ab cd\n", "x\n"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a b", "Ġ ab"}
	if got := mergeStrings(tok); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("merges: got %q, want %q", got, want)
	}
	if got, want := tok.VocabSize(), 6+256+2; got != want {
		t.Errorf("VocabSize: got %d, want %d", got, want)
	}
	ab, sab := 6+256, 6+256+1
	if got, want := tok.Encode(" ab ab abc"), []int{sab, sab, sab, 6 + 'c'}; !equalInts(got, want) {
		t.Errorf("Encode: got %v, want %v", got, want)
	}
	if got, want := tok.Encode("ab"), []int{ab}; !equalInts(got, want) {
		t.Errorf("Encode(ab): got %v, want %v", got, want)
	}
	for i, name := range DefaultSpecials() {
		if id, ok := tok.SpecialID(name); !ok || id != i {
			t.Errorf("SpecialID(%s): got %d %v, want %d true", name, id, ok, i)
		}
	}
}

func TestTrainVocabSizeReached(t *testing.T) {
	tok := mustDialog(t)
	if got := tok.VocabSize(); got != 512 {
		t.Errorf("VocabSize: got %d, want 512", got)
	}
}

func TestTrainDeterministic(t *testing.T) {
	texts := dialogCorpus(3, 300)
	cfg := DefaultTrainConfig()
	cfg.VocabSize = 700
	a, err := Train(texts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Train(texts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Word counts do not depend on text order, so neither may the merges.
	shuffled := append([]string(nil), texts...)
	rand.New(rand.NewPCG(9, 9)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	c, err := Train(shuffled, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) || !a.Equal(b) {
		t.Error("two trainings on the same texts differ")
	}
	if !a.Equal(c) {
		t.Error("training on shuffled texts gives different merges")
	}
	cfg.VocabSize = 699
	d, _ := Train(texts, cfg)
	if a.Equal(d) {
		t.Error("Equal: tokenizers with different vocab sizes compare equal")
	}
}

// The merges Train learns must reproduce, through Encode, exactly the
// segmentation training ended with: otherwise the two BPE loops disagree.
func TestTrainMatchesEncode(t *testing.T) {
	texts := dialogCorpus(4, 200)
	cfg := DefaultTrainConfig()
	cfg.VocabSize = 600
	counts := map[string]int64{}
	for _, s := range texts {
		splitWords(s, cfg.SplitDigits, func(p string) { counts[p]++ })
	}
	tok, err := Train(texts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]int32{}
	for id, s := range tok.tokens {
		if !tok.special[id] {
			index[s] = int32(id)
		}
	}
	tr := newTrainer(counts, &index)
	for _, m := range tok.merges {
		tr.apply(pairKey(m.left, m.right), m.result)
	}
	for w, syms := range tr.words {
		var raw strings.Builder
		for _, id := range syms {
			raw.WriteString(tok.tokens[id])
		}
		got := tok.Encode(raw.String())
		if !equalInts(got, int32s(syms)) {
			t.Fatalf("word %d %q: Encode %v, training ended with %v", w, raw.String(), got, syms)
		}
	}
	if len(tr.words) != len(counts) {
		t.Fatalf("trainer holds %d words, want %d", len(tr.words), len(counts))
	}
}

func TestTrainConfigValidate(t *testing.T) {
	ok := DefaultTrainConfig()
	tests := []struct {
		name   string
		mutate func(*TrainConfig)
		want   string // "" for no error
	}{
		{"default", func(c *TrainConfig) {}, ""},
		{"vocab too small", func(c *TrainConfig) { c.VocabSize = 261 }, "VocabSize"},
		{"vocab just enough", func(c *TrainConfig) { c.VocabSize = 262 }, ""},
		{"vocab too large", func(c *TrainConfig) { c.VocabSize = MaxVocabSize + 1 }, "VocabSize"},
		{"min frequency", func(c *TrainConfig) { c.MinFrequency = 0 }, "MinFrequency"},
		{"empty special", func(c *TrainConfig) { c.Specials = []string{"<|a|>", ""} }, "Specials[1]"},
		{"repeated special", func(c *TrainConfig) { c.Specials = []string{"<|a|>", "<|a|>"} }, "Specials[1]"},
		{"invalid utf-8 special", func(c *TrainConfig) { c.Specials = []string{"\xff"} }, "Specials[0]"},
		{"no specials", func(c *TrainConfig) { c.Specials = nil; c.VocabSize = 256 }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mutate(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error naming %s", err, tc.want)
			}
			if _, terr := Train([]string{"a b"}, c); (terr == nil) != (err == nil) {
				t.Errorf("Train error %v disagrees with Validate %v", terr, err)
			}
		})
	}
}

// A learned token must never be spelt like a special token, or the two
// would collide in tokenizer.json's vocab.
func TestTrainAvoidsSpecialSpelling(t *testing.T) {
	cfg := DefaultTrainConfig()
	cfg.Specials = []string{"hello"}
	cfg.VocabSize = 300
	tok, err := Train(strings.Split(strings.Repeat("hello ", 50), " "), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for id, s := range tok.tokens {
		if !tok.special[id] && s == "hello" {
			t.Fatalf("id %d learned the special spelling %q", id, s)
		}
	}
	if got := tok.Decode(tok.Encode("hello")); got != "hello" {
		t.Errorf("round trip: got %q", got)
	}
	if _, err := Parse(tok.Bytes()); err != nil {
		t.Errorf("Parse of its own output: %v", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func int32s(xs []int32) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}
