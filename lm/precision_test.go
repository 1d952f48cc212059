package lm

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/gemm"
)

// withPrecision runs f with the sampler at p, restoring the setting after.
func withPrecision(t *testing.T, p Precision) {
	t.Helper()
	old := SetPrecision(p)
	t.Cleanup(func() { SetPrecision(old) })
}

// TestSampleBF16: in bf16 the sampler is deterministic, a cached
// continuation is bit for bit a fresh one (every row's arithmetic is its
// own), and the first token's log-probability stays within 0.05 nats of
// fp32's while differing from it (the bf16 products really run). The
// bound: the logits of this model are O(1) sums over d = 16; rounding the
// weights and activations to 8 significant bits moves each by about
// 2⁻⁸·√d·|w||x| ≈ 0.01, and a log-softmax moves by at most twice that.
func TestSampleBF16(t *testing.T) {
	if !gemm.HasBF16() {
		t.Skip("no bf16 instructions on this CPU")
	}
	m := sampleModel(t, 2)
	prompts := [][]int{{1, 2, 3}, {4, 5}, {6}}
	sc := SampleConfig{Temperature: 1, TopP: 1, MaxNewTokens: 6}
	rngs := func() []*rand.Rand {
		r := make([]*rand.Rand, len(prompts))
		for i := range r {
			r[i] = rand.New(rand.NewPCG(1, uint64(i)))
		}
		return r
	}
	run := func(p Precision) []Completion {
		withPrecision(t, p)
		out, err := m.Sample(prompts, sc, rngs())
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	f32, b1, b2 := run(FP32), run(BF16), run(BF16)
	if !reflect.DeepEqual(b1, b2) {
		t.Fatalf("bf16 twice: %+v then %+v", b1, b2)
	}
	withPrecision(t, BF16)
	kvs := []*KV{m.NewKV(), m.NewKV(), nil}
	kv, err := m.SampleKV(prompts, kvs, sc, rngs())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kv, b1) {
		t.Fatalf("bf16 through caches %+v, without %+v", kv, b1)
	}
	differ := false
	for i := range prompts {
		d := math.Abs(float64(b1[i].LogProbs[0] - f32[i].LogProbs[0]))
		if b1[i].Tokens[0] == f32[i].Tokens[0] && d > 0.05 {
			t.Errorf("seq %d: first token log-prob bf16 %v, fp32 %v", i, b1[i].LogProbs[0], f32[i].LogProbs[0])
		}
		differ = differ || d > 0
	}
	if !differ {
		t.Error("bf16 log-probs equal fp32's bit for bit: the bf16 path did not run")
	}
}

func TestParsePrecision(t *testing.T) {
	for _, s := range []string{"fp32", "bf16"} {
		p, err := ParsePrecision(s)
		if err != nil || p.String() != s {
			t.Errorf("ParsePrecision(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := ParsePrecision("fp16"); err == nil {
		t.Error("ParsePrecision(fp16): no error")
	}
}

// TestTrainBF16: in bf16 a Forward and Backward give the same bits twice,
// and log-probs and gradients near fp32's: the mean log-prob within 0.02
// nats (the sampler's bound, above) and the whole gradient within 5% in
// L2 (each bf16 product is off by up to 2⁻⁷ relative; over the chain of
// products back through the layers the errors add like a random walk,
// measured 0.6% here), pointing the same way (cosine > 0.998).
func TestTrainBF16(t *testing.T) {
	if !gemm.HasBF16() {
		t.Skip("no bf16 instructions on this CPU")
	}
	m := sampleModel(t, 2)
	B, T := 3, 12
	rng := rand.New(rand.NewPCG(3, 4))
	tokens := make([]int, B*T)
	for i := range tokens {
		tokens[i] = rng.IntN(m.Config.VocabSize)
	}
	step := func(p Precision) ([]float32, []float32) {
		withPrecision(t, p)
		m.ZeroGrad()
		logp, err := m.Forward(tokens, B, T, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := make([]float32, len(logp))
		for i := range d {
			d[i] = 1
		}
		if err := m.Backward(d); err != nil {
			t.Fatal(err)
		}
		return logp, append([]float32(nil), m.Grads.Data...)
	}
	lf, gf := step(FP32)
	lb, gb := step(BF16)
	lb2, gb2 := step(BF16)
	if !reflect.DeepEqual(lb, lb2) || !reflect.DeepEqual(gb, gb2) {
		t.Fatal("bf16 Forward/Backward twice: different bits")
	}
	var sf, sb float64
	for i := range lf {
		sf, sb = sf+float64(lf[i]), sb+float64(lb[i])
	}
	if d := math.Abs(sf-sb) / float64(len(lf)); d > 0.02 || d == 0 {
		t.Errorf("mean log-prob fp32 %v, bf16 %v: |Δ| %v, want in (0, 0.02]", sf/float64(len(lf)), sb/float64(len(lf)), d)
	}
	var dot, nf, nb, diff float64
	for i := range gf {
		f, b := float64(gf[i]), float64(gb[i])
		dot, nf, nb, diff = dot+f*b, nf+f*f, nb+b*b, diff+(f-b)*(f-b)
	}
	rel, cos := math.Sqrt(diff/nf), dot/math.Sqrt(nf*nb)
	t.Logf("gradient: relative L2 error %.4f, cosine %.6f", rel, cos)
	if rel > 0.05 || cos < 0.998 {
		t.Errorf("bf16 gradient: relative L2 error %.4f (want ≤ 0.05), cosine %.6f (want ≥ 0.998)", rel, cos)
	}
}

// TestBenchPrecision: every figure is measured at both precisions.
func TestBenchPrecision(t *testing.T) {
	cfg := Config{VocabSize: 37, Context: 24, Dim: 16, Layers: 1, Heads: 2}
	rows, err := BenchPrecision(cfg, 32, 2, 4, 4, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range rows {
		names[r.Name] = true
		if !(r.FP32 > 0 && r.BF16 > 0) {
			t.Errorf("%s: fp32 %v, bf16 %v, want both positive", r.Name, r.FP32, r.BF16)
		}
	}
	if len(rows) != 10 || !names["training"] || !names["sampling"] {
		t.Errorf("rows %v: want 8 GEMM shapes, training and sampling", names)
	}
}

// TestSampleBF16IndependentOfBatch: in bf16 a sequence sampled among 40
// others (whole 32-row blocks of the products) gets the bits it gets
// alone (blocks cut by the edge).
func TestSampleBF16IndependentOfBatch(t *testing.T) {
	if !gemm.HasBF16() {
		t.Skip("no bf16 instructions on this CPU")
	}
	withPrecision(t, BF16)
	m, err := New(Config{VocabSize: 64, Context: 24, Dim: 64, Layers: 2, Heads: 2}, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	sc := SampleConfig{Temperature: 1, TopP: 1, MaxNewTokens: 6}
	target := []int{5, 6, 7}
	alone, err := m.Sample([][]int{target}, sc, []*rand.Rand{rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	prompts := make([][]int, 40)
	rngs := make([]*rand.Rand, 40)
	for i := range prompts {
		prompts[i], rngs[i] = []int{i % 64, 3}, rand.New(rand.NewPCG(9, uint64(i)))
	}
	prompts[17], rngs[17] = target, rand.New(rand.NewPCG(1, 1))
	batch, err := m.Sample(prompts, sc, rngs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(alone[0], batch[17]) {
		t.Fatalf("alone %+v, in a batch of 40 %+v", alone[0], batch[17])
	}
}

// TestWeightGradBF16: in bf16, matmulBackward's weight gradient dw += xᵀ·dy
// runs in bf16 with fp32 accumulation, at the quick model's shapes (N =
// 256 tokens, the sum's length). Each element is bounded, against the
// float64 sum of the unrounded operands, by
//
//	(2u + u² + (N+2)·2⁻²⁴)·Σ_n |x_n·dy_n| + 2⁻²⁴·|dw₀|,   u = 2⁻⁸,
//
// u being bf16's unit roundoff (8 significant bits, round to nearest):
// rounding x and dy costs each product at most 2u + u² of itself, and
// the N fp32 sums and the final add onto dw₀ at most 2⁻²⁴ of the running
// magnitude each. The mean error relative to Σ|x·dy| must also be far
// above fp32's 2⁻²⁴ (the bf16 product really runs: the fp32 product's is
// about 2⁻²⁴·√N ≈ 2⁻²⁰) and the worst element well inside the bound.
func TestWeightGradBF16(t *testing.T) {
	if !gemm.HasBF16() {
		t.Skip("no bf16 instructions on this CPU")
	}
	rng := rand.New(rand.NewPCG(17, 18))
	for _, s := range [][3]int{{256, 128, 384}, {256, 512, 128}, {37, 20, 9}} {
		N, IC, OC := s[0], s[1], s[2]
		x, dy, w := randVec(rng, N*IC, 1), randVec(rng, N*OC, 1), randVec(rng, IC*OC, 1)
		dw0 := randVec(rng, IC*OC, 1) // gradients accumulate across calls
		var wT, dyPack gemm.PackedB
		wT.Pack(true, OC, IC, w, OC)
		dx, dw := make([]float32, N*IC), append([]float32(nil), dw0...)
		matmulBackward(2, dx, dw, nil, dy, x, w, &wT, &dyPack, N, IC, OC, false, nil)
		const u = 1.0 / 256
		var worst, sumRel float64
		for i := 0; i < IC; i++ {
			for j := 0; j < OC; j++ {
				exact, mag := float64(dw0[i*OC+j]), 0.0
				for n := 0; n < N; n++ {
					p := float64(x[n*IC+i]) * float64(dy[n*OC+j])
					exact, mag = exact+p, mag+math.Abs(p)
				}
				bound := (2*u+u*u+float64(N+2)*0x1p-24)*mag + 0x1p-24*math.Abs(float64(dw0[i*OC+j]))
				e := math.Abs(float64(dw[i*OC+j]) - exact)
				if e > bound {
					t.Fatalf("N %d IC %d OC %d: dw[%d,%d] = %v, exact %v: error %.3g > bound %.3g", N, IC, OC, i, j, dw[i*OC+j], exact, e, bound)
				}
				worst, sumRel = max(worst, e/bound), sumRel+e/mag
			}
		}
		mean := sumRel / float64(IC*OC)
		t.Logf("N %d IC %d OC %d: mean error %.3g of Σ|x·dy|, worst %.2f of the bound", N, IC, OC, mean, worst)
		if mean < 0x1p-17 || worst > 0.5 {
			t.Errorf("N %d IC %d OC %d: mean relative error %.3g (want > 2⁻¹⁷: bf16 rounding), worst %.2f of the bound (want ≤ 0.5)", N, IC, OC, mean, worst)
		}
	}
}

// TestSamplePrecisionApart: with Sample set to bf16 apart from Forward
// (SetSamplePrecision after SetPrecision(FP32)), Sample gives exactly
// what a run wholly in bf16 samples and Forward exactly fp32's log-probs,
// so a run that trains in fp32 and samples in bf16 trains on fp32's
// arithmetic. Setting both again (SetPrecision) brings Sample back.
func TestSamplePrecisionApart(t *testing.T) {
	if !gemm.HasBF16() {
		t.Skip("no bf16 instructions on this CPU")
	}
	m := sampleModel(t, 2)
	prompts := [][]int{{1, 2, 3}, {4, 5}}
	sc := SampleConfig{Temperature: 1, TopP: 1, MaxNewTokens: 5}
	sample := func() []Completion {
		rngs := []*rand.Rand{rand.New(rand.NewPCG(1, 0)), rand.New(rand.NewPCG(1, 1))}
		out, err := m.Sample(prompts, sc, rngs)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tokens := []int{1, 2, 3, 4, 5, 6, 7, 8}
	forward := func() []float32 {
		logp, err := m.Forward(tokens, 2, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		return logp
	}
	withPrecision(t, FP32)
	sf, ff := sample(), forward()
	SetPrecision(BF16)
	sb, fb := sample(), forward()
	SetPrecision(FP32)
	if prev := SetSamplePrecision(BF16); prev != FP32 {
		t.Fatalf("SetSamplePrecision returned %v after SetPrecision(FP32), want fp32", prev)
	}
	if ActivePrecision() != FP32 || ActiveSamplePrecision() != BF16 {
		t.Fatalf("active precisions %v (model), %v (sampler), want fp32, bf16", ActivePrecision(), ActiveSamplePrecision())
	}
	if got := sample(); !reflect.DeepEqual(got, sb) {
		t.Errorf("sampling apart in bf16: %+v, want bf16's %+v", got, sb)
	}
	if reflect.DeepEqual(sb, sf) {
		t.Error("bf16 and fp32 samples are bit for bit equal: the comparison shows nothing")
	}
	if got := forward(); !reflect.DeepEqual(got, ff) || reflect.DeepEqual(ff, fb) {
		t.Errorf("Forward with the sampler apart in bf16: %v, want fp32's %v (bf16's %v)", got, ff, fb)
	}
	SetPrecision(FP32)
	if got := sample(); !reflect.DeepEqual(got, sf) {
		t.Errorf("after SetPrecision(FP32) the sampler gives %+v, want fp32's %+v", got, sf)
	}
}
