package lm

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/calibrl/calibrl/gemm"
)

// attnBlock is the row-block size for causal attention: scores for rows
// [r0,r1) are computed only against keys [0,r1), so the masked upper
// triangle costs at most one block's worth of wasted work per row block.
// Entries of a row past its block's end r1 are never written nor read.
const attnBlock = 64

// span is one sequence of a ragged batch: its rows [start, start+n) of
// the [N,·] activations, and its attention probabilities at att[att:],
// NH blocks of n×n.
type span struct {
	start, n, att int
}

// ragged is a batch's layout without its padding, worked out once per
// batch (Model.setBatch) for every layer to read: its sequences end to
// end, so no layer spends work on positions past a sequence's length.
type ragged struct {
	spans   []span
	rows    int   // N = Σ n
	attF    int   // Σ NH·n²: the saved attention probabilities' floats
	longest int   // the longest n: the side of a worker's attention scratch
	order   []int // indices of spans, longest first: the order heads are handed out in
}

// layout lays out sequences of the given lengths end to end, reusing r's
// memory.
func (r *ragged) layout(lens []int, NH int) {
	r.spans, r.order = r.spans[:0], r.order[:0]
	r.rows, r.attF, r.longest = 0, 0, 0
	for i, n := range lens {
		r.spans = append(r.spans, span{start: r.rows, n: n, att: r.attF})
		r.order = append(r.order, i)
		r.rows += n
		r.attF += NH * n * n
		r.longest = max(r.longest, n)
	}
	slices.SortStableFunc(r.order, func(a, b int) int { return lens[b] - lens[a] })
}

// forEachHead runs fn(w, s, h) for every sequence s and head h of r on up
// to workers goroutines, w the worker's index for its scratch. Items are
// handed out one at a time, longest sequence first (the last one handed
// out is then a short one), because a ragged batch's items differ in cost
// by the square of their lengths; each item writes only its own rows, so
// the order never changes a result.
func forEachHead(workers int, r *ragged, NH int, fn func(w int, s span, h int)) {
	n := len(r.spans) * NH
	item := func(i int) (span, int) { return r.spans[r.order[i/NH]], i % NH }
	workers = min(workers, n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			s, h := item(i)
			fn(0, s, h)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				s, h := item(i)
				fn(w, s, h)
			}
		}()
	}
	wg.Wait()
}

// attentionForward: causal multi-head self-attention over a ragged batch.
//
//	out [N,C]        per head h, columns h·HS..(h+1)·HS: softmax(q·kᵀ/√HS)·v,
//	                 each sequence attending within its own rows
//	att [Σ NH·n²]    saved softmax probabilities, per sequence and head an
//	                 n×n block (zero above the diagonal up to the end of
//	                 the row's attnBlock)
//	qkv [N,3C]       q, k, v side by side along the last axis
//
// Each (sequence, head) is computed the same way whichever goroutine runs it.
func attentionForward(workers int, out, att, qkv []float32, r *ragged, C, NH int) {
	HS := C / NH
	C3 := 3 * C
	scale := float32(1 / math.Sqrt(float64(HS)))
	forEachHead(workers, r, NH, func(_ int, s span, h int) {
		T := s.n
		base := s.start * C3
		q, k, v := qkv[base+h*HS:], qkv[base+C+h*HS:], qkv[base+2*C+h*HS:]
		o := out[s.start*C+h*HS:]
		P := att[s.att+h*T*T : s.att+(h+1)*T*T]
		for r0 := 0; r0 < T; r0 += attnBlock {
			r1 := min(r0+attnBlock, T)
			// P[r0:r1, 0:r1] = scale · q[r0:r1]·k[0:r1]ᵀ
			gemm.Sgemm(false, true, r1-r0, r1, HS, scale, q[r0*C3:], C3, k, C3, 0, P[r0*T:], T)
			for t := r0; t < r1; t++ {
				softmaxCausalRow(P[t*T:t*T+r1], t)
			}
			// o[r0:r1] = P[r0:r1, 0:r1]·v[0:r1]
			gemm.Sgemm(false, false, r1-r0, HS, r1, 1, P[r0*T:], T, v, C3, 0, o[r0*C:], C)
		}
	})
}

// softmaxCausalRow turns row t's scores p[0..t] into probabilities and
// zeroes p[t+1..].
func softmaxCausalRow(p []float32, t int) {
	row := p[:t+1]
	scalef(row, 1/expShiftSum(row, maxf(row)))
	clear(p[t+1:])
}

// attentionBackward: dqkv[N,3C] = ∂/∂qkv (overwritten), from dout [N,C]
// and the saved att, qkv and forward output out [N,C]. scratch needs
// workers·T·T floats, T = r.longest.
//
// The softmax backward needs Σ_j P[t,j]·dP[t,j] per row; since
// dP[t,j] = do[t]·v[j] that equals do[t]·o[t] (FlashAttention's D term), a
// dot of HS numbers instead of t.
func attentionBackward(workers int, dqkv, dout, att, qkv, out []float32, r *ragged, C, NH int, scratch []float32) {
	HS := C / NH
	C3 := 3 * C
	scale := float32(1 / math.Sqrt(float64(HS)))
	clear(dqkv[:r.rows*C3])
	sq := r.longest * r.longest
	forEachHead(workers, r, NH, func(w int, s span, h int) {
		T := s.n
		dP := scratch[w*sq : w*sq+T*T]
		base := s.start * C3
		q, k, v := qkv[base+h*HS:], qkv[base+C+h*HS:], qkv[base+2*C+h*HS:]
		dq, dk, dv := dqkv[base+h*HS:], dqkv[base+C+h*HS:], dqkv[base+2*C+h*HS:]
		do := dout[s.start*C+h*HS:]
		o := out[s.start*C+h*HS:]
		P := att[s.att+h*T*T : s.att+(h+1)*T*T]
		for r0 := 0; r0 < T; r0 += attnBlock {
			r1 := min(r0+attnBlock, T)
			// dP[r0:r1, 0:r1] = do[r0:r1]·v[0:r1]ᵀ
			gemm.Sgemm(false, true, r1-r0, r1, HS, 1, do[r0*C:], C, v, C3, 0, dP[r0*T:], T)
			// dS = scale · P⊙(dP − D), in place
			for t := r0; t < r1; t++ {
				D := dotf(do[t*C:t*C+HS], o[t*C:t*C+HS])
				softmaxBackRow(dP[t*T:t*T+t+1], P[t*T:t*T+t+1], D, scale)
				clear(dP[t*T+t+1 : t*T+r1])
			}
			// dq[r0:r1] += dS[r0:r1, 0:r1]·k[0:r1]
			gemm.Sgemm(false, false, r1-r0, HS, r1, 1, dP[r0*T:], T, k, C3, 1, dq[r0*C3:], C3)
		}
		for j0 := 0; j0 < T; j0 += attnBlock {
			j1 := min(j0+attnBlock, T)
			// dv[j0:j1] += P[j0:T, j0:j1]ᵀ·do[j0:T]; dk likewise with dS, q
			gemm.Sgemm(true, false, j1-j0, HS, T-j0, 1, P[j0*T+j0:], T, do[j0*C:], C, 1, dv[j0*C3:], C3)
			gemm.Sgemm(true, false, j1-j0, HS, T-j0, 1, dP[j0*T+j0:], T, q[j0*C3:], C3, 1, dk[j0*C3:], C3)
		}
	})
}
