//go:build !purego

package gemm

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2

//go:noescape
func transpose8AVX(dst *float32, stride int, src *float32, ld int, kc int)

// gather8 transposes eight rows of src, src[off+i·ld : +kc] for i < 8,
// into dst[r·stride : +8] for r < kc.
func gather8(dst []float32, stride int, src []float32, off, ld, kc int) {
	if kc8 := kc &^ 7; hasAVX2 && kc8 > 0 {
		_ = src[off+7*ld+kc8-1]
		_ = dst[(kc8-1)*stride+7]
		transpose8AVX(&dst[0], stride, &src[off], ld, kc8)
		if kc8 == kc {
			return
		}
		off += kc8
		dst = dst[kc8*stride:]
		kc -= kc8
	}
	gather8Go(dst, stride, src, off, ld, kc)
}
