package gemm

import (
	"sync"
)

// Blocking: k is cut into KC slices at fixed multiples (0, KC, 2·KC, …) so
// that every C element is accumulated in the same order whatever the split
// over workers; n is cut into NC slices, one packed B block each. The sizes
// were chosen by measurement on the target CPU (Zen 4, 1 MiB L2): KC 512
// beat 128, 256 and 384, and NC 512 beat 256, at 2048³ and at the model's
// shapes, where most k are 128–512 and fit one slice.
const (
	kcBlock = 512
	ncBlock = 512 // a multiple of every kernel's nr

	// minParallelWork is the m·n·k below which one goroutine is about as
	// fast as waking others (under 10 µs of FMAs on one core); it also
	// keeps the small multiplies that callers already run from several
	// goroutines (attention heads) from spawning more.
	minParallelWork = 1 << 20
)

// kernel is one register-blocked micro-kernel and its tile shape.
type kernel struct {
	name   string
	mr, nr int
	// fn computes C[mr×nr] += alpha·A[mr×kc]·B[kc×nr] with kc ≥ 1, where
	// A(i,p) = a[aOff+i·rsA+p·csA], B(p,j) = b[bOff+p·ldb+j] and
	// C(i,j) = c[cOff+i·ldc+j]. Each C element is one accumulator summed
	// in p order, then fused into C as alpha·acc + C; with over, C is
	// set to alpha·acc and never read (the same bits as C cleared first,
	// but for the sign of a zero).
	fn func(kc int, a []float32, aOff, rsA, csA int, b []float32, bOff, ldb int, c []float32, cOff, ldc int, alpha float32, over bool)
}

// problem is one Sgemm call, shared read-only by its workers.
type problem struct {
	kern           *kernel
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a              []float32
	lda            int
	b              []float32
	ldb            int
	c              []float32
	ldc            int
	packA, packB   bool
	// pre, when not nil, is B packed beforehand (SgemmPackedWorkers):
	// b is unused and nothing of B is packed in the call.
	pre *PackedS
}

// buffers are one worker's scratch: a packed A panel, a packed B block, a
// packed edge panel of B and a C tile for partial tiles.
type buffers struct {
	a, b, edgeB, tile []float32
}

var bufPool = sync.Pool{New: func() any {
	return &buffers{
		a:     make([]float32, maxMR*kcBlock),
		b:     make([]float32, kcBlock*ncBlock),
		edgeB: make([]float32, kcBlock*maxNR),
		tile:  make([]float32, maxMR*maxNR),
	}
}}

const (
	maxMR = 8
	maxNR = 32
)

// sgemmWith runs one multiply with the given kernel and worker bound.
func sgemmWith(kern *kernel, workers int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	p := &problem{kern: kern, transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: alpha, beta: beta, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc}
	// B is read straight from the caller's rows when few row panels reuse
	// it (small m: packing would cost as much as the FMAs); transposed B
	// must be packed to give the kernel contiguous rows.
	p.packB = transB || m > 4*kern.mr
	p.packA = packsA(kern, n)
	p.run(workers)
}

// packsA is whether a product with n columns packs A. Packing an A panel
// costs about as much as two kernel calls, so it pays only when many
// column panels reuse it; strided reads of A are otherwise served well
// enough by L1 and the prefetchers.
func packsA(kern *kernel, n int) bool { return min(n, ncBlock) >= 16*kern.nr }

// run computes the whole of C on at most workers goroutines.
func (p *problem) run(workers int) {
	m, n, k, kern := p.m, p.n, p.k, p.kern
	if workers > 1 && m*n*k < minParallelWork {
		workers = 1
	}
	if workers <= 1 {
		p.region(0, m, 0, n)
		return
	}
	// Split into near-equal runs of whole tile panels, so no tile straddles
	// two workers, along the longer side of C: each worker packs the B
	// block of its own columns, so a split over rows repeats B's packing
	// in every worker while a split over columns repeats only A's reads.
	// The calling goroutine takes the last share itself.
	mp, np := ceilDiv(m, kern.mr), ceilDiv(n, kern.nr)
	byRows := m >= n && mp >= workers || np < workers
	panels, step := np, kern.nr
	if byRows {
		panels, step = mp, kern.mr
	}
	workers = min(workers, panels)
	share := func(w int) {
		lo, hi := w*panels/workers*step, (w+1)*panels/workers*step
		if byRows {
			p.region(lo, min(hi, m), 0, n)
		} else {
			p.region(0, m, lo, min(hi, n))
		}
	}
	var wg sync.WaitGroup
	for w := 0; w < workers-1; w++ {
		wg.Go(func() { share(w) })
	}
	share(workers - 1)
	wg.Wait()
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// region computes rows [i0,i1) × columns [j0,j1) of C.
func (p *problem) region(i0, i1, j0, j1 int) {
	// With beta 0 the first k slice's kernel calls write C instead of
	// adding to it: clearing C first and reading the zeros back cost a
	// training step's multiplies about 6% (scaleC's clear of every C).
	over := p.beta == 0 && p.alpha != 0 && p.k > 0
	if !over {
		scaleC(p.beta, p.c, p.ldc, i0, i1, j0, j1)
	}
	if p.alpha == 0 || p.k == 0 {
		return
	}
	buf := bufPool.Get().(*buffers)
	defer bufPool.Put(buf)
	mr, nr := p.kern.mr, p.kern.nr
	for jc := j0; jc < j1; jc += ncBlock {
		nc := min(ncBlock, j1-jc)
		for pc := 0; pc < p.k; pc += kcBlock {
			kc := min(kcBlock, p.k-pc)
			edge := nc - nc%nr // first column of a partial panel, if any
			switch {
			case p.pre != nil:
			case p.packB:
				p.packBBlock(buf.b, pc, kc, jc, nc)
			case edge < nc:
				p.packBPanel(buf.edgeB, pc, kc, jc+edge, nc-edge)
			}
			for ir := i0; ir < i1; ir += mr {
				mrr := min(mr, i1-ir)
				aS, aOff, rsA, csA := p.a, 0, 0, 0
				switch {
				case mrr < mr || p.packA:
					p.packAPanel(buf.a, ir, mrr, pc, kc)
					aS, rsA, csA = buf.a, 1, mr
				case p.transA:
					aOff, rsA, csA = pc*p.lda+ir, 1, p.lda
				default:
					aOff, rsA, csA = ir*p.lda+pc, p.lda, 1
				}
				for jr := 0; jr < nc; jr += nr {
					nrr := min(nr, nc-jr)
					bS, bOff, ldb := p.b, pc*p.ldb+jc+jr, p.ldb
					switch {
					case p.pre != nil:
						bS, bOff, ldb = p.pre.data, p.pre.panel(pc, kc, jc+jr), nr
					case p.packB:
						bS, bOff, ldb = buf.b, jr*kc, nr
					case nrr < nr:
						bS, bOff, ldb = buf.edgeB, 0, nr
					}
					cOff := ir*p.ldc + jc + jr
					first := over && pc == 0
					if mrr == mr && nrr == nr {
						p.kern.fn(kc, aS, aOff, rsA, csA, bS, bOff, ldb, p.c, cOff, p.ldc, p.alpha, first)
						continue
					}
					// Partial tile: run the same kernel on a full-size copy
					// so the arithmetic per element is unchanged.
					t := buf.tile[:mr*nr]
					clear(t)
					if !first {
						for i := 0; i < mrr; i++ {
							copy(t[i*nr:i*nr+nrr], p.c[cOff+i*p.ldc:])
						}
					}
					p.kern.fn(kc, aS, aOff, rsA, csA, bS, bOff, ldb, t, 0, nr, p.alpha, first)
					for i := 0; i < mrr; i++ {
						copy(p.c[cOff+i*p.ldc:cOff+i*p.ldc+nrr], t[i*nr:])
					}
				}
			}
		}
	}
}

// scaleC sets C = beta·C on a rectangle; beta == 0 writes zeros without
// reading, so NaN or Inf already in C does not leak through.
func scaleC(beta float32, c []float32, ldc, i0, i1, j0, j1 int) {
	if beta == 1 {
		return
	}
	for i := i0; i < i1; i++ {
		row := c[i*ldc+j0 : i*ldc+j1]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// packBBlock copies op(B)[pc:pc+kc, jc:jc+nc] into panels of nr columns:
// panel q holds rows p at dst[q·kc·nr + p·nr : +nr], zero-padded past nc.
func (p *problem) packBBlock(dst []float32, pc, kc, jc, nc int) {
	nr := p.kern.nr
	for q := 0; q*nr < nc; q++ {
		p.packBPanel(dst[q*kc*nr:], pc, kc, jc+q*nr, min(nr, nc-q*nr))
	}
}

// packBPanel copies op(B)[pc:pc+kc, j0:j0+w] (w ≤ nr) into dst as kc rows
// of nr floats, zero-padded on the right.
func (p *problem) packBPanel(dst []float32, pc, kc, j0, w int) {
	nr := p.kern.nr
	dst = dst[:kc*nr]
	if w < nr {
		clear(dst)
	}
	if !p.transB {
		for r := 0; r < kc; r++ {
			copy(dst[r*nr:r*nr+w], p.b[(pc+r)*p.ldb+j0:])
		}
		return
	}
	j := 0
	for ; j+8 <= w; j += 8 {
		gather8(dst[j:], nr, p.b, (j0+j)*p.ldb+pc, p.ldb, kc)
	}
	for ; j < w; j++ {
		src := p.b[(j0+j)*p.ldb+pc:][:kc]
		for r, v := range src {
			dst[r*nr+j] = v
		}
	}
}

// gather8Go is gather8's portable loop: eight sequential read streams
// and one 32-byte store per step.
func gather8Go(dst []float32, stride int, src []float32, off, ld, kc int) {
	s0, s1 := src[off:][:kc], src[off+ld:][:kc]
	s2, s3 := src[off+2*ld:][:kc], src[off+3*ld:][:kc]
	s4, s5 := src[off+4*ld:][:kc], src[off+5*ld:][:kc]
	s6, s7 := src[off+6*ld:][:kc], src[off+7*ld:][:kc]
	for r := 0; r < kc; r++ {
		*(*[8]float32)(dst[r*stride:]) = [8]float32{s0[r], s1[r], s2[r], s3[r], s4[r], s5[r], s6[r], s7[r]}
	}
}

// packAPanel copies op(A)[i0:i0+h, pc:pc+kc] (h ≤ mr) into dst with
// element (i,p) at p·mr+i, zero-padded below h.
func (p *problem) packAPanel(dst []float32, i0, h, pc, kc int) {
	mr := p.kern.mr
	dst = dst[:kc*mr]
	if h < mr {
		clear(dst)
	}
	if p.transA {
		// Each k step is one run of h contiguous floats; fixed-size array
		// copies avoid a memmove call per run.
		if h == 8 && mr == 8 {
			for r := 0; r < kc; r++ {
				off := (pc+r)*p.lda + i0
				*(*[8]float32)(dst[r*8:]) = [8]float32(p.a[off : off+8])
			}
			return
		}
		for r := 0; r < kc; r++ {
			copy(dst[r*mr:r*mr+h], p.a[(pc+r)*p.lda+i0:])
		}
		return
	}
	if h == 8 && mr == 8 {
		gather8(dst, 8, p.a, i0*p.lda+pc, p.lda, kc)
		return
	}
	for i := 0; i < h; i++ {
		src := p.a[(i0+i)*p.lda+pc:][:kc]
		for r, v := range src {
			dst[r*mr+i] = v
		}
	}
}
