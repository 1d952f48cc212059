package lm

import "github.com/calibrl/calibrl/gemm"

// A bf16 run keeps its KV cache in bf16. Where the head size is a
// multiple of 32, each 32-value block of a cached row is stored as the
// pairs (x[t], x[16+t]), t < 16: the AVX-512 kernels widen a block read
// as 16 dwords to x[0:16] and x[16:32] exactly with one shift and one
// mask, where a plain order would need a shuffle per 16 values (on this
// engine's CPUs the shuffles cost more than the multiply-adds, and the
// decode attention is bound by them once the bytes are halved).

// bf16Index is where value i of a cached row of head size HS is stored.
func bf16Index(i, HS int) int {
	if HS%32 != 0 {
		return i
	}
	b, t := i&^31, i&31
	if t < 16 {
		return b + 2*t
	}
	return b + 2*(t-16) + 1
}

// putBF16Row rounds src (one head's keys or values of one position) into
// dst in the cache's order (gemm.ToBF16Halves; element order where the
// head size is not a multiple of 32).
func putBF16Row(dst []uint16, src []float32) {
	if len(src)%32 != 0 {
		gemm.ToBF16Slice(dst, src)
		return
	}
	gemm.ToBF16Halves(dst, src)
}

// attendRowBF16 is attendRow over a cache held in bf16 (putBF16Row's
// order): the keys and values are widened exactly to fp32, the query,
// the scores, the softmax and the output stay fp32. The AVX-512 kernels
// sum in another order than the loops below (their twin, which the tests
// compare them against), so the two agree to fp32 rounding, not bitwise;
// each is deterministic.
func attendRowBF16(o, s, q []float32, k, v []uint16, n, stride int, scale float32) {
	s = s[:n]
	HS := len(q)
	if len(k) < (n-1)*stride+HS || len(v) < (n-1)*stride+HS {
		panic("lm: attendRowBF16 cache slice too short")
	}
	vec := useAVX512 && HS%32 == 0
	if vec {
		scoresBF16AVX512(s, q, k, stride, scale)
	} else {
		for j := range s {
			kj := k[j*stride : j*stride+HS]
			var d float32
			for i, qi := range q {
				d += qi * gemm.FromBF16(kj[bf16Index(i, HS)])
			}
			s[j] = d * scale
		}
	}
	softmaxCausalRow(s, n-1)
	clear(o)
	if vec {
		mixBF16AVX512(o, s, v, stride)
		return
	}
	for j, pj := range s {
		vj := v[j*stride : j*stride+HS]
		for i := range o {
			o[i] += pj * gemm.FromBF16(vj[bf16Index(i, HS)])
		}
	}
}
