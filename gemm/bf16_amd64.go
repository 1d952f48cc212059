//go:build !purego

package gemm

import "golang.org/x/sys/cpu"

// hasBF16Asm: the kernels in bf16_amd64.s need AVX-512F and AVX512_BF16.
var hasBF16Asm = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16

// activeBF16 is Bgemm's kernel on this CPU.
var activeBF16 bfKernel = bestBF16()

func bestBF16() bfKernel {
	if hasBF16Asm {
		return bfKernAsm
	}
	return bfKernGo
}

//go:noescape
func kern8x32BF16(kp int, a *uint32, rsA int, b *uint32, ldb int, c *float32, ldc int, alpha float32)

//go:noescape
func cvtBF16AVX512(dst *uint16, src *float32, n int)

func bfKernAsm(kc int, a []uint32, rsA int, b []uint32, ldb int, c []float32, ldc int, alpha float32) {
	// The assembly does no bounds checks: touch the last element of each.
	_ = a[(bfMR-1)*rsA+kc-1]
	_ = b[(kc-1)*ldb+bfNR-1]
	_ = c[(bfMR-1)*ldc+bfNR-1]
	kern8x32BF16(kc, &a[0], rsA, &b[0], ldb, &c[0], ldc, alpha)
}

//go:noescape
func pairBF16AVX512(dst *uint32, step int, lo, hi *float32, n int)

//go:noescape
func halvesBF16AVX512(dst *uint16, src *float32, n int)
