package lm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/gemm"
)

// sampleModel is a small random model with weights large enough that its
// next-token distributions are far from uniform.
func sampleModel(t *testing.T, workers int) *Model {
	t.Helper()
	return peakedModel(t, Config{VocabSize: 37, Context: 24, Dim: 16, Layers: 2, Heads: 2}, rand.NewPCG(11, 12), workers)
}

// peakedModel is a random model of cfg drawn from src, its weights then
// moved by N(0, 0.2²) each so that its distributions are far from uniform.
func peakedModel(t *testing.T, cfg Config, src rand.Source, workers int) *Model {
	t.Helper()
	rng := rand.New(src)
	m, err := New(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Params.Data {
		m.Params.Data[i] += float32(rng.NormFloat64() * 0.2)
	}
	m.Workers = workers
	return m
}

func TestKVCacheMatchesFullForward(t *testing.T) {
	m := sampleModel(t, 2)
	V := m.Config.VocabSize
	seq := []int{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7}
	full, err := m.Logits(seq, 1, len(seq))
	if err != nil {
		t.Fatal(err)
	}
	// Prefill path: all rows of one sequence in a single step.
	d := m.decoder(len(seq))
	d.weights(m, false)
	slots := []*kvSlot{m.NewKV().ensureSlot(false)}
	rows := make([]kvRow, len(seq))
	heads := make([]int, len(seq))
	for i, tok := range seq {
		rows[i], heads[i] = kvRow{seq: 0, pos: i, tok: tok}, i
	}
	kv := d.step(m, rows, heads, slots)
	var maxDiff float64
	for i := range full {
		maxDiff = max(maxDiff, math.Abs(float64(full[i]-kv[i])))
	}
	// Decode path: one row per step.
	d = m.decoder(1)
	d.weights(m, false)
	for i, tok := range seq {
		got := d.step(m, []kvRow{{seq: 0, pos: i, tok: tok}}, []int{0}, slots)
		for j := 0; j < V; j++ {
			maxDiff = max(maxDiff, math.Abs(float64(full[i*V+j]-got[j])))
		}
	}
	t.Logf("max |Δlogit| KV cache vs full forward: %.2e", maxDiff)
	if maxDiff > 1e-5 {
		t.Errorf("max |Δlogit| = %.3e, want ≤ 1e-5", maxDiff)
	}
}

func TestGreedySampleMatchesForward(t *testing.T) {
	m := sampleModel(t, 2)
	prompts := [][]int{{1, 2, 3}, {7}, {4, 4, 4, 4, 4, 4, 4, 4}}
	sc := SampleConfig{Temperature: 0, TopP: 1, MaxNewTokens: 10}
	rngs := []*rand.Rand{nil, nil, nil}
	outs, err := m.Sample(prompts, sc, rngs)
	if err != nil {
		t.Fatal(err)
	}
	V := m.Config.VocabSize
	for s, c := range outs {
		if len(c.Tokens) != 10 || c.Reason != StopMaxTokens {
			t.Fatalf("seq %d: got %d tokens (%v), want 10 (max_tokens)", s, len(c.Tokens), c.Reason)
		}
		seq := append(append([]int(nil), prompts[s]...), c.Tokens...)
		n := len(seq)
		logits, err := m.Logits(seq, 1, n)
		if err != nil {
			t.Fatal(err)
		}
		logp, err := m.Forward(seq, 1, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		var maxDiff float64
		for i, tok := range c.Tokens {
			at := len(prompts[s]) - 1 + i
			row := logits[at*V : (at+1)*V]
			arg := 0
			for j, v := range row {
				if v > row[arg] {
					arg = j
				}
			}
			if tok != arg {
				t.Errorf("seq %d token %d: sampled %d, full-forward argmax %d", s, i, tok, arg)
			}
			maxDiff = max(maxDiff, math.Abs(float64(logp[at]-c.LogProbs[i])))
		}
		if maxDiff > 1e-5 {
			t.Errorf("seq %d: max |Δlogp| sample vs Forward %.3e, want ≤ 1e-5", s, maxDiff)
		}
	}
}

func TestSampleIndependentOfBatch(t *testing.T) {
	m := sampleModel(t, 2)
	sc := SampleConfig{Temperature: 1, TopP: 0.9, MaxNewTokens: 12}
	target := []int{5, 6, 7}
	alone, err := m.Sample([][]int{target}, sc, []*rand.Rand{rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := m.Sample([][]int{{1, 2}, target, {9, 9, 9, 9, 9}}, sc, []*rand.Rand{
		rand.New(rand.NewPCG(2, 2)), rand.New(rand.NewPCG(1, 1)), rand.New(rand.NewPCG(3, 3)),
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b := alone[0], batch[1]
	if len(a.Tokens) != len(b.Tokens) {
		t.Fatalf("alone %v, in batch %v", a.Tokens, b.Tokens)
	}
	for i := range a.Tokens {
		if a.Tokens[i] != b.Tokens[i] || math.Abs(float64(a.LogProbs[i]-b.LogProbs[i])) > 1e-6 {
			t.Fatalf("token %d: alone %d (%v), in batch %d (%v)", i, a.Tokens[i], a.LogProbs[i], b.Tokens[i], b.LogProbs[i])
		}
	}
}

// A batch whose prompts hold more tokens than one prefill step takes
// (maxPrefillRows) is read in several steps, one prompt split between two:
// every sequence samples exactly what it samples alone.
func TestSampleLongPrefillInSteps(t *testing.T) {
	m := sampleModel(t, 2)
	sc := SampleConfig{Temperature: 1, TopP: 0.9, MaxNewTokens: 3}
	const n, plen = 250, 20 // 5,000 prompt tokens
	if n*plen <= maxPrefillRows || (maxPrefillRows%plen) == 0 {
		t.Fatalf("%d prompts of %d tokens do not split a prompt between prefill steps of %d", n, plen, maxPrefillRows)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	prompts := make([][]int, n)
	rngs := make([]*rand.Rand, n)
	for i := range prompts {
		for range plen {
			prompts[i] = append(prompts[i], rng.IntN(m.Config.VocabSize))
		}
		rngs[i] = rand.New(rand.NewPCG(uint64(i), 7))
	}
	batch, err := m.Sample(prompts, sc, rngs)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		alone, err := m.Sample([][]int{p}, sc, []*rand.Rand{rand.New(rand.NewPCG(uint64(i), 7))})
		if err != nil {
			t.Fatal(err)
		}
		a, b := alone[0], batch[i]
		if fmt.Sprint(a.Tokens, a.LogProbs) != fmt.Sprint(b.Tokens, b.LogProbs) {
			t.Fatalf("sequence %d: alone %v %v, in the batch %v %v", i, a.Tokens, a.LogProbs, b.Tokens, b.LogProbs)
		}
	}
	if got := len(m.dec.mean); got > maxPrefillRows {
		t.Errorf("step buffers for %d rows, want at most %d", got, maxPrefillRows)
	}
}

func TestSampleStops(t *testing.T) {
	m := sampleModel(t, 1)
	ctx := m.Config.Context
	long := make([]int, ctx-2)
	full := make([]int, ctx)
	greedy, err := m.Sample([][]int{{1, 2, 3}}, SampleConfig{TopP: 1, MaxNewTokens: 5}, []*rand.Rand{nil})
	if err != nil {
		t.Fatal(err)
	}
	firstTok := greedy[0].Tokens[0]
	tests := []struct {
		name    string
		prompt  []int
		sc      SampleConfig
		wantLen int
		want    StopReason
	}{
		{"max tokens", []int{1, 2, 3}, SampleConfig{TopP: 1, MaxNewTokens: 4}, 4, StopMaxTokens},
		{"stop token", []int{1, 2, 3}, SampleConfig{TopP: 1, MaxNewTokens: 9, Stop: []int{firstTok}}, 1, StopToken},
		{"context nearly full", long, SampleConfig{TopP: 1, MaxNewTokens: 9}, 3, StopContext},
		{"context full", full, SampleConfig{TopP: 1, MaxNewTokens: 9}, 1, StopContext},
		{"zero tokens", []int{1}, SampleConfig{TopP: 1, MaxNewTokens: 0}, 0, StopMaxTokens},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := m.Sample([][]int{tc.prompt}, tc.sc, []*rand.Rand{nil})
			if err != nil {
				t.Fatal(err)
			}
			if got := out[0]; len(got.Tokens) != tc.wantLen || got.Reason != tc.want {
				t.Errorf("got %d tokens (%v), want %d (%v)", len(got.Tokens), got.Reason, tc.wantLen, tc.want)
			}
		})
	}
	bad := []struct {
		name    string
		prompts [][]int
		sc      SampleConfig
	}{
		{"empty prompt", [][]int{{}}, DefaultSampleConfig()},
		{"too long", [][]int{make([]int, ctx+1)}, DefaultSampleConfig()},
		{"bad token", [][]int{{99}}, DefaultSampleConfig()},
		{"bad top-p", [][]int{{1}}, SampleConfig{Temperature: 1, TopP: 0, MaxNewTokens: 1}},
	}
	for _, tc := range bad {
		if _, err := m.Sample(tc.prompts, tc.sc, []*rand.Rand{rand.New(rand.NewPCG(1, 1))}); err == nil {
			t.Errorf("%s: got no error", tc.name)
		}
	}
}

func TestPickToken(t *testing.T) {
	// p = (0.25, 0.75, ~0)
	logits := []float32{0, float32(math.Log(3)), -30}
	order, buf := make([]int, 3), make([]float32, 3)
	tests := []struct {
		name  string
		sc    SampleConfig
		want1 float64 // expected frequency of token 1
	}{
		{"temperature 1", SampleConfig{Temperature: 1, TopP: 1}, 0.75},
		{"top-p keeps only the top token", SampleConfig{Temperature: 1, TopP: 0.5}, 1},
		{"greedy", SampleConfig{Temperature: 0, TopP: 1}, 1},
		{"temperature 0.5 sharpens", SampleConfig{Temperature: 0.5, TopP: 1}, 0.9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(4, 4))
			const n = 20000
			ones := 0
			for i := 0; i < n; i++ {
				tok, lp := pickToken(logits, tc.sc, rng, order, buf, nil)
				if tok == 1 {
					ones++
					if math.Abs(float64(lp)-math.Log(0.75)) > 1e-4 {
						t.Fatalf("logp of token 1 = %v, want log 0.75", lp)
					}
				}
			}
			if got := float64(ones) / n; math.Abs(got-tc.want1) > 0.015 {
				t.Errorf("frequency of token 1 = %.3f, want %.3f", got, tc.want1)
			}
		})
	}
}

// Allow restricts what is drawn, greedy and sampled, while the log-probs
// stay the model's own over the whole vocabulary.
func TestSampleAllow(t *testing.T) {
	m := sampleModel(t, 2)
	allow := func(_ int, sofar []int) []int {
		if len(sofar) < 3 {
			return []int{5, 3}
		}
		return []int{7}
	}
	prompt := []int{1, 2, 3}
	for _, temp := range []float64{0, 1} {
		sc := SampleConfig{Temperature: temp, TopP: 1, MaxNewTokens: 4, Allow: allow}
		out, err := m.Sample([][]int{prompt}, sc, []*rand.Rand{rand.New(rand.NewPCG(3, 3))})
		if err != nil {
			t.Fatal(err)
		}
		c := out[0]
		if len(c.Tokens) != 4 || c.Tokens[3] != 7 {
			t.Fatalf("temperature %v: tokens %v, want 4 ending in 7", temp, c.Tokens)
		}
		seq := append(append([]int(nil), prompt...), c.Tokens...)
		logp, err := m.Forward(seq, 1, len(seq), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, tok := range c.Tokens {
			if i < 3 && tok != 3 && tok != 5 {
				t.Fatalf("temperature %v: token %d is %d, not allowed", temp, i, tok)
			}
			if d := math.Abs(float64(logp[len(prompt)-1+i] - c.LogProbs[i])); d > 1e-5 {
				t.Fatalf("temperature %v token %d: log-prob %v, Forward %v", temp, i, c.LogProbs[i], logp[len(prompt)-1+i])
			}
		}
	}
	if _, err := m.Sample([][]int{prompt}, SampleConfig{TopP: 1, MaxNewTokens: 2, Allow: func(int, []int) []int { return []int{99} }}, []*rand.Rand{nil}); err == nil {
		t.Fatal("Allow outside the vocabulary: want an error")
	}
}

// A cache kept across calls gives exactly what sampling each prompt from
// scratch gives: turn after turn of a conversation (the other side's
// tokens appended to what was sampled), after a prompt that parts from
// the cache early (old turns dropped), with forced tokens, greedy and
// sampled, and beside sequences that keep no cache.
func TestSampleKVMatchesSample(t *testing.T) {
	m := sampleModel(t, 2)
	force := func(_ int, toks []int) []int {
		if toks[len(toks)-1]%5 == 0 {
			return []int{11, 12}
		}
		return nil
	}
	for _, sc := range []SampleConfig{
		{Temperature: 0, TopP: 1, MaxNewTokens: 3},
		{Temperature: 1, TopP: 0.9, MaxNewTokens: 4, Force: force},
	} {
		kvs := []*KV{m.NewKV(), nil, m.NewKV()}
		convs := [][]int{{1, 2, 3}, {4, 5}, {6}}
		for turn := 0; turn < 5; turn++ {
			if turn == 3 {
				convs[0] = append([]int{1, 2}, convs[0][len(convs[0])-3:]...) // drop the middle
			}
			rngs := func() []*rand.Rand {
				r := make([]*rand.Rand, len(convs))
				for i := range r {
					r[i] = rand.New(rand.NewPCG(uint64(turn), uint64(i)))
				}
				return r
			}
			got, err := m.SampleKV(convs, kvs, sc, rngs())
			if err != nil {
				t.Fatal(err)
			}
			want, err := m.Sample(convs, sc, rngs())
			if err != nil {
				t.Fatal(err)
			}
			for i := range convs {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("temperature %v turn %d seq %d: cached %+v, from scratch %+v", sc.Temperature, turn, i, got[i], want[i])
				}
				if kv := kvs[i]; kv != nil && kv.Len() != len(convs[i])+len(got[i].Tokens)-1 {
					t.Fatalf("turn %d seq %d: cache holds %d tokens, want %d", turn, i, kv.Len(), len(convs[i])+len(got[i].Tokens)-1)
				}
				// The other side answers with two tokens; keep within the context.
				next := append(append(append([]int(nil), convs[i]...), got[i].Tokens...), 7, 8)
				if len(next) > m.Config.Context-sc.MaxNewTokens-4 {
					next = append([]int{next[0]}, next[len(next)-8:]...)
				}
				convs[i] = next
			}
		}
		for _, kv := range kvs {
			if kv != nil {
				kv.Release()
				if kv.Len() != 0 {
					t.Fatal("a released cache still holds tokens")
				}
			}
		}
	}
	other := sampleModel(t, 1)
	if _, err := m.SampleKV([][]int{{1}}, []*KV{other.NewKV()}, DefaultSampleConfig(), []*rand.Rand{rand.New(rand.NewPCG(1, 1))}); err == nil {
		t.Fatal("another model's cache: want an error")
	}
	kv := m.NewKV()
	if _, err := m.SampleKV([][]int{{1}, {2}}, []*KV{kv, kv}, DefaultSampleConfig(), []*rand.Rand{rand.New(rand.NewPCG(1, 1)), rand.New(rand.NewPCG(1, 2))}); err == nil {
		t.Fatal("one cache for two prompts: want an error")
	}
}

// TestSampleSeesMovedWeights: a Sample call after the weights moved (an
// optimizer step between rollouts) samples from the moved weights, as a
// fresh copy of the model does, in fp32 and bf16: the weights a call
// packs for its decoding steps are packed anew each call, never kept
// from the last.
func TestSampleSeesMovedWeights(t *testing.T) {
	precisions := []Precision{FP32}
	if gemm.HasBF16() {
		precisions = append(precisions, BF16)
	}
	prompts := [][]int{{1, 2, 3}, {7}, {4, 4, 4, 4, 4, 4, 4, 4}}
	sc := SampleConfig{Temperature: 0, TopP: 1, MaxNewTokens: 8}
	rngs := []*rand.Rand{nil, nil, nil}
	for _, prec := range precisions {
		prev := SetSamplePrecision(prec)
		m := sampleModel(t, 2)
		before, err := m.Sample(prompts, sc, rngs)
		if err != nil {
			t.Fatal(err)
		}
		// Move every weight: greedy completions that stayed the same
		// would not show stale weights.
		r := rand.New(rand.NewPCG(5, 6))
		for i := range m.Params.Data {
			m.Params.Data[i] += float32(r.NormFloat64() * 0.5)
		}
		got, err := m.Sample(prompts, sc, rngs)
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.Clone().Sample(prompts, sc, rngs)
		if err != nil {
			t.Fatal(err)
		}
		moved := false
		for i := range want {
			if !sameCompletion(got[i], want[i]) {
				t.Fatalf("%v, completion %d after the weights moved: %+v, a fresh copy samples %+v", prec, i, got[i], want[i])
			}
			moved = moved || !sameCompletion(before[i], want[i])
		}
		if !moved {
			t.Fatalf("%v: moving the weights changed no completion; the test cannot see stale weights", prec)
		}
		SetSamplePrecision(prev)
	}
}
