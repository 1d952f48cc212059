package metric

import (
	"math"
	"testing"
)

// Published sacreBLEU figures: the README example and the expected values
// of sacreBLEU's own test suite (test/test_bleu.py, test_sentence_bleu.py,
// test_chrf.py). Each tolerance is the precision the figure was published
// with.

// readmeHyps and readmeRefs are sacreBLEU's README example; refs[i] holds
// both references of segment i.
var (
	readmeHyps = []string{"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."}
	readmeRefs = [][]string{
		{"The dog bit the man.", "The dog had bit the man."},
		{"It was not unexpected.", "No one was surprised."},
		{"The man bit him first.", "The man had bitten the dog."},
	}
)

func TestSacreBLEUReadme(t *testing.T) {
	// BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)
	b, _ := NewBLEU(DefaultBLEUConfig())
	got, err := b.Corpus(readmeHyps, readmeRefs)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "bleu", got.Score, 48.530827, 1e-6)
	for i, want := range []float64{82.4, 50.0, 45.5, 37.5} {
		checkClose(t, "precision", got.Precisions[i], want, 0.05)
	}
	checkClose(t, "bp", got.BP, 0.943, 5e-4)
	if got.SysLen != 17 || got.RefLen != 18 {
		t.Errorf("lengths: got %d/%d, want 17/18", got.SysLen, got.RefLen)
	}

	for _, tc := range []struct {
		name string
		edit func(*BLEUConfig)
		want float64
	}{
		{"tokenize none", func(c *BLEUConfig) { c.Tokenizer = TokenizerNone }, 49.1919566},
		{"smooth none", func(c *BLEUConfig) { c.Smooth = SmoothNone }, 48.530827},
	} {
		cfg := DefaultBLEUConfig()
		tc.edit(&cfg)
		b, _ := NewBLEU(cfg)
		got, _ := b.Corpus(readmeHyps, readmeRefs)
		checkClose(t, tc.name, got.Score, tc.want, 1e-6)
	}

	empty, _ := b.Corpus([]string{"", "", ""}, readmeRefs)
	checkClose(t, "empty hyps", empty.Score, 0, 0)

	// chrF2 = 59.73
	c, _ := NewChrF(DefaultChrFConfig())
	gotC, _ := c.Corpus(readmeHyps, readmeRefs)
	checkClose(t, "chrf", gotC.Score, 59.73, 0.005)
}

func TestSacreBLEUSuiteBLEU(t *testing.T) {
	// raw_corpus_bleu: tokenize none, floor 0.01, effective order.
	raw := BLEUConfig{MaxOrder: 4, Smooth: SmoothFloor, SmoothValue: 0.01, EffectiveOrder: true, Tokenizer: TokenizerNone}
	for _, tc := range []struct {
		hyp, ref string
		want     float64 // 0–1, as published
	}{
		{"this is a test", "this is a test", 1.0},
		{"this is a fest", "this is a test", 0.223606797749979},
		{"test", "a test", 0.3678794411714425},
		{"a test", "a test", 1.0},
		{"a little test", "a test", 0.03218297948685433},
	} {
		b, _ := NewBLEU(raw)
		checkClose(t, tc.hyp, b.Sentence(tc.hyp, tc.ref).Score/100, tc.want, 1e-8)
	}

	b, _ := NewBLEU(raw)
	st := b.Stats("am I am a character sequence", "I am a symbol string sequence a a")
	if !equalInts(st.Correct, []int{4, 2, 1, 0}) || !equalInts(st.Total, []int{6, 5, 4, 3}) {
		t.Errorf("stats: got %v/%v, want [4 2 1 0]/[6 5 4 3]", st.Correct, st.Total)
	}
	offset := raw
	offset.SmoothValue = 0 // sacreBLEU's default floor, 0.1
	b, _ = NewBLEU(offset)
	checkClose(t, "floor default", b.Sentence("am I am a character sequence", "I am a symbol string sequence a a").Score/100, 0.1555722182, 1e-8)
	offset.Smooth = SmoothNone // sacreBLEU's floor 0.0
	b, _ = NewBLEU(offset)
	checkClose(t, "floor 0", b.Sentence("am I am a character sequence", "I am a symbol string sequence a a").Score, 0, 0)

	// compute_bleu([9,7,5,3], [10,8,6,4], 11, 11) with no smoothing.
	none, _ := NewBLEU(BLEUConfig{MaxOrder: 4, Smooth: SmoothNone, Tokenizer: Tokenizer13a})
	got := none.Score(BLEUStats{SysLen: 11, RefLen: 11, Correct: []int{9, 7, 5, 3}, Total: []int{10, 8, 6, 4}})
	checkClose(t, "compute_bleu", got.Score/100, 0.8375922397, 1e-8)

	// Degenerate statistics score exactly 0 (sacreBLEU's floor 0 is
	// SmoothNone here).
	for i, tc := range []struct {
		st     BLEUStats
		smooth Smoothing
		value  float64
	}{
		{BLEUStats{SysLen: 0, RefLen: 1, Correct: []int{0, 0, 0, 0}, Total: []int{4, 4, 2, 1}}, SmoothNone, 0},
		{BLEUStats{SysLen: 14, RefLen: 10, Correct: []int{0, 0, 0, 0}, Total: []int{10, 11, 12, 0}}, SmoothNone, 0},
		{BLEUStats{SysLen: 0, RefLen: 0, Correct: []int{0, 0, 0, 0}, Total: []int{0, 0, 0, 0}}, SmoothNone, 0},
		{BLEUStats{SysLen: 6, RefLen: 6, Correct: []int{6, 5, 4, 0}, Total: []int{6, 5, 4, 3}}, SmoothNone, 0},
		{BLEUStats{SysLen: 0, RefLen: 0, Correct: []int{0, 0, 0, 0}, Total: []int{0, 0, 0, 0}}, SmoothFloor, 0.1},
		{BLEUStats{SysLen: 1, RefLen: 5, Correct: []int{0, 0, 0, 0}, Total: []int{0, 0, 0, 0}}, SmoothFloor, 0.01},
	} {
		fl, _ := NewBLEU(BLEUConfig{MaxOrder: 4, Smooth: tc.smooth, SmoothValue: tc.value, Tokenizer: Tokenizer13a})
		if s := fl.Score(tc.st).Score; s != 0 {
			t.Errorf("degenerate %d: got %v, want 0", i, s)
		}
	}
}

func TestSacreBLEUSuiteSentenceBLEU(t *testing.T) {
	// Issue #98: t-cedilla (U+0163) in the reference, t-comma (U+021B) in
	// the hypothesis. sentence_bleu with effective order.
	const (
		ref = "producţia de zahăr brut se exprimă în zahăr alb;"
		sys = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"
	)
	for _, tc := range []struct {
		smooth Smoothing
		value  float64
		tok    Tokenizer
		want   float64
	}{
		{SmoothExp, 0, Tokenizer13a, 8.493},
		{SmoothNone, 0, Tokenizer13a, 0.0},
		{SmoothFloor, 0, Tokenizer13a, 4.51688},
		{SmoothFloor, 0.1, Tokenizer13a, 4.51688},
		{SmoothFloor, 0.5, Tokenizer13a, 10.10},
		{SmoothAddK, 0, Tokenizer13a, 14.882},
		{SmoothAddK, 1, Tokenizer13a, 14.882},
		{SmoothAddK, 2, Tokenizer13a, 21.389},
		{SmoothExp, 0, TokenizerNone, 7.347},
	} {
		b, err := NewBLEU(BLEUConfig{MaxOrder: 4, Smooth: tc.smooth, SmoothValue: tc.value, EffectiveOrder: true, Tokenizer: tc.tok})
		if err != nil {
			t.Fatal(err)
		}
		checkClose(t, string(tc.smooth)+"/"+string(tc.tok), b.Sentence(sys, ref).Score, tc.want, 1e-3)
	}
	// Issue #141: no match at all is 0 under every smoothing.
	for _, sm := range []Smoothing{SmoothExp, SmoothNone, SmoothFloor, SmoothAddK} {
		b, _ := NewBLEU(BLEUConfig{MaxOrder: 4, Smooth: sm, EffectiveOrder: true, Tokenizer: Tokenizer13a})
		checkClose(t, "zero "+string(sm), b.Sentence("this is a cat", "okay thanks").Score, 0, 0)
	}
}

func TestSacreBLEUSuiteChrF(t *testing.T) {
	type tc struct {
		hyps, refs []string
		want       float64
	}
	run := func(name string, cfg ChrFConfig, cases []tc) {
		c, err := NewChrF(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range cases {
			refs := make([][]string, len(k.refs))
			for i, r := range k.refs {
				refs[i] = []string{r}
			}
			got, err := c.Corpus(k.hyps, refs)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, name+" "+k.hyps[0], got.Score, k.want, 1e-4)
		}
	}
	const (
		risk    = " risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."
		riskRef = "risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."
		die     = " Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "
		dieRef  = "Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."
		nie     = "Niemand hat die Absicht, eine Mauer zu errichten"
	)
	eps := ChrFConfig{CharOrder: 6, Beta: 3, EpsSmoothing: true}
	run("eps", eps, []tc{
		{[]string{"abcdefg"}, []string{"hijklmnop"}, 0},
		{[]string{"a"}, []string{"b"}, 0},
		{[]string{""}, []string{"b"}, 0},
		{[]string{""}, []string{"ref"}, 0},
		{[]string{""}, []string{"reference"}, 0},
		{[]string{"aa"}, []string{"ab"}, 8.3333},
		{[]string{"a", "b"}, []string{"a", "c"}, 8.3333},
		{[]string{"a"}, []string{"a"}, 16.6667},
		{[]string{"a b c"}, []string{"a b c"}, 50},
		{[]string{"a b c"}, []string{"abc"}, 50},
		{[]string{risk}, []string{riskRef}, 63.361730},
		{[]string{die}, []string{dieRef}, 64.1302698},
		{[]string{nie}, []string{nie}, 100},
	})
	eff := ChrFConfig{CharOrder: 6, Beta: 3}
	run("effective", eff, []tc{
		{[]string{"a"}, []string{"a"}, 100},
		{[]string{""}, []string{"reference"}, 0},
		{[]string{"a b c"}, []string{"a b c"}, 100},
		{[]string{"a b c"}, []string{"abc"}, 100},
		{[]string{""}, []string{"c"}, 0},
		{[]string{"a", "b"}, []string{"a", "c"}, 50},
		{[]string{"aa"}, []string{"ab"}, 25},
	})
	ws := ChrFConfig{CharOrder: 6, Beta: 3, Whitespace: true}
	run("whitespace", ws, []tc{
		{[]string{"Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."}, []string{dieRef}, 67.3481606},
		{[]string{risk[1:]}, []string{riskRef}, 65.2414427},
	})

	// sentence_chrf(eps_smoothing=True), chrF2.
	sent := DefaultChrFConfig()
	sent.EpsSmoothing = true
	c, _ := NewChrF(sent)
	for _, k := range []tc{
		{[]string{"Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře."}, []string{"Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."}, 39.14078509},
		{[]string{"Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři."}, []string{"A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."}, 31.22557079},
		{[]string{"Lapali po dechu, jejich životy skončily dřív, než skutečně začaly."}, []string{"Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."}, 57.15704367},
	} {
		checkClose(t, "sentence "+k.hyps[0], c.Sentence(k.hyps[0], k.refs[0]).Score, k.want, 1e-4)
	}
}

func checkClose(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s: got %.10g, want %.10g (±%g)", name, got, want, tol)
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
