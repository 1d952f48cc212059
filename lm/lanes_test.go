package lm

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/gemm"
)

// The decoder deals a step's rows into one lane per worker, whole
// sequences each, of near-equal cost; it keeps them in one lane when
// they cannot be dealt so.
func TestDecodeLanes(t *testing.T) {
	seqs := func(lens ...int) []kvRow {
		var rows []kvRow
		for s, n := range lens {
			for p := range n {
				rows = append(rows, kvRow{seq: s, pos: p})
			}
		}
		return rows
	}
	var d decodeState
	const C = 16
	for _, tc := range []struct {
		name string
		rows []kvRow
		W    int
		want []int
	}{
		{"four equal sequences, two workers", seqs(1, 1, 1, 1), 2, []int{0, 2, 4}},
		{"six equal sequences, three workers", seqs(1, 1, 1, 1, 1, 1), 3, []int{0, 2, 4, 6}},
		{"prompts of several rows", seqs(3, 3, 3, 3), 2, []int{0, 6, 12}},
		{"uneven but balanced", seqs(2, 1, 1, 2), 2, []int{0, 3, 6}},
		{"one worker", seqs(1, 1, 1, 1), 1, nil},
		{"one sequence", seqs(8), 2, nil},
		{"a long prompt beside short ones", seqs(40, 1, 1), 2, nil},
		{"fewer sequences than workers", seqs(1, 1), 3, nil},
		{"out of sequence order", []kvRow{{seq: 1}, {seq: 0}, {seq: 2}, {seq: 3}}, 2, nil},
	} {
		got := d.lanes(tc.rows, tc.W, C)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: cuts %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Sampling a batch in lanes (two or three workers) gives, bit for bit,
// the tokens, log-probabilities and forced marks of one lane on one
// worker: prompts of different lengths, a prompt longer than the others
// (read in one lane), forced rows, a kept cache, in fp32 and bf16.
func TestSampleLanesChangeNothing(t *testing.T) {
	force := func(_ int, toks []int) []int {
		if toks[len(toks)-1]%4 == 0 {
			return []int{11, 12, 13}
		}
		return nil
	}
	precisions := []Precision{FP32}
	if gemm.HasBF16() {
		precisions = append(precisions, BF16)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	prompts := make([][]int, 9)
	for i := range prompts {
		n := 1 + i%4
		if i == 4 {
			n = 14
		}
		for range n {
			prompts[i] = append(prompts[i], rng.IntN(37))
		}
	}
	for _, prec := range precisions {
		prev := SetSamplePrecision(prec)
		var want []Completion
		for _, workers := range []int{1, 2, 3} {
			m := sampleModel(t, workers)
			kvs := make([]*KV, len(prompts))
			for i := range kvs {
				if i%2 == 0 {
					kvs[i] = m.NewKV()
				}
			}
			var got []Completion
			for turn := range 2 { // the second turn reads from the kept caches
				convs := prompts
				if turn == 1 {
					convs = make([][]int, len(prompts))
					for i, p := range prompts {
						convs[i] = append(append(append([]int(nil), p...), got[i].Tokens...), 7)
					}
				}
				rngs := make([]*rand.Rand, len(convs))
				for i := range rngs {
					rngs[i] = rand.New(rand.NewPCG(uint64(i), uint64(turn)))
				}
				out, err := m.SampleKV(convs, kvs, SampleConfig{Temperature: 1, TopP: 1, MaxNewTokens: 4, Force: force}, rngs)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, out...)
			}
			if workers == 1 {
				want = got
				continue
			}
			for i := range got {
				if !sameCompletion(got[i], want[i]) {
					t.Fatalf("%v, %d workers, completion %d: %+v, one worker %+v", prec, workers, i, got[i], want[i])
				}
			}
		}
		SetSamplePrecision(prev)
	}
}

// sameCompletion compares two completions bit for bit.
func sameCompletion(a, b Completion) bool {
	if !reflect.DeepEqual(a.Tokens, b.Tokens) || !reflect.DeepEqual(a.Forced, b.Forced) || a.Reason != b.Reason || len(a.LogProbs) != len(b.LogProbs) {
		return false
	}
	for i := range a.LogProbs {
		if math.Float32bits(a.LogProbs[i]) != math.Float32bits(b.LogProbs[i]) {
			return false
		}
	}
	return true
}
