package metric

import (
	"errors"
	"math"
	"testing"
)

// Cases worked on paper; the comment on each gives the arithmetic.
func TestBLEUHandWorked(t *testing.T) {
	sentence := DefaultSentenceBLEUConfig()
	corpus := DefaultBLEUConfig()
	addK := sentence
	addK.Smooth = SmoothAddK
	floor := sentence
	floor.Smooth = SmoothFloor
	for _, tc := range []struct {
		name      string
		cfg       BLEUConfig
		hyp, ref  string
		want      float64
		counts    []int
		totals    []int
		bp        float64
		sys, refN int
	}{
		// the:min(2,1) cat sat on mat = 5/6; bigrams the-cat cat-sat sat-on
		// = 3/5; trigrams 2/4; 4-grams 1/3. (5/6·3/5·2/4·1/3)^¼ = (1/12)^¼.
		{"cat", sentence, "the cat sat on the mat", "the cat sat on a mat",
			100 * math.Pow(1.0/12, 0.25), []int{5, 3, 2, 1}, []int{6, 5, 4, 3}, 1, 6, 6},
		// 3/4, 1/3, then no trigram match: exp gives 1/(2·2), no 4-gram
		// match: 1/(4·1). (3/4·1/3·1/4·1/4)^¼ = (1/64)^¼.
		{"exp smoothing", sentence, "a b c d", "a b x d",
			100 * math.Pow(1.0/64, 0.25), []int{3, 1, 0, 0}, []int{4, 3, 2, 1}, 1, 4, 4},
		// add-k 1 on orders ≥ 2: 3/4, 2/4, 1/3, 1/2; product 1/16, ^¼ = 1/2.
		{"add-k", addK, "a b c d", "a b x d", 50, []int{3, 1, 0, 0}, []int{4, 3, 2, 1}, 1, 4, 4},
		// floor 0.1: 3/4, 1/3, 0.1/2, 0.1/1; product 0.00125.
		{"floor", floor, "a b c d", "a b x d",
			100 * math.Pow(0.00125, 0.25), []int{3, 1, 0, 0}, []int{4, 3, 2, 1}, 1, 4, 4},
		// Effective order 3: all precisions 100; BP = exp(1 − 5/3).
		{"brevity", sentence, "a b c", "a b c d e",
			100 * math.Exp(-2.0/3), []int{3, 2, 1, 0}, []int{3, 2, 1, 0}, math.Exp(-2.0 / 3), 3, 5},
		// Without effective order the empty 4-gram order makes it 0.
		{"brevity corpus", corpus, "a b c", "a b c d e", 0, []int{3, 2, 1, 0}, []int{3, 2, 1, 0}, math.Exp(-2.0 / 3), 3, 5},
		// 13a splits the period: "it ends ." has 3 tokens.
		{"tokenised", sentence, "It ends.", "It ends.", 100, []int{3, 2, 1, 0}, []int{3, 2, 1, 0}, 1, 3, 3},
		// Longer hypothesis: BP 1; 2/3, 1/2, and the trigram order (1 total,
		// no match) smoothed to 1/2: (2/3·1/2·1/2)^⅓ = (1/6)^⅓.
		{"long hyp", sentence, "a b c", "a b", 100 * math.Cbrt(1.0/6), []int{2, 1, 0, 0}, []int{3, 2, 1, 0}, 1, 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewBLEU(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := b.Sentence(tc.hyp, tc.ref)
			checkClose(t, "score", got.Score, tc.want, 1e-10)
			checkClose(t, "bp", got.BP, tc.bp, 1e-12)
			if !equalInts(got.Counts, tc.counts) || !equalInts(got.Totals, tc.totals) {
				t.Errorf("stats: got %v/%v, want %v/%v", got.Counts, got.Totals, tc.counts, tc.totals)
			}
			if got.SysLen != tc.sys || got.RefLen != tc.refN {
				t.Errorf("lengths: got %d/%d, want %d/%d", got.SysLen, got.RefLen, tc.sys, tc.refN)
			}
		})
	}
}

func TestBLEUCorpusSumsStatistics(t *testing.T) {
	// Summed counts [8 4 2 1] over totals [10 8 6 4]:
	// (0.8·0.5·(1/3)·0.25)^¼ = (1/30)^¼, not the mean of the two sentences.
	hyps := []string{"the cat sat on the mat", "a b c d"}
	refs := []string{"the cat sat on a mat", "a b x d"}
	got, err := CorpusBLEU(hyps, refs)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "corpus", got, 100*math.Pow(1.0/30, 0.25), 1e-10)
	mean := (SentenceBLEU(hyps[0], refs[0]) + SentenceBLEU(hyps[1], refs[1])) / 2
	if math.Abs(mean-got) < 1 {
		t.Errorf("corpus BLEU %v should differ from the sentence mean %v", got, mean)
	}
	if _, err := CorpusBLEU(hyps, refs[:1]); !errors.Is(err, ErrLengthMismatch) {
		t.Errorf("mismatch: got %v, want ErrLengthMismatch", err)
	}
}

func TestBLEUMultiReference(t *testing.T) {
	b, _ := NewBLEU(DefaultSentenceBLEUConfig())
	// Closest reference length to 3 among 2 and 4 is a tie: the shorter wins.
	got := b.Sentence("a b c", "a b", "a b c d")
	if got.RefLen != 2 || got.BP != 1 {
		t.Errorf("tie: got ref len %d bp %v, want 2 and 1", got.RefLen, got.BP)
	}
	// Clipping takes the maximum count over references: "x x" appears
	// twice only in the second.
	got = b.Sentence("x x", "x y", "x x")
	if got.Counts[0] != 2 || got.Counts[1] != 1 {
		t.Errorf("clip: got counts %v, want [2 1 ...]", got.Counts)
	}
	if s := b.Sentence("x y z", "q", "x y z").Score; s != 100 {
		t.Errorf("a matching second reference: got %v, want 100", s)
	}
}

// Degenerate inputs are defined (sacreBLEU's behaviour) and never NaN.
func TestBLEUEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name, hyp, ref string
		sentence       float64
		corpus         float64
	}{
		{"both empty", "", "", 0, 0},
		{"both blank", " \n\t", "  ", 0, 0},
		{"empty hyp", "", "a b c", 0, 0},
		{"empty ref", "a b c", "", 0, 0},
		{"one word same", "hello", "hello", 100, 0}, // corpus: no 2-grams, 0
		{"one word differs", "hello", "world", 0, 0},
		{"one word vs two", "hello", "hello world", 100 * math.Exp(-1), 0},
		{"unicode same", "Привет, мир! 東京。", "Привет, мир! 東京。", 100, 100},
		{"punctuation only", "...", "...", 100, 0}, // ". . ." is 3 tokens
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkClose(t, "sentence", SentenceBLEU(tc.hyp, tc.ref), tc.sentence, 1e-10)
			got, err := CorpusBLEU([]string{tc.hyp}, []string{tc.ref})
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, "corpus", got, tc.corpus, 1e-10)
		})
	}
	// Every smoothing and order setting on every degenerate pair: in range.
	texts := []string{"", " ", "a", "a b", "a b c d e", "x"}
	for _, sm := range []Smoothing{SmoothExp, SmoothFloor, SmoothAddK, SmoothNone} {
		for _, eff := range []bool{false, true} {
			b, _ := NewBLEU(BLEUConfig{MaxOrder: 4, Smooth: sm, EffectiveOrder: eff, Tokenizer: Tokenizer13a})
			for _, h := range texts {
				for _, r := range texts {
					s := b.Sentence(h, r)
					if math.IsNaN(s.Score) || s.Score < 0 || s.Score > 100 || math.IsNaN(s.BP) {
						t.Errorf("%s eff=%v %q/%q: score %v bp %v", sm, eff, h, r, s.Score, s.BP)
					}
				}
			}
			if s := b.Sentence("a b"); s.Score != 0 || s.RefLen != 0 {
				t.Errorf("no reference: got %+v, want score 0 against an empty reference", s)
			}
		}
	}
}

func TestBLEUOptions(t *testing.T) {
	cfg := DefaultSentenceBLEUConfig()
	b, _ := NewBLEU(cfg)
	if s := b.Sentence("The Cat", "the cat").Score; s != 0 {
		t.Errorf("case-sensitive: got %v, want 0", s)
	}
	cfg.Lowercase = true
	b, _ = NewBLEU(cfg)
	if s := b.Sentence("The Cat", "the cat").Score; s != 100 {
		t.Errorf("lowercase: got %v, want 100", s)
	}
	// sacreBLEU strips trailing whitespace before 13a, so a final "-\n" is
	// not a line-end hyphen: "end-" stays one token, unlike Tokenize13a.
	b, _ = NewBLEU(DefaultSentenceBLEUConfig())
	if s := b.Sentence("end-\n", "end-"); s.Score != 100 || s.SysLen != 1 {
		t.Errorf("rstrip: got %+v, want 100 with 1 token", s)
	}
	if got := Tokenize13a("end-\n"); got != "end" {
		t.Errorf("Tokenize13a(end-\\n): got %q, want %q", got, "end")
	}
	// A shorter maximum order.
	cfg = DefaultBLEUConfig()
	cfg.MaxOrder = 2
	b, _ = NewBLEU(cfg)
	checkClose(t, "order 2", b.Sentence("a b c", "a b x").Score, 100*math.Sqrt(2.0/3*1.0/2), 1e-10)
}

func TestBLEUConfigValidate(t *testing.T) {
	if err := DefaultBLEUConfig().Validate(); err != nil {
		t.Errorf("default: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*BLEUConfig)
	}{
		{"order 0", func(c *BLEUConfig) { c.MaxOrder = 0 }},
		{"order 99", func(c *BLEUConfig) { c.MaxOrder = 99 }},
		{"smoothing", func(c *BLEUConfig) { c.Smooth = "laplace" }},
		{"negative value", func(c *BLEUConfig) { c.SmoothValue = -1 }},
		{"nan value", func(c *BLEUConfig) { c.SmoothValue = math.NaN() }},
		{"tokenizer", func(c *BLEUConfig) { c.Tokenizer = "intl" }},
		{"zero value", func(c *BLEUConfig) { *c = BLEUConfig{} }},
	} {
		cfg := DefaultBLEUConfig()
		tc.edit(&cfg)
		if _, err := NewBLEU(cfg); err == nil {
			t.Errorf("%s: got nil error, want one", tc.name)
		}
	}
}
