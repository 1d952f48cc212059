package gemm

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTune measures GFLOP per CPU-second, which time-sharing with other
// processes disturbs less than wall time.
func BenchmarkTune(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			ar, ac, br, bc := s.m, s.k, s.k, s.n
			if s.transA {
				ar, ac = ac, ar
			}
			if s.transB {
				br, bc = bc, br
			}
			lda, ldb := max(s.lda, ac), max(s.ldb, bc)
			a, bm, c := randMat(r, ar*lda), randMat(r, br*ldb), make([]float32, s.m*s.n)
			t0 := cpuTime()
			for b.Loop() {
				sgemmWith(activeKernel, Workers(), s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n)
			}
			cpu := cpuTime() - t0
			b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/cpu.Seconds()/1e9*float64(Workers()), "cpuGF")
		})
	}
}
