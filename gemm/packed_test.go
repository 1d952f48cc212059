package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSgemmPackedMatchesSgemm: a product with B packed beforehand gives
// Sgemm's bits, for every kernel, both layouts of B, across k slices and
// n blocks, partial tiles and panels, one and several workers, and beta
// 0 (C overwritten, NaN in it not read), 1 and 0.5; and one PackedS
// serves many products, repacked in place for another B.
func TestSgemmPackedMatchesSgemm(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	defer func(k *kernel) { activeKernel = k }(activeKernel)
	for _, kern := range usableKernels() {
		activeKernel = kern
		var pb PackedS // reused across shapes: Pack must reset it whole
		for _, s := range []struct{ m, n, k int }{
			{1, 1, 1}, {7, 31, 5}, {8, 32, 128}, {33, 100, 129}, {64, 384, 128},
			{64, 768, 128}, {200, 700, 513}, {5, 520, 1100}, {40, 33, 512},
		} {
			if kern == goKernel2x4 && s.m*s.n*s.k > 1<<22 {
				continue
			}
			for _, transB := range []bool{false, true} {
				br, bc := s.k, s.n
				if transB {
					br, bc = bc, br
				}
				ldb := bc + 3 // a stride wider than the rows
				b := randMat(r, br*ldb)
				pb.Pack(transB, s.k, s.n, b, ldb)
				if pb.K() != s.k || pb.N() != s.n {
					t.Fatalf("%s: PackedS is %d×%d, want %d×%d", kern.name, pb.K(), pb.N(), s.k, s.n)
				}
				lda, ldc := s.k+1, s.n+2
				a := randMat(r, s.m*lda)
				for _, beta := range []float32{0, 1, 0.5} {
					for _, workers := range []int{1, 2, 3} {
						name := fmt.Sprintf("%s/%dx%dx%d/transB=%v/beta=%v/workers=%d", kern.name, s.m, s.n, s.k, transB, beta, workers)
						c0 := randMat(r, s.m*ldc)
						if beta == 0 {
							c0[0] = float32(math.NaN())
						}
						want, got := append([]float32(nil), c0...), append([]float32(nil), c0...)
						sgemmWith(kern, workers, false, transB, s.m, s.n, s.k, 0.75, a, lda, b, ldb, beta, want, ldc)
						SgemmPackedWorkers(workers, s.m, 0.75, a, lda, &pb, beta, got, ldc)
						for i := range want {
							if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
								t.Fatalf("%s: c[%d] = %v (bits %08x), Sgemm gives %v (bits %08x)", name, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
							}
						}
					}
				}
			}
		}
	}
}

// TestSgemmPackedRefusesUnpacked: a PackedS that was never packed is a
// caller's bug, named rather than read as an empty matrix.
func TestSgemmPackedRefusesUnpacked(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("SgemmPackedWorkers on a zero PackedS did not panic")
		}
	}()
	var pb PackedS
	SgemmPackedWorkers(1, 1, 1, []float32{1}, 1, &pb, 0, []float32{0}, 1)
}
