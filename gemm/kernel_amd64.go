//go:build !purego

package gemm

import "golang.org/x/sys/cpu"

// The assembly kernels (kernel_amd64.s) read A with any row/column stride
// and B with any row stride, so callers can hand them the caller's own
// matrices when packing would not pay.

//go:noescape
func kern8x32AVX512(kc int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha float32, over int)

//go:noescape
func kern6x16AVX2(kc int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha float32)

var (
	avx512Kernel = &kernel{name: "avx512-8x32", mr: 8, nr: 32, fn: kernAVX512}
	avx2Kernel   = &kernel{name: "avx2-6x16", mr: 6, nr: 16, fn: kernAVX2}
)

func asmKernels() []*kernel {
	var ks []*kernel
	if cpu.X86.HasAVX512F && cpu.X86.HasFMA {
		ks = append(ks, avx512Kernel)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel)
	}
	return ks
}

// tileBounds panics unless the last element the kernel touches in each
// operand is inside its slice: the assembly does no bounds checks.
func tileBounds(mr, nr, kc int, a []float32, aOff, rsA, csA int, b []float32, bOff, ldb int, c []float32, cOff, ldc int) {
	_ = a[aOff+(mr-1)*rsA+(kc-1)*csA]
	_ = b[bOff+(kc-1)*ldb+nr-1]
	_ = c[cOff+(mr-1)*ldc+nr-1]
	if kc < 1 || aOff < 0 || bOff < 0 || cOff < 0 {
		panic("gemm: kernel called with kc < 1 or negative offset")
	}
}

func kernAVX512(kc int, a []float32, aOff, rsA, csA int, b []float32, bOff, ldb int, c []float32, cOff, ldc int, alpha float32, over bool) {
	tileBounds(8, 32, kc, a, aOff, rsA, csA, b, bOff, ldb, c, cOff, ldc)
	o := 0
	if over {
		o = 1
	}
	kern8x32AVX512(kc, &a[aOff], rsA, csA, &b[bOff], ldb, &c[cOff], ldc, alpha, o)
}

// kernAVX2 clears the tile itself for over: the AVX2 kernel only adds.
func kernAVX2(kc int, a []float32, aOff, rsA, csA int, b []float32, bOff, ldb int, c []float32, cOff, ldc int, alpha float32, over bool) {
	tileBounds(6, 16, kc, a, aOff, rsA, csA, b, bOff, ldb, c, cOff, ldc)
	if over {
		for i := 0; i < 6; i++ {
			clear(c[cOff+i*ldc : cOff+i*ldc+16])
		}
	}
	kern6x16AVX2(kc, &a[aOff], rsA, csA, &b[bOff], ldb, &c[cOff], ldc, alpha)
}
