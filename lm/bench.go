package lm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/calibrl/calibrl/gemm"
)

// BenchConfig sizes the engine benchmark (issue 3's measurements).
type BenchConfig struct {
	Steps     int // timed repetitions of each measurement; default 5
	Batch     int // training/scoring batch B; default 16
	SeqLen    int // training/scoring length T; default 256
	PromptLen int // sampling prompt length; default 32
	NewTokens int // tokens sampled per sequence; default 128
	Workers   int // goroutines; ≤ 0 means GOMAXPROCS
}

// DefaultBenchConfig returns the defaults documented on BenchConfig.
func DefaultBenchConfig() BenchConfig {
	return BenchConfig{Steps: 5, Batch: 16, SeqLen: 256, PromptLen: 32, NewTokens: 128}
}

// The benchmark's largest sizes, checked before anything is allocated: a
// batch of MaxBenchBatch sequences of a model's whole context fits in a
// few GB; MaxWorkers goroutines are far more than any machine has cores;
// a MaxBenchGemm GEMM holds three 256 MiB matrices.
const (
	MaxBenchSteps = 10_000
	MaxBenchBatch = 1024
	MaxWorkers    = 1024
	MaxBenchGemm  = 8192
)

// Validate reports the first out-of-range field.
func (c BenchConfig) Validate() error {
	if c.Steps < 1 || c.Batch < 1 || c.SeqLen < 2 || c.PromptLen < 1 || c.NewTokens < 1 {
		return fmt.Errorf("bench config %+v: every size must be positive (seq len ≥ 2)", c)
	}
	switch {
	case c.Steps > MaxBenchSteps:
		return fmt.Errorf("bench config: steps %d, the limit is %d", c.Steps, MaxBenchSteps)
	case c.Batch > MaxBenchBatch:
		return fmt.Errorf("bench config: batch %d, the limit is %d", c.Batch, MaxBenchBatch)
	case c.Workers > MaxWorkers:
		return fmt.Errorf("bench config: workers %d, the limit is %d", c.Workers, MaxWorkers)
	}
	return nil
}

// NamedConfig is a model config with a short name.
type NamedConfig struct {
	Name   string
	Config Config
}

// BenchModels are the two benchmark models: A (vocab 512, d 128, 4 layers,
// 4 heads, context 256) and B (d 256, 8 heads, otherwise A).
func BenchModels() []NamedConfig {
	a := DefaultConfig()
	b := a
	b.Dim, b.Heads = 256, 8
	return []NamedConfig{{"A", a}, {"B", b}}
}

// BenchResult is one model's measurements.
type BenchResult struct {
	Name             string  `json:"name"`
	Params           int     `json:"params"`
	TrainTokensPerS  float64 `json:"train_tokens_per_s"`  // forward+backward+AdamW
	ForwardMS        float64 `json:"forward_ms"`          // one Forward of B×T
	SampleTokensPerS float64 `json:"sample_tokens_per_s"` // new tokens per second, prefill included
}

// Bench measures one model: training throughput, forward latency and KV
// sampling throughput, each the median of bc.Steps timed runs after one
// untimed warm-up.
func Bench(nc NamedConfig, bc BenchConfig) (BenchResult, error) {
	if err := bc.Validate(); err != nil {
		return BenchResult{}, err
	}
	cfg := nc.Config
	if bc.SeqLen > cfg.Context || bc.PromptLen+bc.NewTokens > cfg.Context+1 {
		return BenchResult{}, fmt.Errorf("bench %s: sequences longer than context %d", nc.Name, cfg.Context)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := New(cfg, rng)
	if err != nil {
		return BenchResult{}, err
	}
	m.Workers = bc.Workers
	opt, err := NewAdamW(cfg, DefaultAdamW())
	if err != nil {
		return BenchResult{}, err
	}
	B, T := bc.Batch, bc.SeqLen
	tokens := make([]int, B*T)
	for i := range tokens {
		tokens[i] = rng.IntN(cfg.VocabSize)
	}
	res := BenchResult{Name: nc.Name, Params: cfg.NumParams()}

	train := func() error {
		_, err := SFTStep(m, opt, TrainConfig{LR: 1e-4, ClipNorm: 1}, tokens, B, T, nil, nil)
		return err
	}
	d, err := timeIt(bc.Steps, train)
	if err != nil {
		return res, err
	}
	res.TrainTokensPerS = float64(B*T) / d.Seconds()

	d, err = timeIt(bc.Steps, func() error { _, err := m.Forward(tokens, B, T, nil); return err })
	if err != nil {
		return res, err
	}
	res.ForwardMS = float64(d.Microseconds()) / 1000

	prompts := make([][]int, B)
	rngs := make([]*rand.Rand, B)
	for i := range prompts {
		prompts[i] = tokens[i*T : i*T+bc.PromptLen]
	}
	sc := SampleConfig{Temperature: 1, TopP: 1, MaxNewTokens: bc.NewTokens}
	d, err = timeIt(bc.Steps, func() error {
		for i := range rngs {
			rngs[i] = rand.New(rand.NewPCG(uint64(i), 7))
		}
		_, err := m.Sample(prompts, sc, rngs)
		return err
	})
	if err != nil {
		return res, err
	}
	res.SampleTokensPerS = float64(B*bc.NewTokens) / d.Seconds()
	return res, nil
}

// timeIt runs f once untimed, then steps times, and returns the median
// time (as bench/torch_peer.py does: robust to a run disturbed by other
// processes).
func timeIt(steps int, f func() error) (time.Duration, error) {
	if err := f(); err != nil {
		return 0, err
	}
	times := make([]time.Duration, steps)
	for i := range times {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	if steps%2 == 1 {
		return times[steps/2], nil
	}
	return (times[steps/2-1] + times[steps/2]) / 2, nil
}

// BenchGemm returns gemm.Sgemm's rate in GFLOP/s on an n×n×n product, the
// best of reps runs after one warm-up.
func BenchGemm(n, reps int) float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], b[i] = rng.Float32(), rng.Float32()
	}
	gemm.Sgemm(false, false, n, n, n, 1, a, n, b, n, 0, c, n)
	best := time.Duration(1 << 62)
	for r := 0; r < max(reps, 1); r++ {
		start := time.Now()
		gemm.Sgemm(false, false, n, n, n, 1, a, n, b, n, 0, c, n)
		best = min(best, time.Since(start))
	}
	return 2 * float64(n) * float64(n) * float64(n) / best.Seconds() / 1e9
}

// GemmShape is one matrix multiply the model performs, with its measured rate.
type GemmShape struct {
	Name    string
	TransA  bool
	TransB  bool
	M, N, K int
	GFLOPS  float64
}

// BenchGemmShapes times gemm.Sgemm at the shapes one training step of cfg
// runs on a B×T batch (forward, both backward products, the output head,
// and one attention head's blocks), best of reps runs each.
func BenchGemmShapes(cfg Config, B, T, reps int) []GemmShape {
	N, C, V, H := B*T, cfg.Dim, cfg.VocabSize, cfg.Hidden()
	HS := cfg.HeadSize()
	blk := min(attnBlock, T)
	shapes := []GemmShape{
		{Name: "attn.c_attn fwd", M: N, N: 3 * C, K: C},
		{Name: "mlp.c_fc fwd", M: N, N: H, K: C},
		{Name: "mlp.c_proj fwd", M: N, N: C, K: H},
		{Name: "lm_head fwd", TransB: true, M: N, N: V, K: C},
		{Name: "mlp.c_fc dx", TransB: true, M: N, N: C, K: H},
		{Name: "mlp.c_fc dW", TransA: true, M: C, N: H, K: N},
		{Name: "attn q·kᵀ block", TransB: true, M: blk, N: T, K: HS},
		{Name: "attn p·v block", M: blk, N: HS, K: T},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range shapes {
		s := &shapes[i]
		a, b, c := make([]float32, s.M*s.K), make([]float32, s.K*s.N), make([]float32, s.M*s.N)
		for j := range a {
			a[j] = rng.Float32()
		}
		for j := range b {
			b[j] = rng.Float32()
		}
		lda, ldb := s.K, s.N
		if s.TransA {
			lda = s.M
		}
		if s.TransB {
			ldb = s.K
		}
		run := func() { gemm.Sgemm(s.TransA, s.TransB, s.M, s.N, s.K, 1, a, lda, b, ldb, 0, c, s.N) }
		run()
		// Repeat small products so each timing covers about 50 MFLOP.
		inner := max(1, int(5e7/(2*float64(s.M*s.N*s.K))))
		best := time.Duration(1 << 62)
		for r := 0; r < max(reps, 1); r++ {
			start := time.Now()
			for j := 0; j < inner; j++ {
				run()
			}
			best = min(best, time.Since(start))
		}
		s.GFLOPS = 2 * float64(inner) * float64(s.M*s.N*s.K) / best.Seconds() / 1e9
	}
	return shapes
}
