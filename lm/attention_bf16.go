package lm

import "github.com/calibrl/calibrl/gemm"

// attendRowBF16 is attendRow over a cache held in bf16 (a bf16 run's KV
// cache): the keys and values are widened exactly to fp32, the query,
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
	vec := useAVX512 && HS%16 == 0
	if vec {
		scoresBF16AVX512(s, q, k, stride, scale)
	} else {
		for j := range s {
			kj := k[j*stride : j*stride+HS]
			var d float32
			for i, qi := range q {
				d += qi * gemm.FromBF16(kj[i])
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
			o[i] += pj * gemm.FromBF16(vj[i])
		}
	}
}
