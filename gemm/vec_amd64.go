//go:build !purego

package gemm

import "golang.org/x/sys/cpu"

// useVecAsm is whether Dot and Axpy use the AVX2+FMA loops in vec_amd64.s.
var useVecAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotAVX2(x, y *float32, n int) float32

//go:noescape
func axpyAVX2(alpha float32, x, y *float32, n int)

// dotAsm and axpyAsm take slices whose length is a multiple of 8 (> 0).
func dotAsm(x, y []float32) float32 {
	_ = y[len(x)-1]
	return dotAVX2(&x[0], &y[0], len(x))
}

func axpyAsm(alpha float32, x, y []float32) {
	_ = y[len(x)-1]
	axpyAVX2(alpha, &x[0], &y[0], len(x))
}
