package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestToBF16(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie, even stays
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie, odd rounds up
		{math.Float32frombits(0x3f808001), 0x3f81}, // above the tie
		{math.Float32frombits(0x00400000), 0x0000}, // denormal to zero
		{math.Float32frombits(0x80000001), 0x8000}, // keeps its sign
		{float32(math.Inf(-1)), 0xff80},
		{math.Float32frombits(0x7f7fffff), 0x7f80}, // max float rounds to +Inf
		{math.Float32frombits(0x7f800001), 0x7fc0}, // signalling NaN quietened
	}
	for _, c := range cases {
		if got := ToBF16(c.in); got != c.want {
			t.Errorf("ToBF16(%#08x) = %#04x, want %#04x", math.Float32bits(c.in), got, c.want)
		}
	}
}

// TestCvtBF16MatchesGo: the VCVTNEPS2BF16 loop gives ToBF16's bits on
// random bit patterns (NaN, denormals and infinities among them).
func TestCvtBF16MatchesGo(t *testing.T) {
	if !hasBF16Asm {
		t.Skip("no AVX512_BF16")
	}
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, 4099)
	for i := range src {
		src[i] = math.Float32frombits(r.Uint32())
	}
	src[0], src[1] = math.Float32frombits(0x3f808000), math.Float32frombits(0x00000001)
	got := make([]uint16, len(src))
	cvtBF16(got, src)
	for i, f := range src {
		if want := ToBF16(f); got[i] != want {
			t.Fatalf("cvt(%#08x) = %#04x, ToBF16 %#04x", math.Float32bits(f), got[i], want)
		}
	}
}

type bfCase struct {
	transB      bool
	m, n, k     int
	alpha, beta float32
}

// bfShapes cover partial tiles on both sides, odd k, k cut into several
// slices (k > 2·bfKC pairs), and the engine's own shapes at small m.
var bfShapes = []bfCase{
	{false, 1, 1, 1, 1, 0}, {false, 8, 32, 2, 1, 0}, {true, 9, 33, 3, 1, 1},
	{false, 17, 70, 129, 1, 1}, {true, 5, 100, 1100, 0.5, 2}, {false, 24, 64, 513, 1, 0},
	{false, 64, 384, 128, 1, 1}, {true, 13, 768, 128, 1, 0}, {false, 40, 128, 512, 1, 1},
	{false, 3, 7, 0, 1, 2}, {false, 6, 40, 20, 0, 0.5},
}

func (c bfCase) operands(r *rand.Rand) (a, b, cm []float32, ldb int) {
	a = randMat(r, c.m*c.k+1)
	ldb = c.n
	if c.transB {
		ldb = c.k
	}
	b = randMat(r, c.k*c.n+1)
	cm = randMat(r, c.m*c.n)
	return
}

// TestBgemmMatchesNaive: every kernel, at every worker count, gives the
// naive twin's bits, so the assembly rounds and sums exactly as documented.
func TestBgemmMatchesNaive(t *testing.T) {
	kerns := map[string]bfKernel{"go": bfKernGo}
	if hasBF16Asm {
		kerns["asm"] = activeBF16
	}

	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range bfShapes {
		a, b, c0, ldb := c.operands(r)
		want := append([]float32(nil), c0...)
		BgemmNaive(c.transB, c.m, c.n, c.k, c.alpha, a, c.k, b, ldb, c.beta, want, c.n)
		var pb PackedB
		pb.Pack(c.transB, c.k, c.n, b, ldb)
		for name, kern := range kerns {
			for _, w := range []int{1, 2, 3} {
				got := append([]float32(nil), c0...)
				bgemmWith(kern, w, c.m, c.alpha, a, c.k, &pb, c.beta, got, c.n, nil, nil)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%+v %s workers %d: c[%d] = %v, naive %v", c, name, w, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestBgemmGolden bounds Bgemm's distance from the exact product (float64
// sums of the unrounded fp32 operands; alpha a power of two, which scales
// every term exactly), element by element. With u = 2⁻⁸,
// bf16's unit roundoff (8 significant bits, round to nearest), rounding a
// and b gives each product a relative error of at most 2u + u², so the
// products' sum is off by at most (2u + u²)·Σ_p |a_p·b_p| (mag below);
// each fp32 sum then adds at most 2⁻²⁴ of the running magnitude. On the
// Go and AVX512_BF16 kernels the accumulator starts from zero at each of
// the S slices of k (S = ⌈K/512⌉; 1 on AMX with alpha ≠ 1, whose tiles
// take the whole k): its K sums (two a pair) run below (1 + 2u + u²)·mag,
// and each slice's fused add onto C adds at most 2⁻²⁴·(|c| + that), so
//
//	(2u + u² + (K+S)·2⁻²⁴·(1 + 2u + u²))·mag + S·2⁻²⁴·|c|.
//
// AMX with alpha 1 starts the accumulator from C (its tile is loaded, not
// zeroed), so its K sums run below |c| + (1 + 2u + u²)·mag:
//
//	(2u + u² + K·2⁻²⁴·(1 + 2u + u²))·mag + K·2⁻²⁴·|c|.
//
// These are worst cases; the observed error is also checked to be well
// inside them and far above fp32's, so the test sees that bf16 rounding
// really happens. The last cases put C far above the products (|c| about
// 64 against sums of about 1), where AMX's bound is the wider.
func TestBgemmGolden(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	// Whole 32×32 blocks, which AMX accumulates onto C in place (beta 1)
	// or from zero (beta 0), blocks cut by C's edges (through a scratch
	// copy), alpha ≠ 1 (AMX's sum from zero, then one fused add), and
	// C far above the products.
	cases := []bfCase{{false, 16, 96, 128, 1, 0}, {true, 9, 64, 512, 1, 1}, {false, 12, 40, 1031, 1, 1},
		{false, 64, 96, 128, 1, 1}, {true, 40, 64, 300, 1, 0}, {false, 70, 100, 1031, 0.5, 1},
		{false, 64, 96, 128, 1, 1}, {true, 33, 70, 2000, 1, 1}}
	for ci, c := range cases {
		a, b, c0, ldb := c.operands(r)
		if ci >= len(cases)-2 {
			for i := range c0 {
				c0[i] *= 64
			}
		}
		var pb PackedB
		pb.Pack(c.transB, c.k, c.n, b, ldb)
		for name, kern := range bfEngines() {
			got := append([]float32(nil), c0...)
			bgemmWith(kern, 2, c.m, c.alpha, a, c.k, &pb, c.beta, got, c.n, nil, nil)
			checkGolden(t, name, kern == nil && c.alpha == 1, c, a, b, ldb, c0, got)
		}
	}
}

// bfEngines are the bf16 engines this CPU runs: nil stands for AMX.
func bfEngines() map[string]bfKernel {
	e := map[string]bfKernel{"go": bfKernGo}
	if hasBF16Asm {
		e["avx512bf16"] = activeBF16
	}
	if hasAMX {
		e["amx"] = nil
	}
	return e
}

// checkGolden checks got against TestBgemmGolden's bound, AMX's when onto.
func checkGolden(t *testing.T, name string, onto bool, c bfCase, a, b []float32, ldb int, c0, got []float32) {
	t.Helper()
	const u = 1.0 / 256
	slices := ceilDiv(ceilDiv(c.k, 2), bfKC)
	if name == "amx" {
		slices = 1
	}
	{
		var worst, sumRel float64
		for i := 0; i < c.m; i++ {
			for j := 0; j < c.n; j++ {
				var exact, mag float64
				for p := 0; p < c.k; p++ {
					bv := b[j*ldb+p]
					if !c.transB {
						bv = b[p*ldb+j]
					}
					prod := float64(c.alpha) * float64(a[i*c.k+p]) * float64(bv)
					exact += prod
					mag += math.Abs(prod)
				}
				cv := float64(c.beta) * float64(c0[i*c.n+j])
				exact += cv
				bound := (2*u+u*u+float64(c.k+slices)*0x1p-24*(1+2*u+u*u))*mag + float64(slices)*0x1p-24*math.Abs(cv)
				if onto {
					bound = (2*u+u*u+float64(c.k)*0x1p-24*(1+2*u+u*u))*mag + float64(c.k)*0x1p-24*math.Abs(cv)
				}
				e := math.Abs(float64(got[i*c.n+j]) - exact)
				if e > bound {
					t.Fatalf("%s %+v: c[%d,%d] = %v, exact %v: error %.3g > bound %.3g", name, c, i, j, got[i*c.n+j], exact, e, bound)
				}
				worst = max(worst, e/bound)
				sumRel += e / mag
			}
		}
		mean := sumRel / float64(c.m*c.n)
		// Random rounding errors add like a random walk: the mean error
		// relative to Σ|ab| is about u/√K, orders of magnitude above
		// fp32's 2⁻²⁴ and below the worst case.
		if mean < 0x1p-20 || worst > 0.5 {
			t.Errorf("%s %+v: mean relative error %.3g (want > 2⁻²⁰: bf16 rounding), worst %.2f of the bound (want ≤ 0.5)", name, c, mean, worst)
		}
	}
}

// TestBgemmAMXWorkers: AMX's tiles sum each pair in an order of their
// own (measured: not VDPBF16PS's, so BgemmNaive does not pin their bits;
// TestBgemmGolden bounds them), but the same on every call: the bits do
// not depend on the worker count, as the engine promises.
func TestBgemmAMXWorkers(t *testing.T) {
	if !hasAMX {
		t.Skip("no AMX")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range bfShapes {
		a, b, c0, ldb := c.operands(r)
		var pb PackedB
		pb.Pack(c.transB, c.k, c.n, b, ldb)
		want := append([]float32(nil), c0...)
		bgemmWith(nil, 1, c.m, c.alpha, a, c.k, &pb, c.beta, want, c.n, nil, nil)
		for _, w := range []int{2, 3} {
			got := append([]float32(nil), c0...)
			bgemmWith(nil, w, c.m, c.alpha, a, c.k, &pb, c.beta, got, c.n, nil, nil)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v workers %d: c[%d] = %v, one worker %v", c, w, i, got[i], want[i])
				}
			}
		}
	}
}

// TestBgemmRowsIndependent: a row's result does not depend on how many
// rows share the call (the sampler batches sequences and must give each
// the bits it gets alone), on every engine, with C accumulated onto
// (beta 1) and overwritten (beta 0).
func TestBgemmRowsIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, c := range []bfCase{{false, 70, 96, 128, 1, 1}, {true, 70, 70, 200, 1, 0}} {
		a, b, c0, ldb := c.operands(r)
		var pb PackedB
		pb.Pack(c.transB, c.k, c.n, b, ldb)
		for name, kern := range bfEngines() {
			all := append([]float32(nil), c0...)
			bgemmWith(kern, 1, c.m, c.alpha, a, c.k, &pb, c.beta, all, c.n, nil, nil)
			for _, rows := range [][2]int{{0, 5}, {3, 40}, {40, 70}, {69, 70}} {
				lo, hi := rows[0], rows[1]
				part := append([]float32(nil), c0[lo*c.n:hi*c.n]...)
				bgemmWith(kern, 1, hi-lo, c.alpha, a[lo*c.k:], c.k, &pb, c.beta, part, c.n, nil, nil)
				for i := range part {
					if math.Float32bits(part[i]) != math.Float32bits(all[lo*c.n+i]) {
						t.Fatalf("%s %+v rows [%d,%d): c[%d] = %v, in the whole call %v", name, c, lo, hi, lo*c.n+i, part[i], all[lo*c.n+i])
					}
				}
			}
		}
	}
}

// TestBgemmDeterministic: the same call twice gives the same bits.
func TestBgemmDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	c := bfCase{false, 50, 200, 300, 1, 1}
	a, b, c0, ldb := c.operands(r)
	var pb PackedB
	pb.Pack(false, c.k, c.n, b, ldb)
	x, y := append([]float32(nil), c0...), append([]float32(nil), c0...)
	Bgemm(c.m, 1, a, c.k, &pb, 1, x, c.n)
	Bgemm(c.m, 1, a, c.k, &pb, 1, y, c.n)
	for i := range x {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			t.Fatalf("c[%d]: %v then %v", i, x[i], y[i])
		}
	}
}

func BenchmarkBgemm(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, s := range [][3]int{{64, 384, 128}, {1024, 512, 128}, {1024, 128, 512}, {512, 512, 512}} {
		m, n, k := s[0], s[1], s[2]
		a, w, c := randMat(r, m*k), randMat(r, k*n), make([]float32, m*n)
		var pb PackedB
		pb.Pack(false, k, n, w, n)
		b.Run(fmt.Sprintf("bf16/%dx%dx%d", m, n, k), func(b *testing.B) {
			for b.Loop() {
				Bgemm(m, 1, a, k, &pb, 0, c, n)
			}
			b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("fp32/%dx%dx%d", m, n, k), func(b *testing.B) {
			for b.Loop() {
				Sgemm(false, false, m, n, k, 1, a, k, w, n, 0, c, n)
			}
			b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestBgemmBiasIsInitThenBgemm: BgemmBias, which adds bias and resid as
// the tiles finish, gives the bits of setting C to resid + bias first and
// calling Bgemm with beta 1, on every kernel (AMX included where the CPU
// has it; its sums are not the naive twin's, hence want from Bgemm on
// the same kernel) and worker count, with either addend or both or neither.
func TestBgemmBiasIsInitThenBgemm(t *testing.T) {
	kerns := map[string]bfKernel{"go": bfKernGo}
	if hasBF16Asm {
		kerns["asm"] = activeBF16
	}
	if hasAMX {
		kerns["amx"] = nil
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range bfShapes {
		a, b, _, ldb := c.operands(r)
		var pb PackedB
		pb.Pack(c.transB, c.k, c.n, b, ldb)
		bias, resid := make([]float32, c.n), make([]float32, c.m*c.n)
		for i := range bias {
			bias[i] = r.Float32()*2 - 1
		}
		for i := range resid {
			resid[i] = r.Float32()*4 - 2
		}
		for _, add := range [][2][]float32{{bias, resid}, {bias, nil}, {nil, resid}, {nil, nil}} {
			bs, rs := add[0], add[1]
			want := make([]float32, c.m*c.n)
			for i := 0; i < c.m; i++ {
				for j := 0; j < c.n; j++ {
					switch {
					case rs != nil && bs != nil:
						want[i*c.n+j] = rs[i*c.n+j] + bs[j]
					case rs != nil:
						want[i*c.n+j] = rs[i*c.n+j]
					case bs != nil:
						want[i*c.n+j] = bs[j]
					}
				}
			}
			for name, kern := range kerns {
				want := slices.Clone(want)
				bgemmWith(kern, 1, c.m, 1, a, c.k, &pb, 1, want, c.n, nil, nil)
				for _, w := range []int{1, 2, 3} {
					got := make([]float32, c.m*c.n)
					for i := range got {
						got[i] = float32(math.NaN()) // must be overwritten
					}
					bgemmWith(kern, w, c.m, 1, a, c.k, &pb, biasBeta(bs, rs), got, c.n, bs, rs)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%+v %s workers %d bias %v resid %v: c[%d] = %v, want %v", c, name, w, bs != nil, rs != nil, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestBgemmTAIsBgemmOfTranspose: the transposed-A product (the weight
// gradient's xᵀ·dy) gives, on every engine and worker count, the bits of
// Bgemm on Aᵀ copied out row-major, including A with a leading dimension
// wider than m, k not a multiple of the 32-row pack block and odd k; on
// the Go and AVX512_BF16 kernels that is BgemmNaive's bits as well.
func TestBgemmTAIsBgemmOfTranspose(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	shapes := append([]bfCase{{false, 70, 96, 1000, 1, 1}, {false, 33, 40, 31, 1, 0}, {false, 64, 64, 2049, 1, 1}}, bfShapes...)
	for _, c := range shapes {
		_, b, c0, ldb := c.operands(r)
		lda := c.m + 3
		a := randMat(r, c.k*lda) // A is k×m with leading dimension lda
		at := make([]float32, c.m*c.k)
		for p := 0; p < c.k; p++ {
			for i := 0; i < c.m; i++ {
				at[i*c.k+p] = a[p*lda+i]
			}
		}
		var pb PackedB
		pb.Pack(c.transB, c.k, c.n, b, ldb)
		for name, kern := range bfEngines() {
			want := append([]float32(nil), c0...)
			bgemmWith(kern, 1, c.m, c.alpha, at, c.k, &pb, c.beta, want, c.n, nil, nil)
			if kern != nil {
				naive := append([]float32(nil), c0...)
				BgemmNaive(c.transB, c.m, c.n, c.k, c.alpha, at, c.k, b, ldb, c.beta, naive, c.n)
				if !slices.Equal(bitsOf(naive), bitsOf(want)) {
					t.Fatalf("%s %+v: Bgemm on Aᵀ differs from BgemmNaive", name, c)
				}
			}
			for _, w := range []int{1, 2, 3} {
				got := append([]float32(nil), c0...)
				bgemmRun(kern, w, true, c.m, c.alpha, a, lda, &pb, c.beta, got, c.n, nil, nil)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s %+v workers %d: c[%d] = %v, Bgemm on Aᵀ %v", name, c, w, i, got[i], want[i])
					}
				}
			}
		}
	}
	// The exported entry point, on the engine this CPU runs.
	c := bfCase{false, 48, 80, 300, 1, 1}
	_, b, c0, _ := c.operands(r)
	a := randMat(r, c.k*c.m)
	at := make([]float32, c.m*c.k)
	for p := 0; p < c.k; p++ {
		for i := 0; i < c.m; i++ {
			at[i*c.k+p] = a[p*c.m+i]
		}
	}
	var pb PackedB
	pb.Pack(false, c.k, c.n, b, c.n)
	want, got := append([]float32(nil), c0...), append([]float32(nil), c0...)
	Bgemm(c.m, 1, at, c.k, &pb, 1, want, c.n)
	BgemmTA(c.m, 1, a, c.m, &pb, 1, got, c.n)
	if !slices.Equal(bitsOf(got), bitsOf(want)) {
		t.Fatal("BgemmTA differs from Bgemm on Aᵀ")
	}
}

func bitsOf(x []float32) []uint32 {
	u := make([]uint32, len(x))
	for i, f := range x {
		u[i] = math.Float32bits(f)
	}
	return u
}

// TestPairBF16MatchesGo: the rounding-and-interleaving loop gives
// ToBF16's pairs on random bit patterns (NaN, denormals and infinities
// among them), in panels step words apart, with a tail past the last 32.
func TestPairBF16MatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{5, 32, 100, 4099} {
		lo, hi := make([]float32, n), make([]float32, n)
		for i := range lo {
			lo[i], hi[i] = math.Float32frombits(r.Uint32()), math.Float32frombits(r.Uint32())
		}
		lo[0], hi[0] = math.Float32frombits(0x3f808000), math.Float32frombits(0x00000001)
		for _, step := range []int{32, 96} {
			dst := make([]uint32, ceilDiv(n, 32)*step)
			pairBF16(dst, step, lo, hi)
			for j := range lo {
				want := uint32(ToBF16(lo[j])) | uint32(ToBF16(hi[j]))<<16
				if got := dst[j/32*step+j%32]; got != want {
					t.Fatalf("n %d step %d: pair %d = %#08x, ToBF16 gives %#08x", n, step, j, got, want)
				}
			}
		}
	}
}

// ToBF16Halves rounds as ToBF16 does, on the vector path and the loop,
// and interleaves each block's halves: word t of a block is the pair
// bf16(src[t]) | bf16(src[16+t])<<16.
func TestToBF16HalvesMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, n := range []int{0, 32, 64, 4096} {
		src := make([]float32, n)
		for i := range src {
			src[i] = math.Float32frombits(r.Uint32())
		}
		if n > 0 {
			src[0], src[17] = math.Float32frombits(0x3f808000), math.Float32frombits(0x00000001)
		}
		paths := []bool{false}
		if hasBF16Asm {
			paths = append(paths, true)
		}
		for _, asm := range paths {
			prev := hasBF16Asm
			hasBF16Asm = asm
			dst := make([]uint16, n+2)
			dst[n], dst[n+1] = 0xbeef, 0xbeef // past the end: untouched
			ToBF16Halves(dst, src)
			hasBF16Asm = prev
			for b := 0; b < n; b += 32 {
				for j := 0; j < 16; j++ {
					if lo, hi := ToBF16(src[b+j]), ToBF16(src[b+16+j]); dst[b+2*j] != lo || dst[b+2*j+1] != hi {
						t.Fatalf("n %d asm %v: block %d pair %d = %#04x %#04x, ToBF16 gives %#04x %#04x", n, asm, b/32, j, dst[b+2*j], dst[b+2*j+1], lo, hi)
					}
				}
			}
			if dst[n] != 0xbeef || dst[n+1] != 0xbeef {
				t.Fatalf("n %d asm %v: wrote past the end", n, asm)
			}
		}
	}
}
