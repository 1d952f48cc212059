package lm

import "github.com/calibrl/calibrl/gemm"

// Layer kernels, each a forward/backward pair. Argument order follows
// llm.c: outputs, saved caches, inputs, parameters, dimensions. Backward
// functions ADD into parameter gradients; activation gradients they write
// are documented per function. N is the number of rows (B·T).

// encoderForward: out[N,C] = wte[tok] + wpe[pos].
// tokens and pos are [N].
func encoderForward(out []float32, tokens, pos []int, wte, wpe []float32, N, C int) {
	for i := 0; i < N; i++ {
		o := out[i*C : (i+1)*C]
		w := wte[tokens[i]*C : (tokens[i]+1)*C]
		p := wpe[pos[i]*C : (pos[i]+1)*C]
		for c := range o {
			o[c] = w[c] + p[c]
		}
	}
}

// encoderBackward: dwte[tok] += dout, dwpe[pos] += dout. Serial: rows that
// share a token add into the same gradient row, and the order must be fixed.
func encoderBackward(dwte, dwpe, dout []float32, tokens, pos []int, N, C int) {
	for i := 0; i < N; i++ {
		d := dout[i*C : (i+1)*C]
		w := dwte[tokens[i]*C : (tokens[i]+1)*C]
		p := dwpe[pos[i]*C : (pos[i]+1)*C]
		for c, v := range d {
			w[c] += v
			p[c] += v
		}
	}
}

const lnEps = 1e-5

// layernormForward: out[N,C] = (x−mean)·rstd·w + b per row; saves mean[N]
// and rstd[N] for backward.
func layernormForward(workers int, out, mean, rstd, x, w, b []float32, N, C int) {
	parallelFor(workersFor(workers, N*C), N, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			mean[i], rstd[i] = lnRowForward(out[i*C:(i+1)*C], x[i*C:(i+1)*C], w, b)
		}
	})
}

// layernormBackward: dx[N,C] += ∂/∂x, dw[C] += Σ dout·x̂, db[C] += Σ dout.
// scratch needs 2·reduceChunks·C floats.
func layernormBackward(workers int, dx, dw, db, dout, x, w, mean, rstd []float32, N, C int, scratch []float32) {
	chunks := reduceChunks
	if N < chunks {
		chunks = 1
	}
	pw, pb := scratch[:chunks*C], scratch[chunks*C:2*chunks*C]
	parallelFor(workersFor(workers, N*C), chunks, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			cw, cb := pw[ch*C:(ch+1)*C], pb[ch*C:(ch+1)*C]
			clear(cw)
			clear(cb)
			for i := ch * N / chunks; i < (ch+1)*N/chunks; i++ {
				lnRowBackward(dx[i*C:(i+1)*C], cw, cb, x[i*C:(i+1)*C], dout[i*C:(i+1)*C], w, mean[i], rstd[i])
			}
		}
	})
	for ch := 0; ch < chunks; ch++ {
		cw, cb := pw[ch*C:(ch+1)*C], pb[ch*C:(ch+1)*C]
		for c := 0; c < C; c++ {
			dw[c] += cw[c]
			db[c] += cb[c]
		}
	}
}

// matmulForward: out[N,OC] = resid + x[N,IC]·w[IC,OC] + b[OC]. resid
// [N,OC] may be nil (no residual) or alias out; b may be nil. The bias and
// residual are written first and the product accumulated onto them, so
// out is swept once before the multiply instead of being cleared.
func matmulForward(workers int, out, x, w, b, resid []float32, N, IC, OC int) {
	matmulInit(workers, out, b, resid, N, OC)
	gemm.SgemmWorkers(workers, false, false, N, OC, IC, 1, x, IC, w, OC, 1, out, OC)
}

// matmulForwardBF16 is matmulForward with x and w in bf16 (w packed).
// BgemmBias adds b and resid as the product's tiles finish rather than
// in matmulInit's pass over out beforehand; the bits are the same.
func matmulForwardBF16(workers int, out, x []float32, w *gemm.PackedB, b, resid []float32, N, IC, OC int) {
	gemm.BgemmBiasWorkers(workers, N, x, IC, w, b, resid, out, OC)
}

// matmulInit sets out[N,OC] to resid + b, either of them, or zero.
func matmulInit(workers int, out, b, resid []float32, N, OC int) {
	parallelFor(workersFor(workers, N*OC), N, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o := out[i*OC : (i+1)*OC]
			switch {
			case resid != nil && b != nil:
				r := resid[i*OC : (i+1)*OC]
				for j, v := range b {
					o[j] = r[j] + v
				}
			case resid != nil:
				copy(o, resid[i*OC:(i+1)*OC])
			case b != nil:
				copy(o, b)
			default:
				clear(o)
			}
		}
	})
}

// matmulBackward: dx[N,IC] = dout·wᵀ (overwritten, or added when
// accumulateDx), dw[IC,OC] += xᵀ·dout, db[OC] += Σ_rows dout. db may be nil.
// scratch needs reduceChunks·OC floats. wT, when not nil, is w packed
// transposed in bf16: both products then run in bf16 with fp32
// accumulation, dw's with dout packed into dyPack (its memory reused).
func matmulBackward(workers int, dx, dw, db, dout, x, w []float32, wT, dyPack *gemm.PackedB, N, IC, OC int, accumulateDx bool, scratch []float32) {
	beta := float32(0)
	if accumulateDx {
		beta = 1
	}
	if wT != nil {
		gemm.Bgemm(N, 1, dout, OC, wT, beta, dx, IC)
		weightGradBF16(dw, x, dout, dyPack, N, IC, OC)
	} else {
		gemm.Sgemm(false, true, N, IC, OC, 1, dout, OC, w, OC, beta, dx, IC)
		gemm.Sgemm(true, false, IC, OC, N, 1, x, IC, dout, OC, 1, dw, OC)
	}
	if db != nil {
		columnSum(workers, db, dout, N, OC, scratch)
	}
}

// weightGradBF16 is dw[IC,OC] += xᵀ·dout in bf16 with fp32 accumulation:
// dout [N,OC] is rounded and packed into dyPack as the product's B, x
// [N,IC] is read transposed as its A (gemm.BgemmTA), the sum running over
// the N rows. dw itself (the gradient the optimizer reads) stays fp32.
func weightGradBF16(dw, x, dout []float32, dyPack *gemm.PackedB, N, IC, OC int) {
	dyPack.Pack(false, N, OC, dout, OC)
	gemm.BgemmTA(IC, 1, x, IC, dyPack, 1, dw, OC)
}

// GELU, tanh approximation (GPT-2's gelu_new):
// gelu(x) = ½x(1 + tanh(√(2/π)(x + 0.044715x³))).
const (
	geluS = 0.7978845608028654 // √(2/π)
	geluK = 0.044715
)

// geluForward: out[N] = gelu(x); saves th[N] = the tanh term for backward.
func geluForward(workers int, out, th, x []float32, N int) {
	parallelFor(workersFor(workers, N), (N+1023)/1024, func(lo, hi int) {
		a, b := lo*1024, min(hi*1024, N)
		geluSpan(out[a:b], th[a:b], x[a:b])
	})
}

// geluBackward: dx[N] = dout·gelu'(x) (overwritten; dx may alias dout).
func geluBackward(workers int, dx, dout, x, th []float32, N int) {
	parallelFor(workersFor(workers, N), (N+1023)/1024, func(lo, hi int) {
		a, b := lo*1024, min(hi*1024, N)
		geluBackSpan(dx[a:b], dout[a:b], x[a:b], th[a:b])
	})
}

// lnRowForward normalises one row: out = (x−mean)·rstd·w + b.
func lnRowForward(out, x, w, b []float32) (mean, rstd float32) {
	C := len(x)
	if useAVX2 && C%8 == 0 {
		m, r := lnStatsAVX2(x)
		lnApplyAVX2(out, x, w[:C], b[:C], m, r)
		return m, r
	}
	var m float32
	for _, v := range x {
		m += v
	}
	m /= float32(C)
	var s float32
	for _, v := range x {
		d := v - m
		s += d * d
	}
	r := 1 / sqrtf(s/float32(C)+lnEps)
	out = out[:C]
	for c, v := range x {
		out[c] = (v-m)*r*w[c] + b[c]
	}
	return m, r
}

// lnRowBackward is one row of LayerNorm's backward: cw += dout·x̂,
// cb += dout, and with dnorm = dout·w,
// dx += rstd·(dnorm − mean(dnorm) − x̂·mean(dnorm·x̂)).
func lnRowBackward(dx, cw, cb, x, dout, w []float32, m, r float32) {
	C := len(x)
	if useAVX2 && C%8 == 0 {
		sd, sdx := lnBack1AVX2(cw[:C], cb[:C], x, dout[:C], w[:C], m, r)
		lnBack2AVX2(dx[:C], x, dout[:C], w[:C], m, r, sd/float32(C), sdx/float32(C))
		return
	}
	var sd, sdx float32
	for c, d := range dout[:C] {
		xh := (x[c] - m) * r
		dn := d * w[c]
		sd += dn
		sdx += dn * xh
		cb[c] += d
		cw[c] += d * xh
	}
	sd /= float32(C)
	sdx /= float32(C)
	for c, d := range dout[:C] {
		xh := (x[c] - m) * r
		dx[c] += r * (d*w[c] - sd - xh*sdx)
	}
}
