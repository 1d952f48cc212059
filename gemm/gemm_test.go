package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randMat returns n floats uniform in [-1, 1).
func randMat(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = 2*r.Float32() - 1
	}
	return s
}

type gemmCase struct {
	transA, transB   bool
	m, n, k          int
	padA, padB, padC int // extra leading-dimension columns
	alpha, beta      float32
}

func (c gemmCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,%dx%dx%d,pad=%d/%d/%d,alpha=%g,beta=%g",
		c.transA, c.transB, c.m, c.n, c.k, c.padA, c.padB, c.padC, c.alpha, c.beta)
}

// operands builds A, B, C for a case with the given leading dimensions.
func (c gemmCase) operands(r *rand.Rand) (a []float32, lda int, b []float32, ldb int, cm []float32, ldc int) {
	ar, ac := c.m, c.k
	if c.transA {
		ar, ac = c.k, c.m
	}
	br, bc := c.k, c.n
	if c.transB {
		br, bc = c.n, c.k
	}
	lda, ldb, ldc = ac+c.padA, bc+c.padB, c.n+c.padC
	return randMat(r, ar*lda), lda, randMat(r, br*ldb), ldb, randMat(r, c.m*ldc), ldc
}

func gemmCases() []gemmCase {
	var cs []gemmCase
	dims := [][3]int{
		{1, 1, 1}, {0, 5, 3}, {5, 0, 3}, {4, 5, 0}, {1, 7, 9}, {7, 1, 9}, {3, 5, 7},
		{8, 32, 16}, {6, 16, 5}, {9, 33, 17}, {17, 65, 300}, {16, 384, 128},
		{40, 50, 513}, {100, 70, 31}, {33, 600, 40}, {130, 20, 260},
	}
	i := 0
	for _, d := range dims {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				alpha, beta := []float32{1, 0.5, -2, 1}[i%4], []float32{0, 1, -0.75, 0}[(i/2)%4]
				cs = append(cs, gemmCase{tA, tB, d[0], d[1], d[2], i % 3, (i + 1) % 4, (i + 2) % 3, alpha, beta})
				i++
			}
		}
	}
	cs = append(cs, gemmCase{false, false, 20, 40, 30, 0, 0, 0, 0, 0.5}) // alpha 0: scale only
	return cs
}

func TestSgemmMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, kern := range usableKernels() {
		for _, tc := range gemmCases() {
			a, lda, b, ldb, c0, ldc := tc.operands(r)
			want := append([]float32(nil), c0...)
			SgemmNaive(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, want, ldc)
			tol := 1e-5 * float64(tc.k+2)
			for _, workers := range []int{1, 2, 3} {
				got := append([]float32(nil), c0...)
				sgemmWith(kern, workers, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, got, ldc)
				for i := range got {
					row, col := i/ldc, i%ldc
					if col >= tc.n {
						if got[i] != c0[i] {
							t.Fatalf("%s %v workers=%d: padding C[%d,%d] changed: got %g, want %g", kern.name, tc, workers, row, col, got[i], c0[i])
						}
						continue
					}
					if d := math.Abs(float64(got[i] - want[i])); !(d <= tol) {
						t.Fatalf("%s %v workers=%d: C[%d,%d] got %g, want %g (|Δ| %g > %g)", kern.name, tc, workers, row, col, got[i], want[i], d, tol)
					}
				}
			}
		}
	}
}

func TestSgemmBetaZeroIgnoresNaN(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, kern := range usableKernels() {
		for _, k := range []int{0, 7} {
			m, n := 9, 35
			a, b := randMat(r, m*k), randMat(r, k*n)
			c := make([]float32, m*n)
			for i := range c {
				c[i] = float32(math.NaN())
			}
			sgemmWith(kern, 2, false, false, m, n, k, 1, a, k, b, n, 0, c, n)
			for i, v := range c {
				if v != v {
					t.Fatalf("%s k=%d: C[%d] got NaN, want a number", kern.name, k, i)
				}
			}
		}
	}
}

// TestSgemmDeterministicAcrossWorkers pins the property training relies
// on: the same inputs give bitwise the same C for any worker count.
func TestSgemmDeterministicAcrossWorkers(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shapes := []gemmCase{
		{false, false, 200, 96, 600, 0, 0, 0, 1, 0},
		{true, false, 64, 200, 700, 1, 0, 0, 1, 1},
		{false, true, 37, 300, 260, 0, 3, 1, 0.5, 0},
		{true, true, 16, 130, 129, 0, 0, 0, 1, 0.25},
	}
	for _, kern := range usableKernels() {
		for _, tc := range shapes {
			a, lda, b, ldb, c0, ldc := tc.operands(r)
			ref := append([]float32(nil), c0...)
			sgemmWith(kern, 1, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, ref, ldc)
			for _, workers := range []int{2, 3, 4, 7} {
				got := append([]float32(nil), c0...)
				sgemmWith(kern, workers, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, got, ldc)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(ref[i]) {
						t.Fatalf("%s %v: workers=%d C[%d] got %x, want %x (workers=1)", kern.name, tc, workers, i, math.Float32bits(got[i]), math.Float32bits(ref[i]))
					}
				}
			}
		}
	}
}

func TestSetWorkers(t *testing.T) {
	prev := SetWorkers(3)
	defer SetWorkers(prev)
	if got := Workers(); got != 3 {
		t.Fatalf("Workers() after SetWorkers(3): got %d, want 3", got)
	}
	if got := SetWorkers(0); got != 3 {
		t.Fatalf("SetWorkers(0) returned %d, want previous 3", got)
	}
}

func TestGather8MatchesLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, kc := range []int{1, 7, 8, 9, 16, 33} {
		for _, stride := range []int{8, 32} {
			ld := kc + 3
			src := randMat(r, 8*ld)
			got, want := make([]float32, kc*stride), make([]float32, kc*stride)
			gather8(got, stride, src, 2, ld, kc) // exercise an offset
			gather8Go(want, stride, src, 2, ld, kc)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("kc=%d stride=%d: dst[%d] got %g, want %g", kc, stride, i, got[i], want[i])
				}
			}
			for r := 0; r < kc; r++ {
				for i := 0; i < 8; i++ {
					if got[r*stride+i] != src[2+i*ld+r] {
						t.Fatalf("kc=%d stride=%d: dst[%d·%d+%d] got %g, want src[%d]", kc, stride, r, stride, i, got[r*stride+i], 2+i*ld+r)
					}
				}
			}
		}
	}
}

// With beta 0 the first k slice writes C and the later ones add to it:
// over three slices, C full of NaN beforehand, every kernel and a
// partial tile at each edge give the reference's sums.
func TestSgemmBetaZeroOverSeveralKSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	m, n, k := 19, 70, 2*kcBlock+77
	a, b := randMat(r, m*k), randMat(r, k*n)
	want := make([]float32, m*n)
	SgemmNaive(false, false, m, n, k, 0.5, a, k, b, n, 0, want, n)
	for _, kern := range usableKernels() {
		for _, workers := range []int{1, 2} {
			c := make([]float32, m*n)
			for i := range c {
				c[i] = float32(math.NaN())
			}
			sgemmWith(kern, workers, false, false, m, n, k, 0.5, a, k, b, n, 0, c, n)
			for i := range c {
				if d := math.Abs(float64(c[i] - want[i])); !(d <= 1e-5*float64(k)) {
					t.Fatalf("%s workers=%d: C[%d,%d] = %g, want %g", kern.name, workers, i/n, i%n, c[i], want[i])
				}
			}
		}
	}
}

// A product's rows do not depend on the rows computed with them: the
// sampler's lanes multiply a few rows each and must get the bits one call
// over all of them gets. Row ranges that cut the 8-row tiles included, on
// every kernel, with B read in place (few rows) and packed (many).
func TestSgemmRowsIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, tc := range []gemmCase{
		{false, false, 70, 96, 128, 0, 0, 0, 1, 1},
		{false, true, 70, 200, 128, 0, 0, 0, 1, 0},
	} {
		a, lda, b, ldb, c0, ldc := tc.operands(r)
		for _, kern := range usableKernels() {
			all := append([]float32(nil), c0...)
			sgemmWith(kern, 2, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, all, ldc)
			for _, rows := range [][2]int{{0, 5}, {3, 40}, {40, 70}, {69, 70}} {
				lo, hi := rows[0], rows[1]
				part := append([]float32(nil), c0[lo*ldc:hi*ldc]...)
				sgemmWith(kern, 1, tc.transA, tc.transB, hi-lo, tc.n, tc.k, tc.alpha, a[lo*lda:], lda, b, ldb, tc.beta, part, ldc)
				for i := range part {
					if math.Float32bits(part[i]) != math.Float32bits(all[lo*ldc+i]) {
						t.Fatalf("%s %v rows [%d,%d): c[%d] = %v, in the whole call %v", kern.name, tc, lo, hi, lo*ldc+i, part[i], all[lo*ldc+i])
					}
				}
			}
		}
	}
}

// The entry points that take a worker count give the bits of the ones
// that use Workers().
func TestWorkersEntryPoints(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	const m, n, k = 40, 96, 64
	a, w, bias, c0 := randMat(r, m*k), randMat(r, k*n), randMat(r, n), randMat(r, m*n)
	same := func(name string, x, y []float32) {
		t.Helper()
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				t.Fatalf("%s: c[%d] = %v, want %v", name, i, x[i], y[i])
			}
		}
	}
	for _, workers := range []int{0, 1, 3} {
		x, y := append([]float32(nil), c0...), append([]float32(nil), c0...)
		Sgemm(false, false, m, n, k, 1, a, k, w, n, 1, x, n)
		SgemmWorkers(workers, false, false, m, n, k, 1, a, k, w, n, 1, y, n)
		same(fmt.Sprintf("SgemmWorkers(%d)", workers), y, x)
		if !HasBF16() {
			continue
		}
		var pb PackedB
		pb.Pack(false, k, n, w, n)
		x, y = append([]float32(nil), c0...), append([]float32(nil), c0...)
		Bgemm(m, 1, a, k, &pb, 1, x, n)
		BgemmWorkers(workers, m, 1, a, k, &pb, 1, y, n)
		same(fmt.Sprintf("BgemmWorkers(%d)", workers), y, x)
		BgemmBias(m, a, k, &pb, bias, c0, x, n)
		BgemmBiasWorkers(workers, m, a, k, &pb, bias, c0, y, n)
		same(fmt.Sprintf("BgemmBiasWorkers(%d)", workers), y, x)
	}
}
