package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDotAxpyMatchNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 64, 100, 1000} {
		x, y := randMat(r, n), randMat(r, n)
		var want64 float64
		for i := range x {
			want64 += float64(x[i]) * float64(y[i])
		}
		tol := 1e-6 * float64(n+1)
		for name, dot := range map[string]func(x, y []float32) float32{"Dot": Dot, "dotGo": dotGo} {
			if got := dot(x, y); math.Abs(float64(got)-want64) > tol {
				t.Errorf("%s n=%d: got %g, want %g", name, n, got, want64)
			}
		}
		alpha := float32(-1.5)
		for name, axpy := range map[string]func(float32, []float32, []float32){"Axpy": Axpy, "axpyGo": axpyGo} {
			got := append([]float32(nil), y...)
			axpy(alpha, x, got)
			for i := range got {
				want := float64(y[i]) + float64(alpha)*float64(x[i])
				if d := math.Abs(float64(got[i]) - want); d > 1e-6 {
					t.Fatalf("%s n=%d: y[%d] got %g, want %g", name, n, i, got[i], want)
				}
			}
		}
	}
}

func TestDotAxpyLengthMismatchPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Dot":  func() { Dot(make([]float32, 3), make([]float32, 4)) },
		"Axpy": func() { Axpy(1, make([]float32, 3), make([]float32, 4)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with lengths 3 and 4: got no panic, want one", name)
				}
			}()
			f()
		}()
	}
}

func BenchmarkDot(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{32, 256, 4096} {
		x, y := randMat(r, n), randMat(r, n)
		for _, f := range []struct {
			name string
			fn   func(x, y []float32) float32
		}{{"asm", Dot}, {"go", dotGo}} {
			b.Run(f.name+"/"+itoa(n), func(b *testing.B) {
				var s float32
				for b.Loop() {
					s += f.fn(x, y)
				}
				b.ReportMetric(2*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func BenchmarkAxpy(b *testing.B) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{32, 256, 4096} {
		x, y := randMat(r, n), randMat(r, n)
		for _, f := range []struct {
			name string
			fn   func(float32, []float32, []float32)
		}{{"asm", Axpy}, {"go", axpyGo}} {
			b.Run(f.name+"/"+itoa(n), func(b *testing.B) {
				for b.Loop() {
					f.fn(1e-3, x, y)
				}
				b.ReportMetric(2*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}
