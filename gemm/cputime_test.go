//go:build linux

package gemm

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSgemmCore runs every kernel on one worker and reports GFLOP per
// CPU-second ("GFLOP/s-cpu"): the per-core rate, which time-sharing with
// other processes on a busy machine disturbs far less than wall time.
// Run it with -benchtime Nx; GOMAXPROCS=1 keeps the runtime's own threads
// from adding to the CPU time.
func BenchmarkSgemmCore(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, kern := range usableKernels() {
		for _, s := range benchShapes {
			if kern == goKernel2x4 && s.m*s.n*s.k > 1<<30 {
				continue
			}
			b.Run(fmt.Sprintf("%s/%s", kern.name, s.name), func(b *testing.B) {
				a, lda, bm, ldb, c := benchOperands(r, s.transA, s.transB, s.m, s.n, s.k, s.lda, s.ldb)
				t0 := cpuTime()
				for b.Loop() {
					sgemmWith(kern, 1, s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n)
				}
				cpu := cpuTime() - t0
				b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/s-cpu")
			})
		}
	}
}
