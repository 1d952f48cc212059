package lm

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/gemm"
)

// headBatch is a batch long enough that the head's weight gradient sums
// over several gemm.SliceK slices of rows, with padding, and a gradient
// on the rows density picks (none in sequence 2, rows 800–1170: a slice
// of the weight gradient with no marked row); mask marks the same
// predictions.
func headBatch(rng *rand.Rand, V int, density float64) (tokens []int, B, T int, lens []int, dlogp, mask []float32) {
	B, T = 6, 400
	tokens, lens = make([]int, B*T), []int{400, 400, 371, 250, 399, 12}
	for i := range tokens {
		tokens[i] = rng.IntN(V)
	}
	dlogp, mask = make([]float32, B*T), make([]float32, B*T)
	for b := 0; b < B; b++ {
		for t := 0; t < lens[b]; t++ {
			if b != 2 && rng.Float64() < density {
				dlogp[b*T+t], mask[b*T+t] = float32(rng.NormFloat64()), 1
			}
		}
	}
	return
}

// The head's backward over only the rows that carry a gradient, after a
// forward over all rows or over the marked ones (ForwardMaskedAt), gives
// every gradient and every marked log-prob bit for bit as the head over
// all rows; marks as sparse as RL's and dense enough to take the
// all-rows path, in fp32 and (where the CPU has it) bf16.
func TestHeadOnMarkedRowsBitForBit(t *testing.T) {
	cfg := Config{VocabSize: 40, Context: 400, Dim: 16, Layers: 1, Heads: 2}
	precs := []Precision{FP32}
	if gemm.HasBF16() {
		precs = append(precs, BF16)
	}
	for _, prec := range precs {
		for _, density := range []float64{0.05, 0.4, 0.95} {
			tokens, B, T, lens, dlogp, mask := headBatch(rand.New(rand.NewPCG(21, 22)), cfg.VocabSize, density)
			run := func(dense, masked bool) ([]float32, []float32) {
				defer SetPrecision(SetPrecision(prec))
				m := peakedModel(t, cfg, rand.NewPCG(23, 24), 2)
				prev := denseHead
				denseHead = dense
				defer func() { denseHead = prev }()
				var msk []float32
				if masked {
					msk = mask
				}
				logp, err := m.ForwardMaskedAt(tokens, B, T, lens, 0.8, msk)
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Backward(dlogp); err != nil {
					t.Fatal(err)
				}
				return logp, m.Grads.Data
			}
			wantLogp, want := run(true, false)
			for _, masked := range []bool{false, true} {
				logp, got := run(false, masked)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%v density %v masked %v: gradient %d = %v, over all rows %v", prec, density, masked, i, got[i], want[i])
					}
				}
				for i, w := range wantLogp {
					if masked && mask[i] == 0 {
						w = 0
					}
					if math.Float32bits(logp[i]) != math.Float32bits(w) {
						t.Fatalf("%v density %v masked %v: logp[%d] = %v, want %v", prec, density, masked, i, logp[i], w)
					}
				}
			}
		}
	}
}

// A gradient at a prediction the masked forward did not score is an
// error naming the position, and leaves the forward to be used again.
func TestBackwardRefusesUnmarkedGradient(t *testing.T) {
	cfg := Config{VocabSize: 40, Context: 400, Dim: 16, Layers: 1, Heads: 2}
	tokens, B, T, lens, dlogp, mask := headBatch(rand.New(rand.NewPCG(25, 26)), cfg.VocabSize, 0.3)
	m := peakedModel(t, cfg, rand.NewPCG(23, 24), 2)
	if _, err := m.ForwardMaskedAt(tokens, B, T, lens, 1, mask); err != nil {
		t.Fatal(err)
	}
	bad := append([]float32(nil), dlogp...)
	bad[2*T+5] = 1 // sequence 2 has no marks
	err := m.Backward(bad)
	if err == nil || !strings.Contains(err.Error(), "[2,5]") {
		t.Fatalf("Backward with a gradient off the mask: %v, want an error naming [2,5]", err)
	}
	if err := m.Backward(dlogp); err != nil {
		t.Fatalf("Backward after the refused one: %v", err)
	}
}
