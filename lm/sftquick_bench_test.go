package lm

import (
	"math/rand/v2"
	"testing"

	"github.com/calibrl/calibrl/gemm"
)

// BenchmarkSFTStepQuick is one supervised step shaped as the quick
// preset's: d 128, 4 layers, 4 heads, context 512, vocab 768, 16
// sequences of 120–340 tokens (mean about 230, as mathchat's base
// sequences), a third of each sequence's tokens in the loss (the agent's
// turns), on one goroutine: the per-core cost a quick run's two SFT stages
// pay side by side.
func BenchmarkSFTStepQuick(b *testing.B) { benchSFTStepQuick(b, FP32) }

// BenchmarkSFTStepQuickBF16 is BenchmarkSFTStepQuick with bf16 products.
func BenchmarkSFTStepQuickBF16(b *testing.B) { benchSFTStepQuick(b, BF16) }

func benchSFTStepQuick(b *testing.B, p Precision) {
	defer SetPrecision(SetPrecision(p))
	prev := gemm.SetWorkers(1)
	defer gemm.SetWorkers(prev)
	cfg := Config{VocabSize: 768, Context: 512, Dim: 128, Layers: 4, Heads: 4}
	rng := rand.New(rand.NewPCG(3, 4))
	m, err := New(cfg, rng)
	if err != nil {
		b.Fatal(err)
	}
	m.Workers = 1
	opt, err := NewAdamW(cfg, DefaultAdamW())
	if err != nil {
		b.Fatal(err)
	}
	const B, T = 16, 340
	tokens, lens, mask := make([]int, B*T), make([]int, B), make([]float32, B*T)
	n := 0
	for s := range lens {
		lens[s] = 120 + rng.IntN(T-120+1)
		n += lens[s]
		for t := 0; t < lens[s]; t++ {
			tokens[s*T+t] = rng.IntN(cfg.VocabSize)
			if t < lens[s]-1 && (t/20)%3 == 2 { // turns of 20 tokens, every third the agent's
				mask[s*T+t] = 1
			}
		}
	}
	for b.Loop() {
		if _, err := SFTStep(m, opt, TrainConfig{LR: 1e-4, ClipNorm: 1}, tokens, B, T, lens, mask); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "tokens/s")
}
