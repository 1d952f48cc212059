// Package gemm holds the single-precision matrix multiplies the engine
// spends nearly all its time in.
//
// All matrices are row-major. op(X) is X or its transpose. Sgemm computes
//
//	C = alpha·op(A)·op(B) + beta·C,   op(A): m×k, op(B): k×n, C: m×n
//
// with leading dimensions lda, ldb, ldc (the row stride of the stored
// matrix). SgemmNaive is the readable reference every fast path is tested
// against.
//
// Sgemm dispatches to a register-blocked micro-kernel chosen at start-up
// with golang.org/x/sys/cpu (KernelName says which): 8×32 with AVX-512F
// FMA, 6×16 with AVX2+FMA, or a 2×4 pure-Go kernel elsewhere, or when
// built with -tags purego. The driver cuts k into fixed KC slices and n
// into NC slices, packs B into contiguous panels when it is transposed or
// reused by many rows (small-m products read it in place), packs A only
// when many column panels reuse it, and splits C into disjoint rectangles,
// one per worker, up to Workers() of them (SetWorkers bounds it).
//
// Dot and Axpy are the vector helpers attention and sampling need, in
// AVX2+FMA assembly with a portable loop for other CPUs.
//
// Results are bitwise identical for any worker count: work is split over
// rows and columns of C only, never over k, and k is always cut at the same
// multiples of KC, so every output element is summed in the same order by
// the same instructions wherever its tile falls.
//
// Edge cases: beta == 0 overwrites C without reading it (NaN in C is
// ignored); alpha == 0 or k == 0 only scales C by beta and never reads A or
// B. Dimension or slice-length errors are programming errors and panic,
// as in the reference BLAS.
package gemm

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

// maxWorkers bounds the goroutines one Sgemm call uses; 0 means
// runtime.GOMAXPROCS(0).
var maxWorkers atomic.Int32

// SetWorkers bounds the number of goroutines one Sgemm call may use and
// returns the previous bound. n <= 0 restores the default,
// runtime.GOMAXPROCS(0). Results do not depend on it.
func SetWorkers(n int) int {
	if n < 0 {
		n = 0
	}
	return int(maxWorkers.Swap(int32(n)))
}

// Workers reports the number of goroutines one large Sgemm call uses now.
func Workers() int {
	if n := int(maxWorkers.Load()); n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// SgemmNaive is the reference: three loops, accumulation in k order.
func SgemmNaive(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var sum float32
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				sum += av * bv
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * sum
			} else {
				c[i*ldc+j] = alpha*sum + beta*c[i*ldc+j]
			}
		}
	}
}

// Sgemm is the entry point the engine calls. It dispatches to the fastest
// kernel the CPU supports.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	SgemmWorkers(0, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmWorkers is Sgemm on at most workers goroutines, the caller's
// included; workers ≤ 0 means Workers(). A caller that already keeps
// every core busy with products of its own passes 1 (the sampler runs
// one lane of sequences per core). The bits do not depend on workers.
func SgemmWorkers(workers int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if workers <= 0 {
		workers = Workers()
	}
	sgemmWith(activeKernel, workers, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SliceK is how Sgemm cuts k: each C element sums its k terms in slices
// at the fixed multiples 0, SliceK, 2·SliceK, … in order, each slice one
// chain of multiply-adds from +0, and adds each slice's sum into C. A
// caller that leaves out terms it knows are zero (zero rows of Aᵀ) keeps
// every bit by calling Sgemm once per slice of the full k, on that
// slice's other terms, with beta 1: a zero term leaves a chain that
// started at +0 as it was, sign included, and a slice with no terms
// adds +0.
const SliceK = kcBlock

// checkArgs panics with a readable message when the dimensions and slices
// do not describe valid matrices: reading past them would be a bug in the
// caller, not bad outside input.
func checkArgs(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	if transA {
		checkMat("a", a, k, m, lda)
	} else {
		checkMat("a", a, m, k, lda)
	}
	if transB {
		checkMat("b", b, n, k, ldb)
	} else {
		checkMat("b", b, k, n, ldb)
	}
	checkMat("c", c, m, n, ldc)
}
