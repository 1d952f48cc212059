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
