package gemm

import "fmt"

// PackedS is op(B), k×n, in fp32, laid out as Sgemm's kernel reads a
// packed B: for each slice of k at the multiples of SliceK, the panels of
// the kernel's nr columns in order, panel q of the slice starting at p0
// holding its rows at data[p0·np·nr + q·kc·nr + p·nr : +nr] (kc the
// slice's rows, np the panels), zero past n.
//
// Sgemm packs B anew in every call; a B that stays the same over many
// calls is packed once instead. The sampler multiplies by the same
// weights at every decoding step of a Sample call, a few dozen rows at a
// time, where copying the weights into panels cost about as much as
// reading them in the product. The bits are Sgemm's: its kernel reads
// each B(p,j) as the same float wherever that float lies.
type PackedS struct {
	kern     *kernel
	k, n, np int
	data     []float32
}

// K and N are op(B)'s dimensions.
func (pb *PackedS) K() int { return pb.k }
func (pb *PackedS) N() int { return pb.n }

// Pack copies op(B) (k×n; B stored row-major with leading dimension ldb,
// transposed when transB) into pb for the kernel Sgemm runs now, reusing
// pb's memory.
func (pb *PackedS) Pack(transB bool, k, n int, b []float32, ldb int) {
	checkPack("PackedS", transB, k, n, b, ldb)
	kern := activeKernel
	nr := kern.nr
	np := ceilDiv(n, nr)
	size := np * nr * k
	if cap(pb.data) < size {
		pb.data = make([]float32, size)
	}
	pb.kern, pb.k, pb.n, pb.np, pb.data = kern, k, n, np, pb.data[:size]
	p := &problem{kern: kern, transB: transB, k: k, n: n, b: b, ldb: ldb}
	for p0 := 0; p0 < k; p0 += kcBlock {
		kc := min(kcBlock, k-p0)
		for q := 0; q < np; q++ {
			p.packBPanel(pb.data[pb.panel(p0, kc, q*nr):], p0, kc, q*nr, min(nr, n-q*nr))
		}
	}
}

// panel is the offset in data of the panel that starts at column j (a
// multiple of nr) in the k slice starting at p0, kc rows deep.
func (pb *PackedS) panel(p0, kc, j int) int {
	nr := pb.kern.nr
	return p0*pb.np*nr + j/nr*kc*nr
}

// SgemmPackedWorkers is SgemmWorkers(workers, false, transB, m, n, k, …)
// with the B that pb holds (n and k its), bit for bit.
func SgemmPackedWorkers(workers, m int, alpha float32, a []float32, lda int, pb *PackedS, beta float32, c []float32, ldc int) {
	if pb.kern == nil {
		panic("gemm: SgemmPackedWorkers: PackedS never packed")
	}
	n, k := pb.n, pb.k
	if m < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d", m))
	}
	checkMat("a", a, m, k, lda)
	checkMat("c", c, m, n, ldc)
	if m == 0 || n == 0 {
		return
	}
	if workers <= 0 {
		workers = Workers()
	}
	p := &problem{kern: pb.kern, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, lda: lda, c: c, ldc: ldc, pre: pb}
	p.packA = packsA(pb.kern, n)
	p.run(workers)
}
