package lm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestOverfitFixedBatch(t *testing.T) {
	cfg := Config{VocabSize: 32, Context: 16, Dim: 32, Layers: 2, Heads: 2}
	rng := rand.New(rand.NewPCG(21, 22))
	m, err := New(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := NewAdamW(cfg, DefaultAdamW())
	if err != nil {
		t.Fatal(err)
	}
	B, T := 4, 16
	tokens := make([]int, B*T)
	for i := range tokens {
		tokens[i] = rng.IntN(cfg.VocabSize)
	}
	var first, last float64
	for step := 0; step < 150; step++ {
		st, err := SFTStep(m, opt, TrainConfig{LR: 3e-3, ClipNorm: 1}, tokens, B, T, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if step == 0 {
			first = st.NLL
		}
		last = st.NLL
	}
	t.Logf("fixed batch NLL: step 0 %.3f → step 149 %.4f (uniform %.3f)", first, last, math.Log(32))
	if last > 0.05 {
		t.Errorf("final NLL %.4f, want ≤ 0.05", last)
	}
}

// copyBatch makes sequences "x1..xn SEP x1..xn" over symbols 1..syms, with
// SEP = 0, and a mask on the predictions of the copied half.
func copyBatch(rng *rand.Rand, B, n, syms int) ([]int, []float32) {
	T := 2*n + 1
	tokens, mask := make([]int, B*T), make([]float32, B*T)
	for b := 0; b < B; b++ {
		row := tokens[b*T : (b+1)*T]
		for i := 0; i < n; i++ {
			row[i] = 1 + rng.IntN(syms)
			row[n+1+i] = row[i]
		}
		for t := n; t < T-1; t++ {
			mask[b*T+t] = 1 // predicting tokens n+1..2n
		}
	}
	return tokens, mask
}

func TestLearnsCopy(t *testing.T) {
	const n, syms = 5, 8
	cfg := Config{VocabSize: syms + 1, Context: 2*n + 1, Dim: 32, Layers: 2, Heads: 2}
	rng := rand.New(rand.NewPCG(31, 32))
	m, err := New(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := NewAdamW(cfg, DefaultAdamW())
	if err != nil {
		t.Fatal(err)
	}
	sched := LRSchedule{Peak: 3e-3, Min: 3e-4, Warmup: 20, Total: 400}
	B, T := 32, 2*n+1
	for step := 0; step < sched.Total; step++ {
		tokens, mask := copyBatch(rng, B, n, syms)
		if _, err := SFTStep(m, opt, TrainConfig{LR: sched.At(step), ClipNorm: 1}, tokens, B, T, nil, mask); err != nil {
			t.Fatal(err)
		}
	}
	// Greedy continuation of fresh prompts must reproduce them.
	evalRng := rand.New(rand.NewPCG(99, 99))
	tokens, _ := copyBatch(evalRng, 64, n, syms)
	var prompts [][]int
	for b := 0; b < 64; b++ {
		prompts = append(prompts, tokens[b*T:b*T+n+1])
	}
	outs, err := m.Sample(prompts, SampleConfig{TopP: 1, MaxNewTokens: n}, make([]*rand.Rand, 64))
	if err != nil {
		t.Fatal(err)
	}
	right, total := 0, 0
	for b, c := range outs {
		for i, tok := range c.Tokens {
			total++
			if tok == tokens[b*T+i] {
				right++
			}
		}
	}
	acc := float64(right) / float64(total)
	t.Logf("copy accuracy (greedy, 64 fresh sequences): %.3f", acc)
	if acc < 0.95 {
		t.Errorf("copy accuracy %.3f, want ≥ 0.95", acc)
	}
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	cfg := Config{VocabSize: 40, Context: 70, Dim: 16, Layers: 2, Heads: 2}
	var results [][]float32
	for _, workers := range []int{1, 2, 3} {
		rng := rand.New(rand.NewPCG(41, 42))
		m, err := New(cfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		m.Workers = workers
		opt, err := NewAdamW(cfg, DefaultAdamW())
		if err != nil {
			t.Fatal(err)
		}
		B, T := 3, 70
		for step := 0; step < 5; step++ {
			tokens := make([]int, B*T)
			for i := range tokens {
				tokens[i] = rng.IntN(cfg.VocabSize)
			}
			if _, err := SFTStep(m, opt, TrainConfig{LR: 1e-3, ClipNorm: 1}, tokens, B, T, []int{70, 50, 3}, nil); err != nil {
				t.Fatal(err)
			}
		}
		results = append(results, m.Params.Data)
	}
	for w := 1; w < len(results); w++ {
		for i := range results[0] {
			if math.Float32bits(results[0][i]) != math.Float32bits(results[w][i]) {
				t.Fatalf("weight %d after 5 steps: %v with 1 worker, %v with %d", i, results[0][i], results[w][i], w+1)
			}
		}
	}
}

func TestLRSchedule(t *testing.T) {
	s := LRSchedule{Peak: 1, Min: 0.1, Warmup: 10, Total: 110}
	tests := []struct {
		step int
		want float64
	}{{0, 0.1}, {9, 1}, {10, 1}, {60, 0.55}, {110, 0.1}, {500, 0.1}}
	for _, tc := range tests {
		if got := s.At(tc.step); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("At(%d) = %v, want %v", tc.step, got, tc.want)
		}
	}
}

func TestClipGradNorm(t *testing.T) {
	m, err := New(tinyConfig(), rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	m.Grads.Data[0], m.Grads.Data[5] = 3, 4
	if got := ClipGradNorm(m, 1); math.Abs(got-5) > 1e-9 {
		t.Errorf("norm = %v, want 5", got)
	}
	if got := ClipGradNorm(m, 0); math.Abs(got-1) > 1e-5 {
		t.Errorf("norm after clipping to 1 = %v, want 1", got)
	}
}

func TestMaskedNLL(t *testing.T) {
	nll, d, err := MaskedNLL([]float32{-1, -2, -3, 0}, []float32{1, 0, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	if nll != 2 || d[0] != -0.5 || d[1] != 0 || d[2] != -0.5 {
		t.Errorf("got nll %v, dlogp %v; want 2, [-0.5 0 -0.5 0]", nll, d)
	}
	if _, _, err := MaskedNLL([]float32{1}, []float32{1, 2}); err == nil {
		t.Error("length mismatch: got no error")
	}
}

// TestForwardPaddingAndBatchIndependent: a row's log-probs do not depend on
// its padding or on the other rows of the batch.
func TestForwardPaddingAndBatchIndependent(t *testing.T) {
	m := sampleModel(t, 2)
	seq := []int{4, 8, 15, 16, 23, 42 % 37}
	alone, err := m.Forward(seq, 1, len(seq), nil)
	if err != nil {
		t.Fatal(err)
	}
	T := 10
	batch := make([]int, 3*T)
	for i := range batch {
		batch[i] = (i * 7) % m.Config.VocabSize // other rows and padding
	}
	copy(batch[T:], seq)
	got, err := m.Forward(batch, 3, T, []int{T, len(seq), 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range seq {
		if d := math.Abs(float64(got[T+i] - alone[i])); d > 1e-6 {
			t.Errorf("position %d: logp %v in a padded batch, %v alone", i, got[T+i], alone[i])
		}
	}
	for i := len(seq) - 1; i < T; i++ {
		if got[T+i] != 0 {
			t.Errorf("position %d past the row's length: logp %v, want 0", i, got[T+i])
		}
	}
}

func TestSampleSameForAnyWorkerCount(t *testing.T) {
	prompts := [][]int{{1, 2, 3}, {5}, {7, 7, 7, 7, 7, 7, 7, 7, 7}}
	sc := SampleConfig{Temperature: 0.8, TopP: 0.95, MaxNewTokens: 10}
	var outs [][]Completion
	for _, w := range []int{1, 2} {
		m := sampleModel(t, w)
		rngs := []*rand.Rand{rand.New(rand.NewPCG(1, 0)), rand.New(rand.NewPCG(2, 0)), rand.New(rand.NewPCG(3, 0))}
		out, err := m.Sample(prompts, sc, rngs)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	for s := range prompts {
		a, b := outs[0][s], outs[1][s]
		if len(a.Tokens) != len(b.Tokens) || sameBits(a.LogProbs, b.LogProbs) >= 0 {
			t.Fatalf("sequence %d: 1 worker %v %v, 2 workers %v %v", s, a.Tokens, a.LogProbs, b.Tokens, b.LogProbs)
		}
		for i := range a.Tokens {
			if a.Tokens[i] != b.Tokens[i] {
				t.Fatalf("sequence %d token %d: 1 worker %d, 2 workers %d", s, i, a.Tokens[i], b.Tokens[i])
			}
		}
	}
}

// SetWorkers may change between a Forward and its Backward, or between
// sampling calls, as reproduce re-divides the cores while stages run: the
// call keeps the scratch it sized, and results are those of any count.
func TestSetWorkersWhileModelsRun(t *testing.T) {
	defer SetWorkers(SetWorkers(1))
	cfg := Config{VocabSize: 40, Context: 70, Dim: 16, Layers: 2, Heads: 2}
	grads := func(raiseBetween bool) []float32 {
		SetWorkers(1)
		m, err := New(cfg, rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		B, T := 3, 70
		tokens := make([]int, B*T)
		for i := range tokens {
			tokens[i] = (i * 7) % cfg.VocabSize
		}
		logp, err := m.Forward(tokens, B, T, []int{70, 40, 9})
		if err != nil {
			t.Fatal(err)
		}
		if raiseBetween {
			SetWorkers(4) // more workers than Forward sized attention's scratch for
		}
		dlogp := make([]float32, len(logp))
		for i := range dlogp {
			dlogp[i] = -1
		}
		if err := m.Backward(dlogp); err != nil {
			t.Fatal(err)
		}
		return m.Grads.Data
	}
	want, got := grads(false), grads(true)
	if i := sameBits(want, got); i >= 0 {
		t.Fatalf("gradient %d: %v with 1 worker throughout, %v with 4 set before Backward", i, want[i], got[i])
	}

	prompts := [][]int{{1, 2, 3}, {5}, {7, 7, 7, 7}}
	sc := SampleConfig{Temperature: 0.8, TopP: 0.95, MaxNewTokens: 10}
	sample := func(raise bool) []Completion {
		SetWorkers(1)
		m := sampleModel(t, 0)
		rngs := []*rand.Rand{rand.New(rand.NewPCG(1, 0)), rand.New(rand.NewPCG(2, 0)), rand.New(rand.NewPCG(3, 0))}
		if raise {
			if _, err := m.Sample(prompts, sc, rngs); err != nil { // sizes the decoder for 1 worker
				t.Fatal(err)
			}
			SetWorkers(4)
			rngs = []*rand.Rand{rand.New(rand.NewPCG(1, 0)), rand.New(rand.NewPCG(2, 0)), rand.New(rand.NewPCG(3, 0))}
		}
		out, err := m.Sample(prompts, sc, rngs)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := sample(false), sample(true)
	for s := range prompts {
		if fmt.Sprint(a[s].Tokens) != fmt.Sprint(b[s].Tokens) || sameBits(a[s].LogProbs, b[s].LogProbs) >= 0 {
			t.Fatalf("sequence %d: %v with 1 worker, %v with 4 set between calls", s, a[s].Tokens, b[s].Tokens)
		}
	}
}
