package lm

// The KV cache the sampler keeps per conversation across turns, and the
// decoder's batched prefill and step over it.

import (
	"math"
	"sync"

	"github.com/calibrl/calibrl/gemm"
)

// KV is one sequence's key/value cache kept across SampleKV calls. It is
// valid for the weights it was filled with: Release it when the sequence
// is over or the weights change. Like the model, it is not safe for
// concurrent use.
type KV struct {
	m    *Model
	ids  []int   // the tokens whose keys and values slot holds, at positions 0, 1, …
	slot *kvSlot // nil while it holds nothing
}

// NewKV returns an empty cache for a sequence of m.
func (m *Model) NewKV() *KV { return &KV{m: m} }

// Len is how many leading tokens of the sequence the cache holds.
func (kv *KV) Len() int { return len(kv.ids) }

// Release empties the cache and gives its memory back to the model for
// other sequences; the cache can be filled again.
func (kv *KV) Release() {
	if kv.slot != nil {
		kv.m.dropSlot(kv.slot)
		kv.slot = nil
	}
	kv.ids = kv.ids[:0]
}

// ensureSlot gives kv a slot holding keys and values in bf16 or fp32.
func (kv *KV) ensureSlot(bf16 bool) *kvSlot {
	if kv.slot == nil {
		kv.slot = kv.m.newSlot()
	}
	kv.slot.ensure(kv.m.Config, bf16)
	return kv.slot
}

// kvSlot is the memory of one sequence's cache: per layer [NH,Context,HS],
// each head's keys (values) contiguous. A bf16 run keeps them in bf16
// (kb, vb; bf16 set): decoding reads the whole cache at every step, and
// half the bytes is the larger part of its time.
//
// A slot may share its sequence's first n positions with another
// sequence that has the same tokens there (kvshare.go): those positions
// are then read from base's sequence, and this slot's own memory holds
// positions n on, at their usual offsets.
type kvSlot struct {
	k, v   [][]float32
	kb, vb [][]uint16
	bf16   bool // kb and vb hold the sequence, not k and v

	base *kvSlot // holds positions [0, n) of this slot's sequence; nil: none
	n    int
	// refs counts the KV that owns the slot and the slots based on it;
	// the slot is free again at zero. shared is the longest prefix a slot
	// based on this one reads: while refs > 1 the owner may not write
	// below it.
	refs, shared int
}

// newSlot takes a free slot of the model's, or a new empty one.
func (m *Model) newSlot() *kvSlot {
	d := m.decoder(0)
	if n := len(d.free); n > 0 {
		sl := d.free[n-1]
		d.free = d.free[:n-1]
		sl.refs = 1
		return sl
	}
	return &kvSlot{refs: 1}
}

// dropSlot lets one holder of sl go: the slot, and in turn its base, is
// free once no KV and no other slot holds it.
func (m *Model) dropSlot(sl *kvSlot) {
	sl.refs--
	switch {
	case sl.refs == 1:
		sl.shared = 0 // one holder left: nobody else reads the slot
	case sl.refs == 0:
		if sl.base != nil {
			m.dropSlot(sl.base)
		}
		sl.base, sl.n, sl.shared = nil, 0, 0
		d := m.decoder(0)
		d.free = append(d.free, sl)
	}
}

// ensure makes sl hold keys and values in bf16 or fp32, allocating that
// form's memory the first time the slot needs it (a slot that served
// both precisions keeps both).
func (sl *kvSlot) ensure(cfg Config, bf16 bool) {
	sl.bf16 = bf16
	n := cfg.Context * cfg.Dim
	switch {
	case bf16 && sl.kb == nil:
		sl.kb, sl.vb = make([][]uint16, cfg.Layers), make([][]uint16, cfg.Layers)
		for l := range sl.kb {
			sl.kb[l], sl.vb[l] = make([]uint16, n), make([]uint16, n)
		}
	case !bf16 && sl.k == nil:
		sl.k, sl.v = make([][]float32, cfg.Layers), make([][]float32, cfg.Layers)
		for l := range sl.k {
			sl.k[l], sl.v[l] = make([]float32, n), make([]float32, n)
		}
	}
}

func commonPrefix(a, b []int) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// kvRow is one token to push through the decoder: sequence, position, id.
type kvRow struct{ seq, pos, tok int }

// decodeState is the step buffers of the model's sampler and the free
// cache slots.
type decodeState struct {
	x, ln, att []float32 // [R,C]
	qkv        []float32 // [R,3C]
	h, hTanh   []float32 // [R,4C]
	mean, rstd []float32 // [R]
	logits     []float32 // [R,V]
	scores     []float32 // [workers,Context]
	rows       []kvRow
	cuts       []int     // step's lanes
	order      []int     // [2V] top-p scratch
	probs      []float32 // [V] sampling scratch
	free       []*kvSlot // released cache slots
	// sharedRows counts the prompt positions the last Sample call read
	// from another sequence's cache instead of computing them (kvshare.go).
	sharedRows int
	// bf16 is &packed while this Sample call runs in bf16, else nil.
	bf16   *packedWeights
	packed packedWeights
	// f32 is the weights packed for an fp32 Sample call.
	f32 packedF32
}

// decoder returns the model's sampler state with step buffers for R rows,
// growing the previous one when it is too small.
func (m *Model) decoder(R int) *decodeState {
	cfg := m.Config
	C, H, V, W := cfg.Dim, cfg.Hidden(), cfg.VocabSize, m.workers()
	d := m.dec
	if d == nil {
		d = &decodeState{order: make([]int, 2*V), probs: make([]float32, V)}
		m.dec = d
	}
	if len(d.mean) < R || len(d.scores) < W*cfg.Context {
		R = max(R, len(d.mean))
		f := func(n int) []float32 { return make([]float32, n) }
		d.x, d.ln, d.att, d.qkv = f(R*C), f(R*C), f(R*C), f(3*R*C)
		d.h, d.hTanh, d.mean, d.rstd = f(R*H), f(R*H), f(R), f(R)
		d.logits, d.scores = f(R*V), f(max(W, len(d.scores)/cfg.Context)*cfg.Context)
		d.rows = make([]kvRow, 0, R)
	}
	return d
}

// weights packs m's current weights for the steps of one Sample call, in
// bf16 or fp32: an optimizer step may have moved them since the last.
func (d *decodeState) weights(m *Model, bf16 bool) {
	d.bf16 = nil
	if bf16 {
		d.packed.pack(m)
		d.bf16 = &d.packed
		return
	}
	packForward(&d.f32, m)
}

// layerMM is layer l's forward product in a decoding step, on the
// weights the Sample call packed: out[N,OC] = x·w + b (+ resid), bf16 on
// pbf[l] while the call runs in bf16, else fp32 on psf[l] with
// matmulForward's bits.
func (d *decodeState) layerMM(W int, out, x []float32, pbf []gemm.PackedB, psf []gemm.PackedS, l int, b, resid []float32, N, IC, OC int) {
	if d.bf16 != nil {
		matmulForwardBF16(W, out, x, &pbf[l], b, resid, N, IC, OC)
		return
	}
	matmulInit(W, out, b, resid, N, OC)
	gemm.SgemmPackedWorkers(W, N, 1, x, IC, &psf[l], 1, out, OC)
}

// prefill steps rows through in order, in steps of at most the rows the
// decoder was sized for, and returns the logits of the rows listed in heads
// (ascending), as one step would: a sequence whose rows fall in two steps
// attends, in the later one, to the keys and values the earlier one
// cached, by the same per-row arithmetic.
func (d *decodeState) prefill(m *Model, rows []kvRow, heads []int, slots []*kvSlot) []float32 {
	n := len(d.mean)
	if len(rows) <= n {
		return d.step(m, rows, heads, slots)
	}
	V := m.Config.VocabSize
	out := make([]float32, 0, len(heads)*V)
	h := 0
	for a := 0; a < len(rows); a += n {
		b := min(a+n, len(rows))
		var hs []int
		for ; h < len(heads) && heads[h] < b; h++ {
			hs = append(hs, heads[h]-a)
		}
		out = append(out, d.step(m, rows[a:b], hs, slots)...)
	}
	return out
}

// step pushes rows through every block, writing their keys and values into
// their sequence's cache slot (slots[row.seq]), and returns logits
// [len(heads),V] for the rows listed in heads. A row attends to its own
// sequence's cache up to its position, so several rows of one sequence (a
// prompt) can share a step; a sequence's rows are contiguous.
//
// The rows are dealt into one lane per worker, whole sequences each
// (lanes), and every lane runs the whole step alone on its goroutine: a
// decoding step's products are a few dozen rows, and splitting each of
// them, and each layer's norm, attention and GELU, over the workers
// cost about 40 hand-offs a step, which left 2 cores 1.14× one core's
// rate (64 sequences of model A). Every row's arithmetic is the same in
// any lane (the products' bits do not depend on how their rows are
// split), so the lanes change no token.
func (d *decodeState) step(m *Model, rows []kvRow, heads []int, slots []*kvSlot) []float32 {
	W := min(m.workers(), len(d.scores)/m.Config.Context)
	cuts := d.lanes(rows, W, m.Config.Dim)
	if cuts == nil {
		d.stepRows(m, W, 0, 0, len(rows), rows, heads, 0, slots)
		return d.logits[:len(heads)*m.Config.VocabSize]
	}
	var wg sync.WaitGroup
	k := 0 // heads of the lanes before
	for lane := 0; lane+1 < len(cuts); lane++ {
		lo, hi := cuts[lane], cuts[lane+1]
		k0 := k
		for k < len(heads) && heads[k] < hi {
			k++
		}
		hs := heads[k0:k]
		if lane == len(cuts)-2 {
			d.stepRows(m, 1, lane, lo, hi, rows, hs, k0, slots)
			break
		}
		wg.Go(func() { d.stepRows(m, 1, lane, lo, hi, rows, hs, k0, slots) })
	}
	wg.Wait()
	return d.logits[:len(heads)*m.Config.VocabSize]
}

// laneCost is a row's rough cost in the units of one attention
// multiply-add per key: its products take about 12·C² multiply-adds, its
// attention 2·C per key it reads (pos+1 keys), and reading a key from
// memory costs about what its multiply-adds do.
func laneCost(r kvRow, C int) int { return 6*C + r.pos + 1 }

// lanes cuts rows into at most W lanes of whole sequences and near-equal
// cost, returning the cut points (lane i is rows[cuts[i]:cuts[i+1]]), or
// nil when the rows should share one lane spread over the workers
// instead: one worker, one sequence, rows out of sequence order, or lanes
// a quarter over their share (a long prompt beside short ones).
func (d *decodeState) lanes(rows []kvRow, W, C int) []int {
	if W < 2 || len(rows) < 2 {
		return nil
	}
	total := 0
	for i, r := range rows {
		if i > 0 && r.seq < rows[i-1].seq {
			return nil
		}
		total += laneCost(r, C)
	}
	// Close a lane at the first sequence boundary where it has its share.
	cuts := append(d.cuts[:0], 0)
	sum, start, worst := 0, 0, 0
	for i, r := range rows {
		if i > 0 && r.seq != rows[i-1].seq && len(cuts) < W && sum*W >= total*len(cuts) {
			worst = max(worst, sum-start)
			cuts, start = append(cuts, i), sum
		}
		sum += laneCost(r, C)
	}
	worst = max(worst, sum-start)
	d.cuts = append(cuts, len(rows))
	if len(d.cuts) < 3 || 4*worst*W > 5*total {
		return nil
	}
	return d.cuts
}

// stepRows is step for rows[lo:hi] on W workers, whose per-worker score
// scratch starts at worker w0's: it uses the step buffers' rows lo..hi
// only, and writes the logits of its heads (rows of rows, ascending) from
// logits row k0 on.
func (d *decodeState) stepRows(m *Model, W, w0, lo, hi int, rows []kvRow, heads []int, k0 int, slots []*kvSlot) {
	cfg, p := m.Config, m.Params
	HS, ctx := cfg.HeadSize(), cfg.Context
	C, H, V, NH := cfg.Dim, cfg.Hidden(), cfg.VocabSize, cfg.Heads
	R := hi - lo
	rows = rows[lo:hi]
	x, ln, att := d.x[lo*C:hi*C], d.ln[lo*C:hi*C], d.att[lo*C:hi*C]
	qkv, h := d.qkv[lo*3*C:hi*3*C], d.h[lo*H:hi*H]
	hTanh, mean, rstd := d.hTanh[lo*H:hi*H], d.mean[lo:hi], d.rstd[lo:hi]
	scale := float32(1 / math.Sqrt(float64(HS)))
	for i, r := range rows {
		xi := x[i*C : (i+1)*C]
		w, pe := p.WTE[r.tok*C:(r.tok+1)*C], p.WPE[r.pos*C:(r.pos+1)*C]
		for c := range xi {
			xi[c] = w[c] + pe[c]
		}
	}
	bf, pw := d.bf16 != nil, d.bf16
	if !bf {
		pw = &unpacked
	}
	for l := 0; l < cfg.Layers; l++ {
		lp := p.Layer(l)
		layernormForward(W, ln, mean, rstd, x, lp.LN1W, lp.LN1B, R, C)
		d.layerMM(W, qkv, ln, pw.qkv, d.f32.qkv, l, lp.QKVB, nil, R, C, 3*C)
		for i, r := range rows {
			sl := slots[r.seq]
			for h := 0; h < NH; h++ {
				at := (h*ctx + r.pos) * HS
				k, v := qkv[i*3*C+C+h*HS:][:HS], qkv[i*3*C+2*C+h*HS:][:HS]
				if bf {
					putBF16Row(sl.kb[l][at:at+HS], k)
					putBF16Row(sl.vb[l][at:at+HS], v)
					continue
				}
				copy(sl.k[l][at:at+HS], k)
				copy(sl.v[l][at:at+HS], v)
			}
		}
		parallelForW(W, R*NH, func(w, a, b int) {
			sc := d.scores[(w0+w)*ctx : (w0+w+1)*ctx]
			for task := a; task < b; task++ {
				i, h := task/NH, task%NH
				r := rows[i]
				q := qkv[i*3*C+h*HS : i*3*C+(h+1)*HS]
				base := h * ctx * HS
				o := att[i*C+h*HS : i*C+(h+1)*HS]
				sl := slots[r.seq]
				switch {
				case bf:
					attendRowBF16(o, sc, q, sl.kb[l][base:], sl.vb[l][base:], r.pos+1, HS, scale)
				case sl.base != nil:
					attendShared(o, sc, q, sl, l, base, r.pos+1, scale)
				default:
					attendRow(o, sc, q, sl.k[l][base:], sl.v[l][base:], r.pos+1, HS, scale)
				}
			}
		})
		d.layerMM(W, x, att, pw.attProj, d.f32.attProj, l, lp.AttProjB, x, R, C, C)
		layernormForward(W, ln, mean, rstd, x, lp.LN2W, lp.LN2B, R, C)
		d.layerMM(W, h, ln, pw.fc, d.f32.fc, l, lp.FCB, nil, R, C, H)
		geluForward(W, h, hTanh, h, R*H)
		d.layerMM(W, x, h, pw.fcProj, d.f32.fcProj, l, lp.FCProjB, x, R, H, C)
	}
	// Final norm and logits only for the rows that sample, gathered into
	// the first rows of this lane's att.
	K := len(heads)
	if K == 0 {
		return // a prefill step with no prompt's last token
	}
	for k, i := range heads {
		copy(att[k*C:(k+1)*C], x[(i-lo)*C:(i-lo+1)*C])
	}
	layernormForward(W, ln, mean, rstd, att, p.LNFW, p.LNFB, K, C)
	logits := d.logits[k0*V : (k0+K)*V]
	if d.bf16 != nil {
		gemm.BgemmWorkers(W, K, 1, ln, C, &d.bf16.lmHead, 0, logits, V)
	} else {
		gemm.SgemmPackedWorkers(W, K, 1, ln, C, &d.f32.lmHead, 0, logits, V)
	}
}
