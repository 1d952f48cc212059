package lm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Forced ids are read through the cache like sampled ones: every sampled
// token after them is the full forward pass's argmax with its log-prob,
// whichever sequences share the batch, and they are marked, counted in the
// token limit and never asked for after the last token.
func TestSampleForcedTokens(t *testing.T) {
	m := sampleModel(t, 2)
	V := m.Config.VocabSize
	prompts := [][]int{{1, 2, 3}, {7}, {4, 4, 4, 4}}
	// After every third token of sequence s, force s+1 copies of 30+s.
	force := func(s int, toks []int) []int {
		if len(toks)%3 != 0 {
			return nil
		}
		return slices.Repeat([]int{30 + s}, s+1)
	}
	sc := SampleConfig{Temperature: 0, TopP: 1, MaxNewTokens: 14, Force: force}
	outs, err := m.Sample(prompts, sc, []*rand.Rand{nil, nil, nil})
	if err != nil {
		t.Fatal(err)
	}
	for s, c := range outs {
		if len(c.Tokens) != 14 || len(c.Forced) != 14 || len(c.LogProbs) != 14 {
			t.Fatalf("seq %d: %d tokens, %d forced flags, %d log-probs; want 14 each", s, len(c.Tokens), len(c.Forced), len(c.LogProbs))
		}
		seq := append(append([]int(nil), prompts[s]...), c.Tokens...)
		logits, err := m.Logits(seq, 1, len(seq))
		if err != nil {
			t.Fatal(err)
		}
		logp, err := m.Forward(seq, 1, len(seq), nil)
		if err != nil {
			t.Fatal(err)
		}
		nForced := 0
		for i, tok := range c.Tokens {
			at := len(prompts[s]) - 1 + i
			if c.Forced[i] {
				nForced++
				if tok != 30+s || c.LogProbs[i] != 0 {
					t.Fatalf("seq %d token %d: forced %d with log-prob %v, want %d with 0", s, i, tok, c.LogProbs[i], 30+s)
				}
				continue
			}
			row := logits[at*V : (at+1)*V]
			if arg := slices.Index(row, slices.Max(row)); tok != arg {
				t.Errorf("seq %d token %d: sampled %d, full-forward argmax %d", s, i, tok, arg)
			}
			if d := math.Abs(float64(logp[at] - c.LogProbs[i])); d > 1e-5 {
				t.Errorf("seq %d token %d: |Δlogp| %.2e", s, i, d)
			}
		}
		if nForced == 0 {
			t.Errorf("seq %d: nothing was forced", s)
		}
		if c.Forced[len(c.Forced)-1] {
			t.Errorf("seq %d: the last token was forced; a turn must end with a sampled one", s)
		}
	}
	// Alone, a sequence gets the same tokens as in the batch.
	alone, err := m.Sample(prompts[2:], SampleConfig{Temperature: 0, TopP: 1, MaxNewTokens: 14,
		Force: func(_ int, toks []int) []int { return force(2, toks) }}, []*rand.Rand{nil})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(alone[0].Tokens, outs[2].Tokens) {
		t.Fatalf("alone %v, in a batch %v", alone[0].Tokens, outs[2].Tokens)
	}
}
