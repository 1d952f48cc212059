package metric

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"", " ", "a", "Hello, world.", "3.5-4 (x) &amp;lt; <skipped>", "a..5 U.S.A.",
	"hyphen-\nated\r\n", "Привет, мир! 東京。", "\x1c\x1f\u00a0", "\xff\xfe", "end-\n",
	strings.Repeat("the cat sat on the mat. ", 10),
}

func FuzzTokenize13a(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Tokenize13a(s)
		if strings.HasPrefix(out, " ") || strings.HasSuffix(out, " ") || strings.Contains(out, "  ") {
			t.Fatalf("Tokenize13a(%q) = %q: stray spaces", s, out)
		}
		for _, r := range out {
			if r != ' ' && isPySpace(r) {
				t.Fatalf("Tokenize13a(%q) = %q: whitespace %U inside a token", s, out, r)
			}
		}
		if !utf8.ValidString(out) {
			t.Fatalf("Tokenize13a(%q) = %q: invalid UTF-8", s, out)
		}
		// Blank input has no tokens.
		if strings.TrimFunc(s, isPySpace) == "" && out != "" {
			t.Fatalf("Tokenize13a(%q) = %q: blank input gave tokens", s, out)
		}
	})
}

func FuzzSentenceBLEU(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "the cat sat on a mat.")
		f.Add(s, s)
	}
	cfgs := []BLEUConfig{DefaultSentenceBLEUConfig(), DefaultBLEUConfig(),
		{MaxOrder: 4, Smooth: SmoothFloor, EffectiveOrder: true, Tokenizer: Tokenizer13a},
		{MaxOrder: 4, Smooth: SmoothAddK, Tokenizer: TokenizerNone, Lowercase: true}}
	f.Fuzz(func(t *testing.T, hyp, ref string) {
		for _, cfg := range cfgs {
			b, err := NewBLEU(cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := b.Sentence(hyp, ref)
			if math.IsNaN(s.Score) || s.Score < 0 || s.Score > 100 || math.IsNaN(s.BP) || s.BP < 0 || s.BP > 1 {
				t.Fatalf("%+v: BLEU(%q, %q) = %+v", cfg, hyp, ref, s)
			}
			for _, p := range s.Precisions {
				if math.IsNaN(p) || p < 0 || p > 100 {
					t.Fatalf("%+v: BLEU(%q, %q) precision %v", cfg, hyp, ref, p)
				}
			}
		}
		// Identical non-empty text scores 100 at sentence level.
		if s := SentenceBLEU(hyp, hyp); Tokenize13a(pyRStrip(hyp)) != "" && s != 100 {
			t.Fatalf("SentenceBLEU(%q, itself) = %v, want 100", hyp, s)
		}
	})
}

func FuzzSentenceChrF(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "the cat sat on a mat.")
		f.Add(s, s)
	}
	cfgs := []ChrFConfig{DefaultChrFConfig(), DefaultChrFPlusPlusConfig(),
		{CharOrder: 6, Beta: 2, EpsSmoothing: true},
		{CharOrder: 4, WordOrder: 2, Beta: 1, Whitespace: true, Lowercase: true}}
	f.Fuzz(func(t *testing.T, hyp, ref string) {
		for _, cfg := range cfgs {
			c, err := NewChrF(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if s := c.Sentence(hyp, ref).Score; math.IsNaN(s) || s < 0 || s > 100 {
				t.Fatalf("%+v: chrF(%q, %q) = %v", cfg, hyp, ref, s)
			}
		}
		// Identical text with any non-whitespace scores 100 (default chrF;
		// with EpsSmoothing short texts stay below 100 by design).
		if s := SentenceChrF(hyp, hyp); strings.TrimFunc(hyp, isPySpace) != "" && s != 100 {
			t.Fatalf("SentenceChrF(%q, itself) = %v, want 100", hyp, s)
		}
	})
}
