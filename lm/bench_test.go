package lm

import (
	"math/rand/v2"
	"testing"

	"github.com/calibrl/calibrl/gemm"
)

// Benchmarks for issue 3's figures. Run with
//
//	go test ./lm -run XXX -bench . -count 3
func benchModel(b *testing.B, name string) (*Model, *AdamW, []int) {
	b.Helper()
	var cfg Config
	for _, nc := range BenchModels() {
		if nc.Name == name {
			cfg = nc.Config
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := New(cfg, rng)
	if err != nil {
		b.Fatal(err)
	}
	opt, err := NewAdamW(cfg, DefaultAdamW())
	if err != nil {
		b.Fatal(err)
	}
	tokens := make([]int, 16*256)
	for i := range tokens {
		tokens[i] = rng.IntN(cfg.VocabSize)
	}
	return m, opt, tokens
}

func benchTrain(b *testing.B, name string) {
	m, opt, tokens := benchModel(b, name)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SFTStep(m, opt, TrainConfig{LR: 1e-4, ClipNorm: 1}, tokens, 16, 256, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*16*256)/b.Elapsed().Seconds(), "tokens/s")
}

func benchForward(b *testing.B, name string) {
	m, _, tokens := benchModel(b, name)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Forward(tokens, 16, 256, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/forward")
}

func benchSample(b *testing.B, name string) {
	m, _, tokens := benchModel(b, name)
	prompts := make([][]int, 16)
	for i := range prompts {
		prompts[i] = tokens[i*256 : i*256+32]
	}
	rngs := make([]*rand.Rand, 16)
	sc := SampleConfig{Temperature: 1, TopP: 1, MaxNewTokens: 128}
	b.ReportAllocs()
	for b.Loop() {
		for i := range rngs {
			rngs[i] = rand.New(rand.NewPCG(uint64(i), 7))
		}
		if _, err := m.Sample(prompts, sc, rngs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*16*128)/b.Elapsed().Seconds(), "tokens/s")
}

func BenchmarkTrainA(b *testing.B)   { benchTrain(b, "A") }
func BenchmarkTrainB(b *testing.B)   { benchTrain(b, "B") }
func BenchmarkForwardA(b *testing.B) { benchForward(b, "A") }
func BenchmarkForwardB(b *testing.B) { benchForward(b, "B") }
func BenchmarkSampleA(b *testing.B)  { benchSample(b, "A") }
func BenchmarkSampleB(b *testing.B)  { benchSample(b, "B") }

// BenchmarkTrainA1Core is TrainA on one goroutine (model and gemm): the
// per-core cost of a step, which stays readable when other processes
// share the machine.
func BenchmarkTrainA1Core(b *testing.B) {
	prev := gemm.SetWorkers(1)
	defer gemm.SetWorkers(prev)
	m, opt, tokens := benchModel(b, "A")
	m.Workers = 1
	for b.Loop() {
		if _, err := SFTStep(m, opt, TrainConfig{LR: 1e-4, ClipNorm: 1}, tokens, 16, 256, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*16*256)/b.Elapsed().Seconds(), "tokens/s")
}
