package gemm

import (
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// The bf16 path: C = alpha·bf16(A)·bf16(B) + beta·C with fp32
// accumulation, for products whose B is a weight matrix reused by many
// calls (sampling, the forward pass). B is rounded and packed once into a
// PackedB; A is rounded per call (its rows are activations). On CPUs with
// AVX512_BF16 the micro-kernel is VDPBF16PS, which multiplies bf16 pairs
// into fp32 lanes at twice the fp32 FMA rate and reads half the bytes;
// elsewhere a Go kernel computes the same bits, slower than Sgemm.
//
// Arithmetic, pinned by BgemmNaive: every operand is rounded to bf16 to
// nearest even (denormals to zero); C(i,j)'s accumulator starts at 0 and,
// for each k-pair p = (2p, 2p+1) in order, adds A(i,2p+1)·B(2p+1,j) and then
// A(i,2p)·B(2p,j), each product exact in fp32 and each sum rounded to
// nearest even, as VDPBF16PS does. k is cut at multiples of bfKC pairs;
// after each slice C = alpha·acc + C in one fused multiply-add. An odd k
// is padded with a zero. Results are bitwise identical for any worker
// count, for the reason Sgemm's are.

// bfKC is the k-slice in pairs: 512 k, Sgemm's kcBlock.
const bfKC = kcBlock / 2

// ToBF16 rounds f to bfloat16 (the top 16 bits of an fp32) to nearest,
// ties to even, as VCVTNEPS2BF16 does: denormals become signed zero and a
// NaN stays a (quiet) NaN.
func ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	switch {
	case u&0x7f800000 == 0: // zero or denormal
		return uint16(u>>16) & 0x8000
	case u&0x7fffffff > 0x7f800000: // NaN
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// FromBF16 widens a bfloat16 to the fp32 it denotes (exactly).
func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// roundBF16 is f rounded to bf16 and widened back.
func roundBF16(f float32) float32 { return FromBF16(ToBF16(f)) }

// ftz flushes an fp32 denormal to a zero of its sign, as VDPBF16PS does
// with its sums.
func ftz(f float32) float32 {
	if u := math.Float32bits(f); u&0x7f800000 == 0 {
		return math.Float32frombits(u & 0x80000000)
	}
	return f
}

// dpPair is one VDPBF16PS lane: acc + a1·b1 + a0·b0, the odd product
// first, each sum rounded (the products of bf16 values are exact in fp32).
func dpPair(acc, a0, a1, b0, b1 float32) float32 {
	acc = ftz(acc + a1*b1)
	return ftz(acc + a0*b0)
}

// fma32 is alpha·acc + c rounded once to fp32, as VFMADD213PS rounds it.
// The float64 product is exact (24+24 bits); the float64 sum is rounded
// once more before fp32, which can differ from a single rounding only
// when alpha is not a power of two (the engine always passes 1).
func fma32(alpha, acc, c float32) float32 {
	return float32(math.FMA(float64(alpha), float64(acc), float64(c)))
}

// BgemmNaive is Bgemm's reference: the same roundings and the same order
// of sums in three loops over the unpacked matrices. op(B) is B or Bᵀ.
func BgemmNaive(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	bv := func(p, j int) float32 {
		if p >= k {
			return 0
		}
		if transB {
			return roundBF16(b[j*ldb+p])
		}
		return roundBF16(b[p*ldb+j])
	}
	kp := (k + 1) / 2
	for i := 0; i < m; i++ {
		av := func(p int) float32 {
			if p >= k {
				return 0
			}
			return roundBF16(a[i*lda+p])
		}
		for j := 0; j < n; j++ {
			cij := &c[i*ldc+j]
			if beta == 0 {
				*cij = 0
			} else if beta != 1 {
				*cij *= beta
			}
			if alpha == 0 {
				continue
			}
			for pc := 0; pc < kp; pc += bfKC {
				var acc float32
				for p := pc; p < min(pc+bfKC, kp); p++ {
					acc = dpPair(acc, av(2*p), av(2*p+1), bv(2*p, j), bv(2*p+1, j))
				}
				*cij = fma32(alpha, acc, *cij)
			}
		}
	}
}

// PackedB is op(B), k×n, rounded to bf16 and laid out for Bgemm's kernel:
// panels of bfNR columns, panel q holding every k-pair p as bfNR uint32 at
// data[(q·kp + p)·bfNR + j], each the pair B(2p,j) | B(2p+1,j)<<16, zero
// past k and n. Pack it once per change of B; reuse it for every product.
type PackedB struct {
	k, n, kp int
	data     []uint32
}

const (
	bfNR  = 32 // the kernels' columns: two 16-lane accumulators, two AMX tiles
	bfKP  = 16 // pairs are padded to a multiple of this: one AMX tile's depth
	amxMR = 32 // the AMX kernel's rows: two tiles
)

// K and N are op(B)'s dimensions.
func (pb *PackedB) K() int { return pb.k }
func (pb *PackedB) N() int { return pb.n }

// Pack rounds op(B) (k×n; B stored row-major with leading dimension ldb,
// transposed when transB) into pb, reusing its memory.
func (pb *PackedB) Pack(transB bool, k, n int, b []float32, ldb int) {
	checkPack("PackedB", transB, k, n, b, ldb)
	kp := ceilDiv(k, 2*bfKP) * bfKP
	size := ceilDiv(n, bfNR) * bfNR * kp
	if cap(pb.data) < size {
		pb.data = make([]uint32, size)
	}
	pb.k, pb.n, pb.kp, pb.data = k, n, kp, pb.data[:size]
	clear(pb.data)
	if k == 0 || n == 0 {
		return
	}
	row := make([]uint16, 2*kp)
	if transB {
		// Row j of B is column j of op(B): its bf16 values are already
		// the pairs, in k order.
		for j := 0; j < n; j++ {
			cvtBF16(row[:k], b[j*ldb:j*ldb+k])
			q, jj := j/bfNR, j%bfNR
			base := q * kp * bfNR
			for p := 0; p < kp; p++ {
				pb.data[base+p*bfNR+jj] = uint32(row[2*p]) | uint32(row[2*p+1])<<16
			}
		}
		return
	}
	// Pair-row p of every panel: 32 consecutive words a panel, panels
	// kp·bfNR words apart.
	for p := 0; 2*p < k; p++ {
		var hi []float32
		if 2*p+1 < k {
			hi = b[(2*p+1)*ldb : (2*p+1)*ldb+n]
		} else {
			hi = make([]float32, n) // the odd k's pad
		}
		pairBF16(pb.data[p*bfNR:], kp*bfNR, b[2*p*ldb:2*p*ldb+n], hi)
	}
}

// ToBF16Slice sets dst[i] = ToBF16(src[i]) for every i of src; dst must
// be at least as long.
func ToBF16Slice(dst []uint16, src []float32) { cvtBF16(dst, src) }

// cvtBF16 sets dst[i] = ToBF16(src[i]).
func cvtBF16(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	n := 0
	if hasBF16Asm {
		n = len(src) &^ 15
		if n > 0 {
			cvtBF16AVX512(&dst[0], &src[0], n)
		}
	}
	for i := n; i < len(src); i++ {
		dst[i] = ToBF16(src[i])
	}
}

// ToBF16Halves rounds src to bf16 (ToBF16) in blocks of 32 values, each
// block's two halves interleaved: dst[b+2t] = ToBF16(src[b+t]) and
// dst[b+2t+1] = ToBF16(src[b+16+t]) for t < 16. This is the order the
// bf16 attention kernels read a cached key or value in (as uint32 words,
// the pair bf16(src[b+t]) | bf16(src[b+16+t])<<16). len(src) must be a
// multiple of 32 and dst at least as long.
func ToBF16Halves(dst []uint16, src []float32) {
	n := len(src)
	if n%32 != 0 {
		panic(fmt.Sprintf("gemm: ToBF16Halves of %d values, want a multiple of 32", n))
	}
	dst = dst[:n]
	if hasBF16Asm && n > 0 {
		halvesBF16AVX512(&dst[0], &src[0], n)
		return
	}
	for b := 0; b < n; b += 32 {
		for t := 0; t < 16; t++ {
			dst[b+2*t], dst[b+2*t+1] = ToBF16(src[b+t]), ToBF16(src[b+16+t])
		}
	}
}

// pairBF16 sets the pair ToBF16(lo[j]) | ToBF16(hi[j])<<16 at
// dst[(j/32)·step + j%32] for every j of lo: two rows of op(B) (or of A,
// for Aᵀ) into PackedB's pairs, one panel's row per 32 columns, step
// words apart. hi must be as long as lo.
func pairBF16(dst []uint32, step int, lo, hi []float32) {
	n := len(lo)
	hi = hi[:n]
	done := 0
	if hasBF16Asm && n >= 32 {
		done = n &^ 31
		_ = dst[(done/32-1)*step+31]
		pairBF16AVX512(&dst[0], 4*step, &lo[0], &hi[0], done)
	}
	for j := done; j < n; j++ {
		dst[j/32*step+j%32] = uint32(ToBF16(lo[j])) | uint32(ToBF16(hi[j]))<<16
	}
}

// bfKernel computes C[8×32] += alpha·A·B over kc pairs: A(i,p) = a[i·rsA+p],
// B(p,j) = b[p·ldb+j], C(i,j) = c[i·ldc+j], bf16 pairs in uint32.
type bfKernel func(kc int, a []uint32, rsA int, b []uint32, ldb int, c []float32, ldc int, alpha float32)

const bfMR = 8

// bfKernGo is the portable kernel: VDPBF16PS lane by lane.
func bfKernGo(kc int, a []uint32, rsA int, b []uint32, ldb int, c []float32, ldc int, alpha float32) {
	var acc [bfMR][bfNR]float32
	for p := 0; p < kc; p++ {
		brow := b[p*ldb : p*ldb+bfNR]
		for i := 0; i < bfMR; i++ {
			ap := a[i*rsA+p]
			a0, a1 := FromBF16(uint16(ap)), FromBF16(uint16(ap>>16))
			for j, bp := range brow {
				acc[i][j] = dpPair(acc[i][j], a0, a1, FromBF16(uint16(bp)), FromBF16(uint16(bp>>16)))
			}
		}
	}
	for i := 0; i < bfMR; i++ {
		row := c[i*ldc : i*ldc+bfNR]
		for j := range row {
			row[j] = fma32(alpha, acc[i][j], row[j])
		}
	}
}

// aPool holds the bf16 copies of A that Bgemm calls make.
var aPool = sync.Pool{New: func() any { return new([]uint32) }}

// Bgemm sets C = alpha·bf16(A)·op(B) + beta·C, A m×k row-major with
// leading dimension lda, op(B) packed in pb (k = pb.K(), n = pb.N()).
// Edge cases are Sgemm's: beta == 0 overwrites C, alpha == 0 or k == 0
// only scales it.
func Bgemm(m int, alpha float32, a []float32, lda int, pb *PackedB, beta float32, c []float32, ldc int) {
	BgemmWorkers(0, m, alpha, a, lda, pb, beta, c, ldc)
}

// BgemmWorkers is Bgemm on at most workers goroutines, as SgemmWorkers.
func BgemmWorkers(workers, m int, alpha float32, a []float32, lda int, pb *PackedB, beta float32, c []float32, ldc int) {
	kern := activeBF16
	if hasAMX {
		kern = nil
	}
	if workers <= 0 {
		workers = Workers()
	}
	bgemmWith(kern, workers, m, alpha, a, lda, pb, beta, c, ldc, nil, nil)
}

// BgemmTA is Bgemm with A transposed: C = alpha·bf16(A)ᵀ·op(B) + beta·C,
// A k×m row-major with leading dimension lda. It is the weight gradient's
// product, dW = xᵀ·dy, whose sum runs over the rows (tokens) of x and dy:
// the bits are those of Bgemm on Aᵀ stored row-major.
func BgemmTA(m int, alpha float32, a []float32, lda int, pb *PackedB, beta float32, c []float32, ldc int) {
	kern := activeBF16
	if hasAMX {
		kern = nil
	}
	bgemmRun(kern, Workers(), true, m, alpha, a, lda, pb, beta, c, ldc, nil, nil)
}

// BgemmBias sets C = bf16(A)·op(B) + bias + resid: bias (n long, added to
// every row) and resid (m×n with leading dimension ldc) may each be nil.
// The bits are those of setting C to resid + bias (in that order) and
// then calling Bgemm with alpha 1 and beta 1; on AMX the sum is taken
// block row by block row as the tiles finish, not in a pass over C of
// its own before the product.
func BgemmBias(m int, a []float32, lda int, pb *PackedB, bias, resid, c []float32, ldc int) {
	BgemmBiasWorkers(0, m, a, lda, pb, bias, resid, c, ldc)
}

// BgemmBiasWorkers is BgemmBias on at most workers goroutines, as
// SgemmWorkers.
func BgemmBiasWorkers(workers, m int, a []float32, lda int, pb *PackedB, bias, resid, c []float32, ldc int) {
	if workers <= 0 {
		workers = Workers()
	}
	if bias != nil && len(bias) < pb.n {
		panic(fmt.Sprintf("gemm: BgemmBias: len(bias)=%d < n=%d", len(bias), pb.n))
	}
	if resid != nil {
		checkMat("resid", resid, m, pb.n, ldc)
	}
	kern := activeBF16
	if hasAMX {
		kern = nil
	}
	bgemmWith(kern, workers, m, 1, a, lda, pb, biasBeta(bias, resid), c, ldc, bias, resid)
}

// biasBeta is BgemmBias's beta: 1 onto resid + bias, 0 when both are nil.
func biasBeta(bias, resid []float32) float32 {
	if bias == nil && resid == nil {
		return 0
	}
	return 1
}

// initRows sets rows [i0,i1) × columns [j0,j1) of C to resid + bias,
// either, or zero (matmul's initial C).
func initRows(c []float32, ldc int, bias, resid []float32, i0, i1, j0, j1 int) {
	for i := i0; i < i1; i++ {
		row := c[i*ldc+j0 : i*ldc+j1]
		switch {
		case resid != nil:
			copy(row, resid[i*ldc+j0:i*ldc+j1])
			if bias != nil {
				Axpy(1, bias[j0:j1], row) // fma(1, b, r): r + b rounded once
			}
		case bias != nil:
			copy(row, bias[j0:j1])
		default:
			clear(row)
		}
	}
}

// bgemmWith runs Bgemm on kern, or on AMX tiles when kern is nil.
// bias and resid, when either is given (alpha and beta then 1), set C to
// resid + bias before the product is added (BgemmBias).
func bgemmWith(kern bfKernel, workers, m int, alpha float32, a []float32, lda int, pb *PackedB, beta float32, c []float32, ldc int, bias, resid []float32) {
	bgemmRun(kern, workers, false, m, alpha, a, lda, pb, beta, c, ldc, bias, resid)
}

// bgemmRun is bgemmWith with op(A) = Aᵀ (A k×m) when transA.
func bgemmRun(kern bfKernel, workers int, transA bool, m int, alpha float32, a []float32, lda int, pb *PackedB, beta float32, c []float32, ldc int, bias, resid []float32) {
	k, n := pb.k, pb.n
	if m < 0 {
		panic(fmt.Sprintf("gemm: Bgemm: negative m=%d", m))
	}
	if transA {
		checkMat("a", a, k, m, lda)
	} else {
		checkMat("a", a, m, k, lda)
	}
	checkMat("c", c, m, n, ldc)
	if m == 0 || n == 0 {
		return
	}
	init := bias != nil || resid != nil
	if alpha == 0 || k == 0 {
		if init {
			initRows(c, ldc, bias, resid, 0, m, 0, n)
			return
		}
		scaleC(beta, c, ldc, 0, m, 0, n)
		return
	}
	// A in bf16, rows padded to a multiple of bfMR with zeros so every
	// kernel call reads whole rows; kp pairs a row, rows rs pairs apart.
	kp := pb.kp
	rs := aStride(kp)
	mr := bfMR
	if kern == nil {
		mr = amxMR
	}
	rowsA := ceilDiv(m, mr) * mr
	bufp := aPool.Get().(*[]uint32)
	defer aPool.Put(bufp)
	if cap(*bufp) < rowsA*rs {
		*bufp = make([]uint32, rowsA*rs)
	}
	ap := (*bufp)[:rowsA*rs]
	if transA {
		packAT(ap, kp, rs, m, k, a, lda)
	} else {
		ah := unsafe.Slice((*uint16)(unsafe.Pointer(&ap[0])), 2*len(ap))
		for i := 0; i < m; i++ {
			cvtBF16(ah[2*i*rs:2*i*rs+k], a[i*lda:i*lda+k])
			clear(ah[2*i*rs+k : 2*(i+1)*rs]) // the odd k's pad, the pairs past k and the stride's
		}
	}
	clear(ap[m*rs:])

	r := bfRun{kern: kern, kp: kp, rs: rs, alpha: alpha, beta: beta, a: ap, b: pb.data, c: c, ldc: ldc, bias: bias, resid: resid}
	if workers > 1 && m*n*k < minParallelWork {
		workers = 1
	}
	if workers <= 1 {
		r.region(0, m, 0, n)
		return
	}
	// Split as sgemmWith does, into runs of whole tiles along C's longer side.
	mp, np := ceilDiv(m, mr), ceilDiv(n, bfNR)
	byRows := m >= n && mp >= workers || np < workers
	panels, step := np, bfNR
	if byRows {
		panels, step = mp, mr
	}
	workers = min(workers, panels)
	share := func(w int) {
		lo, hi := w*panels/workers*step, (w+1)*panels/workers*step
		if byRows {
			r.region(lo, min(hi, m), 0, n)
		} else {
			r.region(0, m, lo, min(hi, n))
		}
	}
	var wg sync.WaitGroup
	for w := 0; w < workers-1; w++ {
		wg.Go(func() { share(w) })
	}
	share(workers - 1)
	wg.Wait()
}

// bfRun is one Bgemm call, shared read-only by its workers.
type bfRun struct {
	kern        bfKernel
	kp          int // pairs of A's rows and of B's panels
	rs          int // A's row stride in pairs (aStride)
	alpha, beta float32
	a, b        []uint32
	c           []float32
	ldc         int
	// bias and resid, either non-nil, give C's initial value (BgemmBias).
	bias, resid []float32
}

// region computes rows [i0,i1) × columns [j0,j1) of C; i0 and j0 are tile
// aligned.
func (r *bfRun) region(i0, i1, j0, j1 int) {
	if r.kern == nil {
		r.amxRegion(i0, i1, j0, j1)
		return
	}
	if r.bias != nil || r.resid != nil {
		initRows(r.c, r.ldc, r.bias, r.resid, i0, i1, j0, j1)
	} else {
		scaleC(r.beta, r.c, r.ldc, i0, i1, j0, j1)
	}
	var tile [bfMR * bfNR]float32
	for jc := j0; jc < j1; jc += ncBlock {
		jcEnd := min(jc+ncBlock, j1)
		for pc := 0; pc < r.kp; pc += bfKC {
			kc := min(bfKC, r.kp-pc)
			for ir := i0; ir < i1; ir += bfMR {
				mrr := min(bfMR, i1-ir)
				a := r.a[ir*r.rs+pc:]
				for jr := jc; jr < jcEnd; jr += bfNR {
					nrr := min(bfNR, jcEnd-jr)
					b := r.b[(jr/bfNR*r.kp+pc)*bfNR:]
					cOff := ir*r.ldc + jr
					if mrr == bfMR && nrr == bfNR {
						r.kern(kc, a, r.rs, b, bfNR, r.c[cOff:], r.ldc, r.alpha)
						continue
					}
					// Partial tile: the same kernel on a full-size copy.
					clear(tile[:])
					for i := 0; i < mrr; i++ {
						copy(tile[i*bfNR:i*bfNR+nrr], r.c[cOff+i*r.ldc:])
					}
					r.kern(kc, a, r.rs, b, bfNR, tile[:], bfNR, r.alpha)
					for i := 0; i < mrr; i++ {
						copy(r.c[cOff+i*r.ldc:cOff+i*r.ldc+nrr], tile[i*bfNR:])
					}
				}
			}
		}
	}
}

// outPool holds fp32 scratch: the AMX kernel's results for blocks cut by
// C's edge or before Axpy adds them (alpha ≠ 1), and packAT's rows of
// pairs.
var outPool = sync.Pool{New: func() any { return new([]float32) }}

// amxRegion is region on AMX tiles, the whole k in one accumulation per
// 32×32 block. With alpha 1 (every caller in the engine) the tiles'
// accumulators start from C's own block, set beforehand to beta·C or
// resid + bias a block row at a time while it is in cache (tile zero, and
// no pass over C, when beta is 0 with neither addend), and are stored
// straight back: C + Σ_p with one tile load and one tile store a block,
// where summing into a scratch block first cost that block's store and
// reload and an Axpy pass over C (and, for beta 0, a pass clearing it).
// The sums are the tiles' own either way; only where they start moves,
// so the bits differ from the scratch path's in the last places
// (TestBgemmGolden bounds both). A block cut by C's
// edge takes the same path through a scratch copy of itself, so every
// element gets the same arithmetic wherever it lies: a row's bits do not
// depend on how many rows share the call (the sampler batches sequences
// and relies on it) nor on the worker count. Other alphas go through
// amxRegionAxpy.
func (r *bfRun) amxRegion(i0, i1, j0, j1 int) {
	if r.alpha != 1 {
		r.amxRegionAxpy(i0, i1, j0, j1)
		return
	}
	init := r.bias != nil || r.resid != nil
	onto := init || r.beta != 0
	w := j1 - j0
	full := w / bfNR // panels wholly inside C
	np := ceilDiv(w, bfNR)
	ldo := np * bfNR
	b := r.b[j0/bfNR*r.kp*bfNR:]
	var scratch []float32
	for ir := i0; ir < i1; ir += amxMR {
		h := min(amxMR, i1-ir)
		a := r.a[ir*r.rs:]
		switch {
		case init:
			initRows(r.c, r.ldc, r.bias, r.resid, ir, ir+h, j0, j1)
		case r.beta != 0:
			scaleC(r.beta, r.c, r.ldc, ir, ir+h, j0, j1)
		}
		// Whole panels of a whole block row: in place.
		q0 := 0
		if h == amxMR && full > 0 {
			amxRows(r.kp, a, r.rs, b, full, r.c[ir*r.ldc+j0:], r.ldc, onto)
			q0 = full
		}
		if q0 == np {
			continue
		}
		// The rest, cut by C's bottom or right edge: through scratch.
		if scratch == nil { // taken once, returned when the region is done
			bufp := outPool.Get().(*[]float32)
			defer outPool.Put(bufp)
			if cap(*bufp) < amxMR*ldo {
				*bufp = make([]float32, amxMR*ldo)
			}
			scratch = (*bufp)[:amxMR*ldo]
		}
		c0, c1 := j0+q0*bfNR, j1
		sw := (np - q0) * bfNR
		out := scratch[:amxMR*sw]
		clear(out)
		if onto {
			for i := 0; i < h; i++ {
				copy(out[i*sw:], r.c[(ir+i)*r.ldc+c0:(ir+i)*r.ldc+c1])
			}
		}
		amxRows(r.kp, a, r.rs, b[q0*r.kp*bfNR:], np-q0, out, sw, onto)
		for i := 0; i < h; i++ {
			copy(r.c[(ir+i)*r.ldc+c0:(ir+i)*r.ldc+c1], out[i*sw:])
		}
	}
}

// amxRegionAxpy is amxRegion for alpha ≠ 1: every block sums from zero
// into a scratch block row, then C = alpha·acc + C with Axpy (one fused
// multiply-add an element, as the other kernels' epilogue), C's initial
// value set a block row at a time just before it is added to.
func (r *bfRun) amxRegionAxpy(i0, i1, j0, j1 int) {
	init := r.bias != nil || r.resid != nil
	np := ceilDiv(j1-j0, bfNR)
	ldo := np * bfNR
	bufp := outPool.Get().(*[]float32)
	defer outPool.Put(bufp)
	if cap(*bufp) < amxMR*ldo {
		*bufp = make([]float32, amxMR*ldo)
	}
	out := (*bufp)[:amxMR*ldo]
	w := j1 - j0
	for ir := i0; ir < i1; ir += amxMR {
		amxRows(r.kp, r.a[ir*r.rs:], r.rs, r.b[j0/bfNR*r.kp*bfNR:], np, out, ldo, false)
		for i := 0; i < min(amxMR, i1-ir); i++ {
			if init {
				initRows(r.c, r.ldc, r.bias, r.resid, ir+i, ir+i+1, j0, j1)
			} else {
				scaleC(r.beta, r.c, r.ldc, ir+i, ir+i+1, j0, j1)
			}
			Axpy(r.alpha, out[i*ldo:i*ldo+w], r.c[(ir+i)*r.ldc+j0:(ir+i)*r.ldc+j1])
		}
	}
}

// checkPack panics with a readable message when b (leading dimension
// ldb, transposed when transB) does not hold a k×n op(B) to pack.
func checkPack(what string, transB bool, k, n int, b []float32, ldb int) {
	if k < 0 || n < 0 {
		panic(fmt.Sprintf("gemm: %s.Pack: negative dimension k=%d n=%d", what, k, n))
	}
	if transB {
		checkMat("b", b, n, k, ldb)
	} else {
		checkMat("b", b, k, n, ldb)
	}
}

// checkMat panics unless s holds a rows×cols matrix with leading
// dimension ld.
func checkMat(name string, s []float32, rows, cols, ld int) {
	if rows == 0 || cols == 0 {
		return
	}
	if ld < cols {
		panic(fmt.Sprintf("gemm: ld%s=%d < %d columns", name, ld, cols))
	}
	if n := (rows-1)*ld + cols; len(s) < n {
		panic(fmt.Sprintf("gemm: len(%s)=%d < %d (%d×%d, ld %d)", name, len(s), n, rows, cols, ld))
	}
}

// HasBF16 reports whether Bgemm runs on the CPU's bf16 instructions (AMX
// tiles or AVX512_BF16); when false it computes VDPBF16PS's bits in Go,
// more slowly than Sgemm.
func HasBF16() bool { return hasAMX || hasBF16Asm }

// BF16PeakPerCycle is the bf16 FLOP one core can issue a cycle on
// Bgemm's kernel, by the instruction's documented rate: TDPBF16PS does a
// 16×16×32 tile product (8192 multiply-adds) in 16 cycles, 1024 FLOP a
// cycle; VDPBF16PS 32 multiply-adds on two ports, 128; 0 for the Go one.
func BF16PeakPerCycle() float64 {
	switch {
	case hasAMX:
		return 1024
	case hasBF16Asm:
		return 128
	}
	return 0
}

// BF16KernelName says what Bgemm runs on: "amx-bf16", "avx512bf16-8x32"
// or "go-bf16".
func BF16KernelName() string {
	switch {
	case hasAMX:
		return "amx-bf16"
	case hasBF16Asm:
		return "avx512bf16-8x32"
	}
	return "go-bf16"
}

// aStride is the row stride, in pairs, of A's bf16 copy of kp pairs a
// row: kp, or kp + bfKP (64 bytes more) when kp·4 bytes is a multiple of
// 1 KiB. Rows a multiple of 4 KiB apart fall in one set of the 12-way L1
// (4 KiB a way); at k = 2048 (the weight gradients' tokens) every row of
// a 16-row tile and every store of packAT's transpose did, and packAT
// took most of BgemmTA's time.
func aStride(kp int) int {
	if kp%256 == 0 {
		return kp + bfKP
	}
	return kp
}

// packAT sets rows [0,m) of ap (kp pairs a row, rows rs pairs apart; the
// pairs between are left as they are, no kernel reads them) to the bf16
// pairs of Aᵀ, A k×m row-major with leading dimension lda, zero past k.
// For each run of bfKP pairs it rounds the run's 2·bfKP rows of A (whole
// rows, with the vector conversion) and joins each two into one row of m
// pairs, PackedB's interleave; those bfKP rows of 32-bit pairs are then
// transposed 8×8 at a time (gather8, Sgemm's packing transpose) into the
// run's cache line of each row of Aᵀ. Neither side is read or written
// with a stride an element.
func packAT(ap []uint32, kp, rs, m, k int, a []float32, lda int) {
	bufp := outPool.Get().(*[]float32)
	defer outPool.Put(bufp)
	if need := bfKP*m + m; cap(*bufp) < need {
		*bufp = make([]float32, need)
	}
	buf := (*bufp)[:bfKP*m+m]
	pairs := buf[:bfKP*m] // bfKP rows of m pairs, as float32 for gather8
	pw := unsafe.Slice((*uint32)(unsafe.Pointer(&pairs[0])), len(pairs))
	zero := buf[bfKP*m:]
	clear(zero)
	apf := unsafe.Slice((*float32)(unsafe.Pointer(&ap[0])), len(ap))
	for p0 := 0; p0 < kp; p0 += bfKP {
		for q := 0; q < bfKP; q++ {
			row := pw[q*m : (q+1)*m]
			kk := 2 * (p0 + q)
			if kk >= k {
				clear(row)
				continue
			}
			hi := zero // the odd k's pad
			if kk+1 < k {
				hi = a[(kk+1)*lda : (kk+1)*lda+m]
			}
			pairBF16(row, bfNR, a[kk*lda:kk*lda+m], hi)
		}
		for q := 0; q < bfKP; q += 8 {
			gather8(apf[p0+q:], rs, pairs, q*m, m, m)
		}
	}
}
