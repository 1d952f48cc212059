package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchShapes are 2048³ and the engine's own multiplies: config A (d=128)
// and B (d=256) at batch·time = 4096 rows for training, and 16 rows (one
// token per sequence of a batch of 16) for KV-cache sampling.
var benchShapes = []struct {
	name           string
	transA, transB bool
	m, n, k        int
	lda, ldb       int // 0: the stored width
}{
	{"2048cube", false, false, 2048, 2048, 2048, 0, 0},
	{"A/qkv_4096x128x384", false, false, 4096, 384, 128, 0, 0},
	{"A/attnproj_4096x128x128", false, false, 4096, 128, 128, 0, 0},
	{"A/fc_4096x128x512", false, false, 4096, 512, 128, 0, 0},
	{"A/fcproj_4096x512x128", false, false, 4096, 128, 512, 0, 0},
	{"A/logits_4096x128x512T", false, true, 4096, 512, 128, 0, 0},
	{"A/dW_qkv_T4096", true, false, 128, 384, 4096, 0, 0},
	{"A/dX_qkv_4096x384x128T", false, true, 4096, 128, 384, 0, 0},
	{"A/dWte_T4096", true, false, 512, 128, 4096, 0, 0},
	{"A/sample_qkv_16x128x384", false, false, 16, 384, 128, 0, 0},
	{"A/sample_fcproj_16x512x128", false, false, 16, 128, 512, 0, 0},
	{"A/sample_logits_16x128x512T", false, true, 16, 512, 128, 0, 0},
	// Attention, one head (HS=32) of a 64-row block as lm calls it, with
	// q, k, v read in place from the [T,3C] qkv rows.
	{"A/att_QKt_64x32x256T", false, true, 64, 256, 32, 384, 384},
	{"A/att_PV_64x256x32", false, false, 64, 32, 256, 256, 384},
	{"A/att_dK_T256", true, false, 64, 32, 256, 256, 384},
	{"B/qkv_4096x256x768", false, false, 4096, 768, 256, 0, 0},
	{"B/fcproj_4096x1024x256", false, false, 4096, 256, 1024, 0, 0},
	{"B/logits_4096x256x512T", false, true, 4096, 512, 256, 0, 0},
	{"B/dW_fc_T4096", true, false, 256, 1024, 4096, 0, 0},
	{"B/sample_fc_16x256x1024", false, false, 16, 1024, 256, 0, 0},
}

func BenchmarkSgemm(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, kern := range usableKernels() {
		for _, s := range benchShapes {
			if kern == goKernel2x4 && s.m*s.n*s.k > 1<<30 {
				continue // seconds per op; the model shapes say enough
			}
			b.Run(fmt.Sprintf("%s/%s", kern.name, s.name), func(b *testing.B) {
				a, lda, bm, ldb, c := benchOperands(r, s.transA, s.transB, s.m, s.n, s.k, s.lda, s.ldb)
				workers := Workers()
				for b.Loop() {
					sgemmWith(kern, workers, s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n)
				}
				b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// benchOperands makes random operands of the stored shapes for op(A)
// m×k and op(B) k×n, with leading dimensions at least lda and ldb.
func benchOperands(r *rand.Rand, transA, transB bool, m, n, k, lda, ldb int) (a []float32, _ int, b []float32, _ int, c []float32) {
	ar, ac, br, bc := m, k, k, n
	if transA {
		ar, ac = ac, ar
	}
	if transB {
		br, bc = bc, br
	}
	lda, ldb = max(lda, ac), max(ldb, bc)
	return randMat(r, ar*lda), lda, randMat(r, br*ldb), ldb, make([]float32, m*n)
}

// BenchmarkKernel runs one micro-kernel on cache-resident packed panels:
// the ceiling the driver can approach on one core.
func BenchmarkKernel(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	const kc = kcBlock
	for _, kern := range usableKernels() {
		b.Run(kern.name, func(b *testing.B) {
			a, bm, c := randMat(r, kern.mr*kc), randMat(r, kc*kern.nr), make([]float32, kern.mr*kern.nr)
			for b.Loop() {
				kern.fn(kc, a, 0, 1, kern.mr, bm, 0, kern.nr, c, 0, kern.nr, 1, false)
			}
			b.ReportMetric(2*float64(kern.mr*kern.nr*kc)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
