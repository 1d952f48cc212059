package metric

import (
	"errors"
	"math"
	"testing"
)

// fBeta2 is chrF2's F-score of an average precision p and recall r.
func fBeta2(p, r float64) float64 { return 100 * 5 * p * r / (4*p + r) }

func TestChrFHandWorked(t *testing.T) {
	// "the cat." vs "the cat": characters "thecat." / "thecat" give
	// precisions 6/7 5/6 4/5 3/4 2/3 1/2 and recall 1 at orders 1–6; words
	// the cat . / the cat give 2/3 and 1/2 with recall 1.
	charP := (6.0/7 + 5.0/6 + 4.0/5 + 3.0/4 + 2.0/3 + 1.0/2) / 6
	ppP := (6.0/7 + 5.0/6 + 4.0/5 + 3.0/4 + 2.0/3 + 1.0/2 + 2.0/3 + 1.0/2) / 8
	eps := DefaultChrFConfig()
	eps.EpsSmoothing = true
	for _, tc := range []struct {
		name     string
		cfg      ChrFConfig
		hyp, ref string
		want     float64
	}{
		{"identical", DefaultChrFConfig(), "ab", "ab", 100},
		// Unigrams a:2 vs a,b: P = R = 1/2; bigram aa vs ab: 0. Average
		// over the two orders: 1/4.
		{"aa ab", DefaultChrFConfig(), "aa", "ab", 25},
		// 1-grams 2/3 both ways, 2-grams 1/2, 3-grams 0; average 7/18.
		{"abc abd", DefaultChrFConfig(), "abc", "abd", 100 * 7.0 / 18},
		// Whitespace is removed before counting.
		{"spaces", DefaultChrFConfig(), "a b c", "abc", 100},
		// Code points, not bytes: 3/4, 2/3, 1/2, 0/1 at orders 1–4.
		{"accent", DefaultChrFConfig(), "café", "cafe", fBeta2(23.0/48, 23.0/48)},
		{"chrF trailing period", DefaultChrFConfig(), "the cat.", "the cat", fBeta2(charP, 1)},
		{"chrF++ trailing period", DefaultChrFPlusPlusConfig(), "the cat.", "the cat", fBeta2(ppP, 1)},
		// eps: order 1 has F = 1, orders 2–6 have no n-grams on either side
		// and contribute ε each: (1 + 5ε)/6.
		{"eps one char", eps, "a", "a", 100 * (1 + 5e-16) / 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewChrF(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, "score", c.Sentence(tc.hyp, tc.ref).Score, tc.want, 1e-10)
		})
	}
}

func TestChrFWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"the cat.", []string{"the", "cat", "."}},
		{"(hi) there", []string{"(hi", ")", "there"}}, // one mark only, as sacreBLEU
		{"\"quoted", []string{"\"", "quoted"}},
		{". , x", []string{".", ",", "x"}},
		{"café! naïve", []string{"café", "!", "naïve"}},
		{"—dash", []string{"—dash"}}, // not ASCII punctuation
		{"", nil},
	} {
		got := chrfWords(tc.in)
		if len(got) != len(tc.want) {
			t.Errorf("chrfWords(%q): got %q, want %q", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("chrfWords(%q): got %q, want %q", tc.in, got, tc.want)
				break
			}
		}
	}
}

func TestChrFEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name, hyp, ref string
		want           float64
	}{
		{"both empty", "", "", 0},
		{"both blank", "  \n", "\t", 0},
		{"empty hyp", "", "abc", 0},
		{"empty ref", "abc", "", 0},
		{"one char same", "a", "a", 100},
		{"one word differs", "cat", "dog", 0},
		{"unicode same", "東京 Привет", "東京Привет", 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkClose(t, "sentence", SentenceChrF(tc.hyp, tc.ref), tc.want, 1e-10)
		})
	}
	texts := []string{"", " ", "a", "ab", "a b c d e f g", "x."}
	for _, cfg := range []ChrFConfig{
		DefaultChrFConfig(), DefaultChrFPlusPlusConfig(),
		{CharOrder: 6, Beta: 2, EpsSmoothing: true},
		{CharOrder: 6, WordOrder: 2, Beta: 3, Whitespace: true, EpsSmoothing: true},
		{WordOrder: 1, Beta: 1},
	} {
		c, err := NewChrF(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range texts {
			for _, r := range texts {
				s := c.Sentence(h, r).Score
				if math.IsNaN(s) || s < 0 || s > 100 {
					t.Errorf("%+v %q/%q: score %v", cfg, h, r, s)
				}
			}
		}
		// With EpsSmoothing each empty order adds ε, so "0" is 1e-14 there.
		if s := c.Sentence("abc").Score; s > 1e-12 {
			t.Errorf("no reference: got %v, want 0 (ε-sized with EpsSmoothing)", s)
		}
	}
}

func TestChrFCorpusAndMultiRef(t *testing.T) {
	c, _ := NewChrF(DefaultChrFConfig())
	// Corpus sums statistics: "aa"/"ab" and "ab"/"ab" give unigrams 3/4
	// both ways and bigrams 1/2: average 5/8.
	got, err := c.Corpus([]string{"aa", "ab"}, [][]string{{"ab"}, {"ab"}})
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "corpus", got.Score, 100*5.0/8, 1e-10)
	if _, err := c.Corpus([]string{"a"}, nil); !errors.Is(err, ErrLengthMismatch) {
		t.Errorf("mismatch: got %v, want ErrLengthMismatch", err)
	}
	// Several references: the best one's statistics are kept.
	best := c.Sentence("abc", "xyz", "abc")
	if best.Score != 100 || best.Stats.Match[0] != 3 {
		t.Errorf("multi-ref: got %+v, want 100 from the second reference", best)
	}
}

func TestChrFConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  ChrFConfig
	}{
		{"zero", ChrFConfig{}},
		{"no orders", ChrFConfig{Beta: 2}},
		{"negative order", ChrFConfig{CharOrder: -1, WordOrder: 2, Beta: 2}},
		{"huge order", ChrFConfig{CharOrder: 100, Beta: 2}},
		{"beta 0", ChrFConfig{CharOrder: 6}},
		{"beta nan", ChrFConfig{CharOrder: 6, Beta: math.NaN()}},
		{"beta inf", ChrFConfig{CharOrder: 6, Beta: math.Inf(1)}},
	} {
		if _, err := NewChrF(tc.cfg); err == nil {
			t.Errorf("%s: got nil error, want one", tc.name)
		}
	}
	if err := DefaultChrFPlusPlusConfig().Validate(); err != nil {
		t.Errorf("chrF++ default: %v", err)
	}
}
