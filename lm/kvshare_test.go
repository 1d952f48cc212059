package lm

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/calibrl/calibrl/gemm"
)

// shareModel is a small model with room for three turns of prompts that
// share prefixes; HS 16 takes the AVX2 kernels, HS 6 the scalar loops.
func shareModel(t *testing.T, dim int) *Model {
	t.Helper()
	return peakedModel(t, Config{VocabSize: 37, Context: 96, Dim: dim, Layers: 2, Heads: 2}, rand.NewPCG(5, 6), 2)
}

// sharePrompts are opening prompts as a batch of conversations has them:
// groups of equal prompts, groups that share only a template, a prompt
// that is a prefix of others, one that shares too little to count, and
// unrelated ones.
func sharePrompts() [][]int {
	rng := rand.New(rand.NewPCG(9, 9))
	seq := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = 1 + rng.IntN(36)
		}
		return s
	}
	cat := func(a ...[]int) []int { return slices.Concat(a...) }
	tmpl, a, b := seq(12), seq(6), seq(9)
	var ps [][]int
	for range 4 {
		ps = append(ps, cat(tmpl, a))
	}
	ps = append(ps, seq(3))
	for range 3 {
		ps = append(ps, cat(tmpl, b))
	}
	ps = append(ps, tmpl[:10], cat(tmpl, a, seq(4)), cat(tmpl[:5], seq(7)), seq(14))
	return ps
}

// shareCounts is what a scenario's first turn shared: prompt positions
// read from another sequence's cache, and slots left reading a base.
type shareCounts struct{ rows, based int }

// shareScenario plays three turns of sampling over kept caches, batched
// (batched: one SampleKV call per turn, so prefixes are shared) or one
// sequence per call (nothing to share). The second turn rewrites some
// sequences from below what others read of them (a conversation cut to
// fit its context); before the third, some caches are released and
// their sequences start again. It returns every completion, and how
// much the first turn shared.
func shareScenario(t *testing.T, m *Model, batched bool) ([]Completion, shareCounts) {
	t.Helper()
	prompts := sharePrompts()
	force := func(_ int, toks []int) []int {
		if toks[len(toks)-1]%5 == 0 {
			return []int{11, 12}
		}
		return nil
	}
	kvs := make([]*KV, len(prompts))
	for i := range kvs {
		kvs[i] = m.NewKV()
	}
	var all []Completion
	var shared shareCounts
	sample := func(turn int, convs [][]int) []Completion {
		sc := SampleConfig{Temperature: 1, TopP: 1, MaxNewTokens: 6, Force: force}
		rng := func(i int) *rand.Rand { return rand.New(rand.NewPCG(uint64(i), uint64(turn))) }
		if batched {
			rngs := make([]*rand.Rand, len(convs))
			for i := range rngs {
				rngs[i] = rng(i)
			}
			out, err := m.SampleKV(convs, kvs, sc, rngs)
			if err != nil {
				t.Fatal(err)
			}
			if turn == 0 {
				shared.rows = m.dec.sharedRows
			}
			return out
		}
		out := make([]Completion, len(convs))
		for i, c := range convs {
			o, err := m.SampleKV([][]int{c}, []*KV{kvs[i]}, sc, []*rand.Rand{rng(i)})
			if err != nil {
				t.Fatal(err)
			}
			if turn == 0 {
				shared.rows += m.dec.sharedRows
			}
			out[i] = o[0]
		}
		return out
	}
	out := sample(0, prompts)
	all = append(all, out...)
	for _, kv := range kvs {
		if kv.slot.base != nil {
			shared.based++
		}
	}
	convs := make([][]int, len(prompts))
	for i, p := range prompts {
		convs[i] = slices.Concat(p, out[i].Tokens, []int{7})
	}
	convs[0] = append(slices.Clone(prompts[0][:5]), 4, 4, 4)  // first of a group of equal prompts, which the others read
	convs[2] = append(slices.Clone(prompts[2][:12]), 5, 5, 5) // a later one, below what it reads from the first
	convs[5] = append(slices.Clone(prompts[5][:14]), 3, 3, 3) // one of the other group
	convs[8] = append(slices.Clone(prompts[8][:2]), 6, 6)     // the prompt others extend
	out = sample(1, convs)
	all = append(all, out...)
	for _, i := range []int{1, 8, 9} {
		kvs[i].Release()
	}
	for i, c := range convs {
		convs[i] = slices.Concat(c, out[i].Tokens, []int{7})
	}
	all = append(all, sample(2, convs)...)
	for _, kv := range kvs {
		kv.Release()
	}
	return all, shared
}

// Sharing prompt prefixes changes no token and no log-probability's
// bit, through turns that extend, rewrite and release shared caches;
// and it does share (a test of a sharer that shares nothing would pass
// trivially). fp32 caches share by reference, bf16 caches by copy; HS 16
// and 32 take the vector kernels of their precision, HS 6 the loops.
func TestSharedPrefixesChangeNothing(t *testing.T) {
	type shareCase struct {
		prec Precision
		dim  int
	}
	cases := []shareCase{{FP32, 32}, {FP32, 12}}
	if gemm.HasBF16() {
		cases = append(cases, shareCase{BF16, 64}, shareCase{BF16, 12})
	}
	for _, c := range cases {
		prev := SetSamplePrecision(c.prec)
		// A model each: slots the first run freed would hold the very
		// keys a slot that failed to copy them should lack.
		want, none := shareScenario(t, shareModel(t, c.dim), false)
		m := shareModel(t, c.dim)
		got, shared := shareScenario(t, m, true)
		SetSamplePrecision(prev)
		if none != (shareCounts{}) || shared.rows < 60 || (c.prec == FP32 && shared.based < 8) {
			t.Fatalf("%v dim %d: one at a time %+v, batched %+v; want nothing shared alone, and batched ≥ 60 rows (fp32: ≥ 8 slots on a base)", c.prec, c.dim, none, shared)
		}
		for i := range want {
			if !sameCompletion(got[i], want[i]) {
				t.Fatalf("%v dim %d, completion %d: %+v shared, %+v alone", c.prec, c.dim, i, got[i], want[i])
			}
		}
		// Every slot is back on the free list: none leaked by a count.
		d := m.decoder(0)
		for _, sl := range d.free {
			if sl.refs != 0 || sl.base != nil {
				t.Fatalf("%v dim %d: a free slot with %d holders and base %v", c.prec, c.dim, sl.refs, sl.base != nil)
			}
		}
	}
}

// sharePlan points each fresh prompt at the earlier sorted one it shares
// most with, a run of equal prompts at its first, a shared length a
// multiple of shareAlign and short of the prompt's last token, and shares
// nothing below minSharedPrefix or with prompts that are not fresh.
func TestSharePlan(t *testing.T) {
	var tmpl []int
	for i := range 16 {
		tmpl = append(tmpl, 1+i)
	}
	a := append(slices.Clone(tmpl), 20, 21, 22, 23, 24, 25, 26, 27, 28)             // 25 tokens
	b := append(slices.Clone(tmpl), 30, 31, 32, 33, 34, 35, 36, 30, 31, 32, 33, 34) // 28 tokens
	x := []int{1, 2, 3, 36, 9, 9, 9, 9, 9, 9, 9, 9, 9}
	prompts := [][]int{b, a, b, a, x, a, b}
	parent, n, depth := sharePlan(prompts, []int{0, 1, 2, 3, 4, 5})
	// Sorted: 1, 3, 5 (equal: 24 of 25 tokens, read from 1), 0 (the
	// template, 16, from 1), 2 (equal to 0: 24 of 28, from 0), 4 (3
	// tokens in common: none). 6 is not fresh.
	want := []struct{ parent, n, depth int }{{1, 16, 1}, {-1, 0, 0}, {0, 24, 2}, {1, 24, 1}, {-1, 0, 0}, {1, 24, 1}, {-1, 0, 0}}
	for s, w := range want {
		if parent[s] != w.parent || (w.parent >= 0 && (n[s] != w.n || depth[s] != w.depth)) {
			t.Errorf("prompt %d: parent %d, n %d, depth %d; want %+v", s, parent[s], n[s], depth[s], w)
		}
	}
}
