package lm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/calibrl/calibrl/gemm"
)

// TrainingRow names BenchPrecision's training tokens/s row, which a
// caller sets other rates against.
const TrainingRow = "training"

// PrecisionRow is one figure measured at both precisions in one run.
type PrecisionRow struct {
	Name string  `json:"name"`
	Unit string  `json:"unit"`
	FP32 float64 `json:"fp32"`
	BF16 float64 `json:"bf16"`
}

// BenchPrecision measures fp32 against bf16 side by side: gemm.Sgemm and
// gemm.Bgemm (B packed beforehand, as the sampler packs its weights) at
// the forward shapes of cfg for a batch of rows rows and for the sampler's
// step of batch rows, and at gemmSize³; then training tokens per second
// (one SFT step on 16 sequences of rows/16 tokens) and Sample's new tokens
// per second on batch prompts of promptLen + newTokens. The two precisions
// alternate within each of reps rounds (the machine may be loaded), and
// each figure is the median over rounds.
func BenchPrecision(cfg Config, rows, batch, promptLen, newTokens, gemmSize, reps int) ([]PrecisionRow, error) {
	C, H, V := cfg.Dim, cfg.Hidden(), cfg.VocabSize
	type shape struct {
		name    string
		m, n, k int
		transB  bool
	}
	var shapes []shape
	for _, m := range []int{rows, batch} {
		shapes = append(shapes,
			shape{"attn.c_attn", m, 3 * C, C, false}, shape{"mlp.c_fc", m, H, C, false},
			shape{"mlp.c_proj", m, C, H, false}, shape{"lm_head", m, V, C, true})
	}
	if gemmSize > 0 {
		shapes = append(shapes, shape{"square", gemmSize, gemmSize, gemmSize, false})
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var out []PrecisionRow
	for _, s := range shapes {
		a, b, c := randFloats(rng, s.m*s.k), randFloats(rng, s.k*s.n), make([]float32, s.m*s.n)
		ldb := s.n
		if s.transB {
			ldb = s.k
		}
		var pb gemm.PackedB
		pb.Pack(s.transB, s.k, s.n, b, ldb)
		flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
		inner := max(1, int(5e7/flops)) // about 50 MFLOP a timing
		rate := func(f func()) float64 {
			start := time.Now()
			for j := 0; j < inner; j++ {
				f()
			}
			return float64(inner) * flops / time.Since(start).Seconds() / 1e9
		}
		f32 := func() { gemm.Sgemm(false, s.transB, s.m, s.n, s.k, 1, a, s.k, b, ldb, 0, c, s.n) }
		b16 := func() { gemm.Bgemm(s.m, 1, a, s.k, &pb, 0, c, s.n) }
		f32()
		b16()
		x, y := make([]float64, reps), make([]float64, reps)
		for r := range reps {
			x[r], y[r] = rate(f32), rate(b16)
		}
		out = append(out, PrecisionRow{Name: gemmName(s.name, s.m, s.n, s.k), Unit: "GFLOP/s", FP32: median(x), BF16: median(y)})
	}

	m, err := New(cfg, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		return nil, err
	}
	// Training: one SFT step (forward, backward, AdamW) on a batch of
	// rows tokens, 16 sequences as the engine's bench.
	B := 16
	T := min(cfg.Context, max(1, rows/B))
	opt, err := NewAdamW(cfg, DefaultAdamW())
	if err != nil {
		return nil, err
	}
	tokens := make([]int, B*T)
	for i := range tokens {
		tokens[i] = rng.IntN(V)
	}
	trainStep := func(p Precision) (float64, error) {
		defer SetPrecision(SetPrecision(p))
		start := time.Now()
		if _, err := SFTStep(m, opt, TrainConfig{LR: 1e-4, ClipNorm: 1}, tokens, B, T, nil, nil); err != nil {
			return 0, err
		}
		return float64(B*T) / time.Since(start).Seconds(), nil
	}
	row, err := alternate(TrainingRow, "tokens/s", reps, trainStep)
	if err != nil {
		return nil, err
	}
	out = append(out, row)

	prompts := make([][]int, batch)
	for i := range prompts {
		prompts[i] = make([]int, promptLen)
		for j := range prompts[i] {
			prompts[i][j] = rng.IntN(V)
		}
	}
	sc := SampleConfig{Temperature: 1, TopP: 1, MaxNewTokens: newTokens}
	sample := func(p Precision) (float64, error) {
		defer SetPrecision(SetPrecision(p))
		rngs := make([]*rand.Rand, batch)
		for i := range rngs {
			rngs[i] = rand.New(rand.NewPCG(uint64(i), 7))
		}
		start := time.Now()
		if _, err := m.Sample(prompts, sc, rngs); err != nil {
			return 0, err
		}
		return float64(batch*newTokens) / time.Since(start).Seconds(), nil
	}
	row, err = alternate("sampling", "tokens/s", reps, sample)
	if err != nil {
		return nil, err
	}
	return append(out, row), nil
}

// alternate measures f at fp32 and at bf16 in turn, reps rounds after one
// warm-up round, and returns the medians.
func alternate(name, unit string, reps int, f func(Precision) (float64, error)) (PrecisionRow, error) {
	x, y := make([]float64, reps), make([]float64, reps)
	for r := -1; r < reps; r++ { // round -1 warms up
		a, err := f(FP32)
		if err != nil {
			return PrecisionRow{}, err
		}
		b, err := f(BF16)
		if err != nil {
			return PrecisionRow{}, err
		}
		if r >= 0 {
			x[r], y[r] = a, b
		}
	}
	return PrecisionRow{Name: name, Unit: unit, FP32: median(x), BF16: median(y)}, nil
}

func gemmName(name string, m, n, k int) string { return fmt.Sprintf("%s %d×%d×%d", name, m, n, k) }

func randFloats(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = 2*r.Float32() - 1
	}
	return s
}

// median of xs (sorted in place).
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
