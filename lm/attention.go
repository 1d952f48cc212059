package lm

import (
	"math"

	"github.com/calibrl/calibrl/gemm"
)

// attnBlock is the row-block size for causal attention: scores for rows
// [r0,r1) are computed only against keys [0,r1), so the masked upper
// triangle costs at most one block's worth of wasted work per row block.
// Entries of a row past its block's end r1 are never written nor read.
const attnBlock = 64

// attentionForward: causal multi-head self-attention.
//
//	out [B,T,C]      per head h, columns h·HS..(h+1)·HS: softmax(q·kᵀ/√HS)·v
//	att [B,NH,T,T]   saved softmax probabilities (zero above the diagonal
//	                 up to the end of the row's attnBlock)
//	qkv [B,T,3C]     q, k, v side by side along the last axis
//
// Work is split over (b,h) pairs; each pair is computed the same way
// whichever goroutine runs it.
func attentionForward(workers int, out, att, qkv []float32, B, T, C, NH int) {
	HS := C / NH
	C3 := 3 * C
	scale := float32(1 / math.Sqrt(float64(HS)))
	parallelFor(workers, B*NH, func(lo, hi int) {
		for bh := lo; bh < hi; bh++ {
			b, h := bh/NH, bh%NH
			base := b * T * C3
			q, k, v := qkv[base+h*HS:], qkv[base+C+h*HS:], qkv[base+2*C+h*HS:]
			o := out[b*T*C+h*HS:]
			P := att[bh*T*T : (bh+1)*T*T]
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

// attentionBackward: dqkv[B,T,3C] = ∂/∂qkv (overwritten), from dout [B,T,C]
// and the saved att, qkv and forward output out [B,T,C]. scratch needs
// workers·T·T floats.
//
// The softmax backward needs Σ_j P[t,j]·dP[t,j] per row; since
// dP[t,j] = do[t]·v[j] that equals do[t]·o[t] (FlashAttention's D term), a
// dot of HS numbers instead of t.
func attentionBackward(workers int, dqkv, dout, att, qkv, out []float32, B, T, C, NH int, scratch []float32) {
	HS := C / NH
	C3 := 3 * C
	scale := float32(1 / math.Sqrt(float64(HS)))
	clear(dqkv[:B*T*C3])
	parallelForW(workers, B*NH, func(w, lo, hi int) {
		dP := scratch[w*T*T : (w+1)*T*T]
		for bh := lo; bh < hi; bh++ {
			b, h := bh/NH, bh%NH
			base := b * T * C3
			q, k, v := qkv[base+h*HS:], qkv[base+C+h*HS:], qkv[base+2*C+h*HS:]
			dq, dk, dv := dqkv[base+h*HS:], dqkv[base+C+h*HS:], dqkv[base+2*C+h*HS:]
			do := dout[b*T*C+h*HS:]
			o := out[b*T*C+h*HS:]
			P := att[bh*T*T : (bh+1)*T*T]
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
		}
	})
}
