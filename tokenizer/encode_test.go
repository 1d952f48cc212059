package tokenizer

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	tok := mustDialog(t)
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []string{
		"", " ", "\n\n", "a", "\xff", "\xc3\x28", "\xed\xa0\x80", "\x00\x01\x02", "héllo wörld 你好 🙂",
		strings.Repeat("a", 5000), strings.Repeat(" ", 300) + "x", strings.Repeat("ab", 1000),
		strings.Repeat("\xff\xfe", 500), strings.Repeat("<|end|>", 30), "The answer is \\boxed{42}.",
	}
	for range 3000 {
		cases = append(cases, randomString(rng, rng.IntN(60)))
	}
	cases = append(cases, dialogCorpus(77, 50)...)
	for i, s := range cases {
		ids := tok.Encode(s)
		if got := tok.Decode(ids); got != s {
			t.Fatalf("case %d: Decode(Encode(%q)) = %q", i, s, got)
		}
		for _, id := range ids {
			if id < 0 || id >= tok.VocabSize() || tok.IsSpecial(id) {
				t.Fatalf("case %d: Encode(%q) gave id %d (special or out of range)", i, s, id)
			}
		}
	}
}

// Plain text that spells special tokens must encode as text.
func TestSpecialsNotFromText(t *testing.T) {
	tok := mustDialog(t)
	for _, name := range DefaultSpecials() {
		for _, s := range []string{name, "x" + name + "y", " " + name + name, strings.Repeat(name, 5)} {
			for _, id := range tok.Encode(s) {
				if tok.IsSpecial(id) {
					t.Errorf("Encode(%q) produced special id %d (%s)", s, id, tok.tokens[id])
				}
			}
		}
	}
}

func TestEncodeWithSpecials(t *testing.T) {
	tok := mustDialog(t)
	user, _ := tok.SpecialID(User)
	end, _ := tok.SpecialID(End)
	tests := []struct {
		in   string
		want []int
	}{
		{"<|user|>hi<|end|>", concat([]int{user}, tok.Encode("hi"), []int{end})},
		{"<|end|><|end|>", []int{end, end}},
		{"a <|end|", tok.Encode("a <|end|")},
		{"", nil},
		{"x<|user|>", concat(tok.Encode("x"), []int{user})},
	}
	for _, tc := range tests {
		got := tok.EncodeWithSpecials(tc.in)
		if !equalInts(got, tc.want) {
			t.Errorf("EncodeWithSpecials(%q): got %v, want %v", tc.in, got, tc.want)
		}
		if back := tok.Decode(got); back != tc.in {
			t.Errorf("Decode(EncodeWithSpecials(%q)) = %q", tc.in, back)
		}
	}
}

func TestEncodeWithSpecialsLongestWins(t *testing.T) {
	cfg := DefaultTrainConfig()
	cfg.Specials = []string{"<a>", "<a>b"}
	cfg.VocabSize = 258
	tok, err := Train(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tok.EncodeWithSpecials("<a>b<a>"), []int{1, 0}; !equalInts(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// bpeHeap (used for long pieces) must agree with the plain loop.
func TestBPEHeapMatchesScan(t *testing.T) {
	tok := mustDialog(t)
	rng := rand.New(rand.NewPCG(3, 4))
	words := strings.Fields(strings.Join(dialogCorpus(8, 30), " "))
	for i := range 500 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(words[rng.IntN(len(words))])
		}
		if i%5 == 0 {
			b.WriteString(randomString(rng, 10))
		}
		s := b.String()
		syms := func() []int32 {
			out := make([]int32, len(s))
			for j := 0; j < len(s); j++ {
				out[j] = tok.byteID[s[j]]
			}
			return out
		}
		got, want := tok.bpeHeap(syms()), tok.bpeScan(syms())
		if !equalInts(int32s(got), int32s(want)) {
			t.Fatalf("%q: bpeHeap %v, bpeScan %v", s, got, want)
		}
	}
}

func TestDecodeSkipsUnknownIDs(t *testing.T) {
	tok := mustDialog(t)
	a := tok.Encode("a")[0]
	if got := tok.Decode([]int{-1, a, tok.VocabSize(), a}); got != "aa" {
		t.Errorf("got %q, want %q", got, "aa")
	}
}

func TestConcurrentEncode(t *testing.T) {
	cfg := DefaultTrainConfig()
	cfg.VocabSize = 400
	tok, err := Train(dialogCorpus(11, 200), cfg)
	if err != nil {
		t.Fatal(err)
	}
	texts := dialogCorpus(12, 40)
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Go(func() {
			for i := range texts {
				s := texts[(i+g)%len(texts)]
				if tok.Decode(tok.Encode(s)) != s {
					errs <- s
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for s := range errs {
		t.Errorf("concurrent round trip failed on %q", s)
	}
}

func concat(xs ...[]int) []int {
	var out []int
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}
