package lm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Finite-difference checks. Forward passes run in float32; the scalar loss
// L = Σ r·out (r random) is summed in float64 and central differences use
// eps = 1e-2, so the comparison is normwise: max|analytic − numeric| over
// max|analytic| per tensor, which must stay below gradTol. Float32
// rounding and the O(eps²) truncation put correct gradients near 1e-3; a
// wrong term shows up at order 1.
const (
	gradEps = 1e-2
	gradTol = 1e-2
)

func randVec(rng *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * scale)
	}
	return x
}

func dot64(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// checkGrad compares analytic ∂L/∂x against central differences of loss,
// reporting the normwise relative error.
func checkGrad(t *testing.T, name string, x, analytic []float32, loss func() float64) {
	t.Helper()
	var maxDiff, maxA float64
	for i := range x {
		orig := x[i]
		x[i] = orig + gradEps
		lp := loss()
		x[i] = orig - gradEps
		lm := loss()
		x[i] = orig
		num := (lp - lm) / (2 * gradEps)
		a := float64(analytic[i])
		if math.IsNaN(a) || math.IsNaN(num) || math.IsInf(a, 0) {
			t.Fatalf("%s[%d]: analytic %v, numeric %v", name, i, a, num)
		}
		maxDiff = max(maxDiff, math.Abs(a-num))
		maxA = max(maxA, math.Abs(a))
	}
	rel := maxDiff / max(maxA, 1e-6)
	t.Logf("%-28s n=%-5d max|grad|=%.3g rel err=%.2e", name, len(x), maxA, rel)
	if rel > gradTol || math.IsNaN(rel) {
		t.Errorf("%s: relative gradient error %.3e, want ≤ %.0e", name, rel, gradTol)
	}
}

func TestLayernormGrad(t *testing.T) {
	for _, C := range []int{7, 16} { // the scalar row code, and the vector one where the CPU has it
		rng := rand.New(rand.NewPCG(1, uint64(C)))
		N := 5
		x, w, b := randVec(rng, N*C, 1), randVec(rng, C, 1), randVec(rng, C, 1)
		r := randVec(rng, N*C, 1)
		out, mean, rstd := make([]float32, N*C), make([]float32, N), make([]float32, N)
		loss := func() float64 {
			layernormForward(2, out, mean, rstd, x, w, b, N, C)
			return dot64(out, r)
		}
		loss()
		dx, dw, db := make([]float32, N*C), make([]float32, C), make([]float32, C)
		layernormBackward(2, dx, dw, db, r, x, w, mean, rstd, N, C, make([]float32, 2*reduceChunks*C))
		checkGrad(t, "layernorm dx", x, dx, loss)
		checkGrad(t, "layernorm dw", w, dw, loss)
		checkGrad(t, "layernorm db", b, db, loss)
	}
}

func TestMatmulGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	N, IC, OC := 6, 5, 4
	x, w, b := randVec(rng, N*IC, 1), randVec(rng, IC*OC, 1), randVec(rng, OC, 1)
	r := randVec(rng, N*OC, 1)
	out := make([]float32, N*OC)
	loss := func() float64 {
		matmulForward(2, out, x, w, b, nil, N, IC, OC)
		return dot64(out, r)
	}
	loss()
	dx, dw, db := make([]float32, N*IC), make([]float32, IC*OC), make([]float32, OC)
	matmulBackward(2, dx, dw, db, r, x, w, nil, nil, N, IC, OC, false, make([]float32, reduceChunks*OC))
	checkGrad(t, "matmul dx", x, dx, loss)
	checkGrad(t, "matmul dw", w, dw, loss)
	checkGrad(t, "matmul db", b, db, loss)
}

func TestGeluGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	N := 64
	x, r := randVec(rng, N, 2), randVec(rng, N, 1)
	out, th := make([]float32, N), make([]float32, N)
	loss := func() float64 {
		geluForward(2, out, th, x, N)
		return dot64(out, r)
	}
	loss()
	dx := make([]float32, N)
	geluBackward(2, dx, r, x, th, N)
	checkGrad(t, "gelu dx", x, dx, loss)
}

func TestAttentionGrad(t *testing.T) {
	// Sequences of unequal lengths end to end (one of them empty, one
	// longer than an attnBlock): each must attend within its own rows.
	for _, tc := range []struct {
		lens  []int
		C, NH int
	}{{[]int{5, 5}, 8, 2}, {[]int{70}, 4, 1}, {[]int{3, 0, 7, 1}, 8, 2}, {[]int{66, 9}, 4, 2}} {
		rng := rand.New(rand.NewPCG(7, uint64(len(tc.lens))))
		C, NH := tc.C, tc.NH
		var b ragged
		b.layout(tc.lens, NH)
		N, T := b.rows, b.longest
		qkv, r := randVec(rng, N*3*C, 1), randVec(rng, N*C, 1)
		out, att := make([]float32, N*C), make([]float32, b.attF)
		loss := func() float64 {
			attentionForward(2, out, att, qkv, &b, C, NH)
			return dot64(out, r)
		}
		loss()
		dqkv := make([]float32, len(qkv))
		attentionBackward(2, dqkv, r, att, qkv, out, &b, C, NH, make([]float32, 2*T*T))
		checkGrad(t, fmt.Sprintf("attention dqkv %v", tc.lens), qkv, dqkv, loss)
	}
}

// tinyConfig is small enough to finite-difference every parameter.
func tinyConfig() Config {
	return Config{VocabSize: 11, Context: 8, Dim: 8, Layers: 2, Heads: 2}
}

// gradModel is the tiny model (tied or not) the model-level gradient
// checks run on, its weights pushed past the init so that every path
// carries signal, with its random source and a 2×6 batch of tokens.
func gradModel(t *testing.T, untied bool, s1, s2 uint64) (*Model, Config, *rand.Rand, []int) {
	t.Helper()
	cfg := tinyConfig()
	cfg.Untied = untied
	rng := rand.New(rand.NewPCG(s1, s2))
	m, err := New(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Params.Data {
		m.Params.Data[i] += float32(rng.NormFloat64() * 0.3)
	}
	tokens := make([]int, 2*6)
	for i := range tokens {
		tokens[i] = rng.IntN(cfg.VocabSize)
	}
	return m, cfg, rng, tokens
}

func TestModelGrad(t *testing.T) {
	for _, untied := range []bool{false, true} {
		m, cfg, rng, tokens := gradModel(t, untied, 9, 10)
		B, T := 2, 6
		lens := []int{6, 4}
		r := randVec(rng, B*T, 1)
		loss := func() float64 {
			logp, err := m.Forward(tokens, B, T, lens)
			if err != nil {
				t.Fatal(err)
			}
			return dot64(logp, r)
		}
		loss()
		m.ZeroGrad()
		if err := m.Backward(r); err != nil {
			t.Fatal(err)
		}
		for _, ti := range cfg.tensors() {
			n := ti.size()
			checkGrad(t, ti.name, m.Params.Data[ti.offset:ti.offset+n], m.Grads.Data[ti.offset:ti.offset+n], loss)
		}
	}
}

// ForwardAt scores tokens under softmax(logits/temp), the distribution
// sampled at that temperature, and Backward is its gradient: for an
// untied model it equals Forward with the LM head scaled by 1/temp, and
// its gradient matches float64 finite differences at temp 0.7 (tied and
// untied). Temperature 1 is Forward bit for bit.
func TestForwardAtTemperature(t *testing.T) {
	const temp = 0.7
	for _, untied := range []bool{false, true} {
		m, cfg, rng, tokens := gradModel(t, untied, 11, 12)
		B, T := 2, 6
		lens := []int{6, 5}
		one, err := m.Forward(tokens, B, T, lens)
		if err != nil {
			t.Fatal(err)
		}
		at1, err := m.ForwardAt(tokens, B, T, lens, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := range one {
			if one[i] != at1[i] {
				t.Fatalf("untied %v: ForwardAt(1)[%d] = %v, Forward %v", untied, i, at1[i], one[i])
			}
		}
		r := randVec(rng, B*T, 1)
		loss := func() float64 {
			logp, err := m.ForwardAt(tokens, B, T, lens, temp)
			if err != nil {
				t.Fatal(err)
			}
			return dot64(logp, r)
		}
		tempered := make([]float32, B*T)
		copy(tempered, m.mustForwardAt(t, tokens, B, T, lens, temp))
		m.ZeroGrad()
		if err := m.Backward(r); err != nil {
			t.Fatal(err)
		}
		for _, ti := range cfg.tensors() {
			n := ti.size()
			checkGrad(t, ti.name, m.Params.Data[ti.offset:ti.offset+n], m.Grads.Data[ti.offset:ti.offset+n], loss)
		}
		if !untied {
			continue
		}
		for i := range m.Params.LMHead {
			m.Params.LMHead[i] /= temp
		}
		scaled, err := m.Forward(tokens, B, T, lens)
		if err != nil {
			t.Fatal(err)
		}
		for i := range scaled {
			if d := math.Abs(float64(scaled[i] - tempered[i])); d > 1e-5 {
				t.Fatalf("position %d: ForwardAt(%v) %v, Forward with the head scaled by 1/temp %v", i, temp, tempered[i], scaled[i])
			}
		}
		if d := math.Abs(float64(tempered[0] - one[0])); d < 1e-4 {
			t.Fatalf("temperature %v left logp[0] at %v (untempered %v): the test shows nothing", temp, tempered[0], one[0])
		}
	}
	m, _ := New(tinyConfig(), rand.New(rand.NewPCG(1, 1)))
	for _, bad := range []float32{0, -1, float32(math.Inf(1)), float32(math.NaN())} {
		if _, err := m.ForwardAt([]int{1, 2}, 1, 2, nil, bad); err == nil {
			t.Errorf("temperature %v: no error", bad)
		}
	}
}

func (m *Model) mustForwardAt(t *testing.T, tokens []int, B, T int, lens []int, temp float32) []float32 {
	t.Helper()
	logp, err := m.ForwardAt(tokens, B, T, lens, temp)
	if err != nil {
		t.Fatal(err)
	}
	return logp
}

// A batch padded to its longest row is its sequences, each alone: every
// layer runs on the real positions only (Model.setBatch), so a row's
// log-probs and its share of the gradient are what the row gets in a
// batch of its own, whatever the padding holds. Padding tokens differ
// between the two calls on purpose: they must reach nothing.
func TestPaddedBatchIsItsSequences(t *testing.T) {
	cfg := Config{VocabSize: 13, Context: 80, Dim: 16, Layers: 2, Heads: 2}
	m, err := New(cfg, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	lens := []int{70, 9, 0, 33} // one row longer than an attnBlock, one empty
	B, T := len(lens), slices.Max(lens)
	tokens := make([]int, B*T)
	for i := range tokens {
		tokens[i] = rng.IntN(cfg.VocabSize)
	}
	r := randVec(rng, B*T, 1)
	logp, err := m.Forward(tokens, B, T, lens)
	if err != nil {
		t.Fatal(err)
	}
	m.ZeroGrad()
	if err := m.Backward(r); err != nil {
		t.Fatal(err)
	}
	batchGrad := append([]float32(nil), m.Grads.Data...)

	sumGrad := make([]float32, len(m.Grads.Data))
	for b, n := range lens {
		if n == 0 {
			continue
		}
		row := tokens[b*T : b*T+n]
		alone, err := m.Forward(row, 1, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		for t0 := 0; t0 < T; t0++ {
			want := float32(0)
			if t0 < n {
				want = alone[t0]
			}
			if d := math.Abs(float64(logp[b*T+t0] - want)); d > 1e-5 {
				t.Fatalf("row %d position %d: logp %v in the batch, %v alone", b, t0, logp[b*T+t0], want)
			}
		}
		m.ZeroGrad()
		if err := m.Backward(r[b*T : b*T+n]); err != nil {
			t.Fatal(err)
		}
		for i, g := range m.Grads.Data {
			sumGrad[i] += g
		}
	}
	var diff, scale float64
	for i := range sumGrad {
		diff = max(diff, math.Abs(float64(batchGrad[i]-sumGrad[i])))
		scale = max(scale, math.Abs(float64(sumGrad[i])))
	}
	if diff > 1e-4*scale {
		t.Fatalf("batch gradient differs from the sum of its rows' by %g (largest entry %g)", diff, scale)
	}

	// Other padding tokens: the same log-probs, bit for bit.
	for b, n := range lens {
		for t0 := n; t0 < T; t0++ {
			tokens[b*T+t0] = (tokens[b*T+t0] + 1) % cfg.VocabSize
		}
	}
	again, err := m.Forward(tokens, B, T, lens)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again, logp) {
		t.Fatal("the padding's tokens changed the log-probs")
	}
}
