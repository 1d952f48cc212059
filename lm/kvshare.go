package lm

// Shared prompt prefixes. The conversations a batch opens often begin
// with the same tokens: a GRPO group's G conversations of one instance
// share their whole opening prompt, and every conversation of a task
// shares the agent's instructions. Reading such a prefix once and letting
// the other sequences' slots point at it saves its prefill G-fold, and
// the decoding steps then read its keys and values from one place, which
// the core's caches keep, instead of from G copies in memory (a rollout's
// attention is bound by memory: BenchmarkAttendLane).
//
// Nothing changes a bit: a position's keys and values depend only on the
// tokens up to it (the per-row arithmetic is the same in any step or
// lane), the scores kernel meets the same blocks of keys (shareAlign),
// and the mix adds the
// keys' values into o in key order whether the keys lie in one slot or
// in several (attendShared runs mixAVX2 over each part in turn, which
// loads and stores o between them).
//
// A bf16 cache shares by copy: its mix keeps four partial sums across
// keys, which reading the keys in parts would regroup, so a sequence
// that shares takes a copy of its parent's prefix once the parent's
// prefill phase has computed it (copyPrefix). The prefill is saved;
// the decoding steps' reads are not.

import "slices"

// shareAlign is the scores kernel's block of keys (scoresAVX2 takes
// eight at a time, then the rest one by one, and a key's score in a
// block is not bit for bit its score alone): a shared prefix's length is
// a multiple of it, so every part of a row's keys starts at a block.
const shareAlign = 8

// minSharedPrefix is the shortest prefix worth sharing: below it the
// saved reads do not pay for a second scores and mix call per row.
const minSharedPrefix = 8

// maxShareDepth bounds a chain of slots based on slots, so that a row's
// attention reads at most this many parts (attendShared's array).
const maxShareDepth = 4

// kvSeg is one part of a row's keys: positions [lo, hi) of a layer's
// head, read from k and v at their own offsets (position j at j·HS).
type kvSeg struct {
	k, v   []float32
	lo, hi int
}

// segments lists where sl's sequence keeps positions [0, n) of layer l's
// head starting at offset base, in ascending order, into buf.
func (sl *kvSlot) segments(buf []kvSeg, l, base, n int) []kvSeg {
	buf = buf[:0]
	hi := n
	for cur := sl; hi > 0; cur = cur.base {
		lo := 0
		if cur.base != nil {
			lo = min(cur.n, hi)
		}
		if lo < hi {
			buf = append(buf, kvSeg{k: cur.k[l][base:], v: cur.v[l][base:], lo: lo, hi: hi})
		}
		hi = lo
	}
	slices.Reverse(buf)
	return buf
}

// attendShared is attendRow for a slot based on others: the same scores,
// softmax and mix, each part of the keys read where it lies.
func attendShared(o, s, q []float32, sl *kvSlot, l, base, n int, scale float32) {
	var buf [maxShareDepth + 1]kvSeg
	segs := sl.segments(buf[:0], l, base, n)
	s = s[:n]
	HS := len(q)
	for _, g := range segs {
		if len(g.k) < g.hi*HS || len(g.v) < g.hi*HS {
			panic("lm: attendShared cache slice too short")
		}
		scoresRow(s[g.lo:g.hi], q, g.k[g.lo*HS:], HS, scale)
	}
	softmaxCausalRow(s, n-1)
	clear(o)
	for _, g := range segs {
		mixRow(o, s[g.lo:g.hi], g.v[g.lo*HS:], HS)
	}
}

// copyPrefix writes positions [0, n) of src's sequence into dst's own
// memory, at src's precision: fp32 from wherever src reads them (its
// base's slots too), bf16 from src itself (a bf16 slot has no base).
func (m *Model) copyPrefix(dst, src *kvSlot, n int) {
	cfg := m.Config
	HS := cfg.HeadSize()
	var buf [maxShareDepth + 1]kvSeg
	for l := 0; l < cfg.Layers; l++ {
		for h := 0; h < cfg.Heads; h++ {
			base := h * cfg.Context * HS
			if src.bf16 {
				copy(dst.kb[l][base:base+n*HS], src.kb[l][base:base+n*HS])
				copy(dst.vb[l][base:base+n*HS], src.vb[l][base:base+n*HS])
				continue
			}
			for _, g := range src.segments(buf[:0], l, base, n) {
				a, b := base+g.lo*HS, base+g.hi*HS
				copy(dst.k[l][a:b], g.k[g.lo*HS:g.hi*HS])
				copy(dst.v[l][a:b], g.v[g.lo*HS:g.hi*HS])
			}
		}
	}
}

// keep makes kv ready to hold its first keep positions as they are and
// to have positions keep on written: a slot that others read below keep
// is left to them (this KV takes a copy of what it keeps), and a slot
// that reads a base past keep takes its kept part into its own memory.
func (kv *KV) keep(keep int) {
	sl := kv.slot
	if sl == nil || sl.bf16 {
		return // a bf16 slot is never shared
	}
	m := kv.m
	if sl.refs > 1 && keep < sl.shared {
		ns := m.newSlot()
		ns.ensure(m.Config, false)
		m.copyPrefix(ns, sl, keep)
		m.dropSlot(sl)
		kv.slot = ns
		return
	}
	if sl.base != nil && keep < sl.n {
		m.copyPrefix(sl, sl, keep) // positions below keep, from the base, into sl
		m.dropSlot(sl.base)
		sl.base, sl.n = nil, 0
	}
}

// sharePlan picks, among the sequences in fresh (empty caches) and their
// prompts, which sequence's slot each reads a prefix from: parent[s] (-1:
// none) for positions [0, n[s]), and each one's depth in the chain. In
// sorted order a sequence's longest common prefix with any earlier one is
// with its predecessor; a prefix the predecessor itself reads from its
// own base is read from there, so a run of equal prompts all point at
// the first.
func sharePlan(prompts [][]int, fresh []int) (parent, n, depth []int) {
	S := len(prompts)
	parent, n, depth = make([]int, S), make([]int, S), make([]int, S)
	for s := range parent {
		parent[s] = -1
	}
	order := slices.Clone(fresh)
	slices.SortStableFunc(order, func(a, b int) int { return slices.Compare(prompts[a], prompts[b]) })
	for i := 1; i < len(order); i++ {
		s, p := order[i], order[i-1]
		// A multiple of shareAlign, so that the scores kernel's blocks of
		// keys fall where they fall in one slot.
		k := min(commonPrefix(prompts[p], prompts[s]), len(prompts[s])-1) &^ (shareAlign - 1)
		for parent[p] >= 0 && k <= n[p] {
			p = parent[p]
		}
		if k < minSharedPrefix || depth[p]+1 > maxShareDepth {
			continue
		}
		parent[s], n[s], depth[s] = p, k, depth[p]+1
	}
	return parent, n, depth
}
