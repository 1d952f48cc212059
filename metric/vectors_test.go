package metric

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// nltkVectors mirrors testdata/nltk_vectors.json, written by
// testdata/nltk_vectors.py from Debian's NLTK.
type nltkVectors struct {
	NLTKVersion string  `json:"nltk_version"`
	Tolerance   float64 `json:"tolerance"`
	Sentences   []struct {
		Hyp             []string   `json:"hyp"`
		Refs            [][]string `json:"refs"`
		SentenceBLEU    float64    `json:"sentence_bleu"`
		SentenceChrFEps *float64   `json:"sentence_chrf_eps"`
		CountsChrF      *float64   `json:"counts_chrf"`
		CountsChrFPP    *float64   `json:"counts_chrfpp"`
	} `json:"sentences"`
	Corpora []struct {
		Hyps               []string     `json:"-"`
		HypToks            [][]string   `json:"hyps"`
		Refs               [][][]string `json:"refs"`
		CorpusBLEU         float64      `json:"corpus_bleu"`
		CorpusChrFMacroEps *float64     `json:"corpus_chrf_macro_eps"`
		CountsCorpusChrF   *float64     `json:"counts_corpus_chrf"`
	} `json:"corpora"`
	Tokenize13a []struct {
		In  string `json:"in"`
		Out string `json:"out"`
	} `json:"tokenize_13a"`
	BLEUDiffers []struct {
		HypToks    [][]string   `json:"hyps"`
		Refs       [][][]string `json:"refs"`
		CorpusBLEU float64      `json:"corpus_bleu"`
	} `json:"bleu_differs"`
}

func loadNLTK(t *testing.T) nltkVectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/nltk_vectors.json")
	if err != nil {
		t.Fatalf("read vectors: %v", err)
	}
	var v nltkVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("parse vectors: %v", err)
	}
	if len(v.Sentences) < 100 || len(v.Corpora) < 10 || v.Tolerance <= 0 || v.Tolerance > 1e-6 {
		t.Fatalf("vectors look truncated: %d sentences, %d corpora, tolerance %g", len(v.Sentences), len(v.Corpora), v.Tolerance)
	}
	return v
}

func joinAll(toks [][]string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = strings.Join(t, " ")
	}
	return out
}

// maxDelta tracks the largest disagreement per figure for the log.
type maxDelta map[string]float64

func (m maxDelta) check(t *testing.T, name, where string, got, want, tol float64) {
	t.Helper()
	d := math.Abs(got - want)
	if d > m[name] {
		m[name] = d
	}
	if !(d <= tol) {
		t.Errorf("%s %s: got %.12f, want %.12f (NLTK), |Δ| %.3g > %.3g", name, where, got, want, d, tol)
	}
}

func TestNLTKVectors(t *testing.T) {
	v := loadNLTK(t)
	tol := v.Tolerance
	sb, _ := NewBLEU(DefaultSentenceBLEUConfig())
	cb, _ := NewBLEU(DefaultBLEUConfig())
	ce := DefaultChrFConfig()
	ce.EpsSmoothing = true
	chrfEps, _ := NewChrF(ce)
	chrf, _ := NewChrF(DefaultChrFConfig())
	chrfpp, _ := NewChrF(DefaultChrFPlusPlusConfig())
	md := maxDelta{}

	for i, s := range v.Sentences {
		hyp := strings.Join(s.Hyp, " ")
		refs := joinAll(s.Refs)
		// The vectors are pre-tokenised: 13a must leave them alone, or NLTK
		// and this package would be scoring different words.
		for _, text := range append([]string{hyp}, refs...) {
			if got := Tokenize13a(text); got != text {
				t.Fatalf("sentence %d: 13a changed pre-tokenised %q into %q", i, text, got)
			}
		}
		where := "sentence " + strconv.Itoa(i)
		md.check(t, "sentence_bleu", where, sb.Sentence(hyp, refs...).Score, s.SentenceBLEU, tol)
		if s.SentenceChrFEps != nil {
			md.check(t, "sentence_chrf_eps", where, chrfEps.Sentence(hyp, refs[0]).Score, *s.SentenceChrFEps, tol)
			md.check(t, "counts_chrf", where, chrf.Sentence(hyp, refs[0]).Score, *s.CountsChrF, tol)
			md.check(t, "counts_chrfpp", where, chrfpp.Sentence(hyp, refs[0]).Score, *s.CountsChrFPP, tol)
		}
	}

	for i, c := range v.Corpora {
		hyps := joinAll(c.HypToks)
		refs := make([][]string, len(c.Refs))
		for j, r := range c.Refs {
			refs[j] = joinAll(r)
		}
		where := "corpus " + strconv.Itoa(i)
		got, err := cb.Corpus(hyps, refs)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		md.check(t, "corpus_bleu", where, got.Score, c.CorpusBLEU, tol)
		if c.CorpusChrFMacroEps != nil {
			// NLTK's corpus_chrf is the mean of sentence scores.
			mean := 0.0
			for j, h := range hyps {
				mean += chrfEps.Sentence(h, refs[j][0]).Score
			}
			mean /= float64(len(hyps))
			md.check(t, "corpus_chrf_macro_eps", where, mean, *c.CorpusChrFMacroEps, tol)
			gotC, err := chrf.Corpus(hyps, refs)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			md.check(t, "counts_corpus_chrf", where, gotC.Score, *c.CountsCorpusChrF, tol)
		}
	}

	// Where NLTK and sacreBLEU disagree by design: NLTK floors each
	// segment's n-gram total at 1, so a hypothesis shorter than n adds a
	// phantom n-gram of order n. Applying that floor to this package's
	// statistics must give NLTK's figure, and without it the score differs.
	for i, c := range v.BLEUDiffers {
		hyps := joinAll(c.HypToks)
		total := BLEUStats{Correct: make([]int, 4), Total: make([]int, 4)}
		for j, h := range hyps {
			st := cb.Stats(h, joinAll(c.Refs[j])...)
			for n := range st.Total {
				st.Total[n] = max(st.Total[n], 1)
			}
			total.Add(st)
		}
		where := "differs " + strconv.Itoa(i)
		md.check(t, "corpus_bleu_nltk_floor", where, cb.Score(total).Score, c.CorpusBLEU, tol)
		refs := make([][]string, len(c.Refs))
		for j, r := range c.Refs {
			refs[j] = joinAll(r)
		}
		got, _ := cb.Corpus(hyps, refs)
		if c.CorpusBLEU != 0 && math.Abs(got.Score-c.CorpusBLEU) < 1e-6 {
			t.Errorf("%s: got %v, same as NLTK's %v; the vector should show the difference", where, got.Score, c.CorpusBLEU)
		}
	}
	t.Logf("NLTK %s, %d sentences, %d corpora, tolerance %g; max |Δ| per figure: %v",
		v.NLTKVersion, len(v.Sentences), len(v.Corpora), tol, md)
}
