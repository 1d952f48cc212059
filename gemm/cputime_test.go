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

// BenchmarkBgemmCore is BenchmarkSgemmCore for the bf16 engine this CPU
// runs, at the engine's shapes (quick policy: d 128, vocab 768; m the
// tokens of a minibatch, or the sampler's 64 sequences): the forward
// products onto a bias and residual (BgemmBias), onto C and from zero, the
// input gradient, and the weight gradient dW += xᵀ·dy (BgemmTA, beta 1).
// The bf16 rounding and packing of A are inside the timed call, as in
// the engine; B is packed once.
func BenchmarkBgemmCore(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 9))
	for _, s := range []struct {
		name    string
		transA  bool
		m, n, k int
		beta    float32
		bias    bool // BgemmBias onto bias and resid
	}{
		{"qkv-2048x384x128-bias", false, 2048, 384, 128, 1, true},
		{"fc-2048x512x128-b1", false, 2048, 512, 128, 1, false},
		{"lmhead-2048x768x128-b0", false, 2048, 768, 128, 0, false},
		{"fcproj-2048x128x512-b1", false, 2048, 128, 512, 1, false},
		{"sample-64x384x128-bias", false, 64, 384, 128, 1, true},
		{"dW-128x512x2048-TA-b1", true, 128, 512, 2048, 1, false},
		{"dW-512x128x2048-TA-b1", true, 512, 128, 2048, 1, false},
	} {
		b.Run(s.name, func(b *testing.B) {
			a, w, c := randMat(r, s.m*s.k), randMat(r, s.k*s.n), randMat(r, s.m*s.n)
			var bias, resid []float32
			if s.bias {
				bias, resid = randMat(r, s.n), randMat(r, s.m*s.n)
			}
			var pb PackedB
			pb.Pack(false, s.k, s.n, w, s.n)
			kern := activeBF16
			if hasAMX {
				kern = nil
			}
			lda := s.k
			if s.transA {
				lda = s.m
			}
			t0 := cpuTime()
			for b.Loop() {
				bgemmRun(kern, 1, s.transA, s.m, 1, a, lda, &pb, s.beta, c, s.n, bias, resid)
			}
			cpu := cpuTime() - t0
			b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/s-cpu")
		})
	}
}
