//go:build !amd64 || purego

package gemm

const hasBF16Asm = false

var activeBF16 bfKernel = bfKernGo

func cvtBF16AVX512(dst *uint16, src *float32, n int) { panic("gemm: no AVX512_BF16 kernel") }

func pairBF16AVX512(dst *uint32, step int, lo, hi *float32, n int) {
	panic("gemm: no AVX512_BF16 kernel")
}

func halvesBF16AVX512(dst *uint16, src *float32, n int) { panic("gemm: no AVX512_BF16 kernel") }
