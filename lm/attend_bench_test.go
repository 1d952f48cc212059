package lm

import "testing"

// attendFixture is one decode row's attention inputs: n = 72 cached
// positions of head size 32 (model A's), in an fp32 cache and a bf16 one.
type attendFixture struct {
	n, stride     int
	k, v, q, o, s []float32
	kb, vb        []uint16
}

func newAttendFixture() attendFixture {
	const n, HS, stride = 72, 32, 32
	f := attendFixture{n: n, stride: stride,
		k: make([]float32, n*stride), v: make([]float32, n*stride), q: make([]float32, HS),
		o: make([]float32, HS), s: make([]float32, n),
		kb: make([]uint16, 1<<15), vb: make([]uint16, 1<<15), // 64 KiB: page aligned, as the cache
	}
	for i := range f.k {
		f.k[i], f.v[i] = float32(i%13)*0.1-0.6, float32(i%7)*0.2-0.5
	}
	for j := 0; j < n; j++ {
		putBF16Row(f.kb[j*stride:], f.k[j*stride:j*stride+HS])
		putBF16Row(f.vb[j*stride:], f.v[j*stride:j*stride+HS])
	}
	return f
}

// BenchmarkAttendRow times one decode row's attention, fp32 cache against
// bf16.
func BenchmarkAttendRow(b *testing.B) {
	f := newAttendFixture()
	b.Run("fp32", func(b *testing.B) {
		for b.Loop() {
			attendRow(f.o, f.s, f.q, f.k, f.v, f.n, f.stride, 0.25)
		}
	})
	b.Run("bf16", func(b *testing.B) {
		for b.Loop() {
			attendRowBF16(f.o, f.s, f.q, f.kb, f.vb, f.n, f.stride, 0.25)
		}
	})
}

// BenchmarkAttendParts times the row's kernels one by one (the vector
// ones only where the CPU has them).
func BenchmarkAttendParts(b *testing.B) {
	if !useAVX512 {
		b.Skip("no AVX-512: the vector kernels are not used here")
	}
	f := newAttendFixture()
	for i := range f.s {
		f.s[i] = 1.0 / float32(f.n)
	}
	b.Run("scores32", func(b *testing.B) {
		for b.Loop() {
			scoresAVX2(f.s, f.q, f.k, f.stride, 0.25)
		}
	})
	b.Run("scores16", func(b *testing.B) {
		for b.Loop() {
			scoresBF16AVX512(f.s, f.q, f.kb, f.stride, 0.25)
		}
	})
	b.Run("mix32", func(b *testing.B) {
		for b.Loop() {
			mixAVX2(f.o, f.s, f.v, f.stride)
		}
	})
	b.Run("mix16", func(b *testing.B) {
		for b.Loop() {
			mixBF16AVX512(f.o, f.s, f.vb, f.stride)
		}
	})
	b.Run("softmax", func(b *testing.B) {
		for b.Loop() {
			softmaxCausalRow(f.s, f.n-1)
		}
	})
}

// BenchmarkAttendLane times attendRow (fp32 cache) per key read, for one
// decoding step of a lane as quick's rollouts have it: 32 sequences × 4
// layers × 4 heads of head size 32, 150 cached positions each, in slots
// of a 512-token context. "hot" reads one slot over and over (it stays in
// the core's caches); "lane" reads the lane's 128 slots in turn (about
// 20 MB, past L2), as decoding does; the gap is what reading the cache
// from memory costs.
func BenchmarkAttendLane(b *testing.B) {
	const seqs, heads, layers, ctx, HS, n = 32, 4, 4, 512, 32, 150
	for _, tc := range []struct {
		name  string
		slots int
	}{{"hot", 1}, {"lane", seqs * layers}} {
		b.Run(tc.name, func(b *testing.B) {
			k, v := make([][]float32, tc.slots), make([][]float32, tc.slots)
			for i := range k {
				k[i], v[i] = make([]float32, heads*ctx*HS), make([]float32, heads*ctx*HS)
				for j := range k[i] {
					k[i][j], v[i][j] = float32(j%13)*0.01, float32(j%7)*0.02
				}
			}
			q, o, s := make([]float32, HS), make([]float32, HS), make([]float32, ctx)
			for i := range q {
				q[i] = 0.1
			}
			for b.Loop() {
				for sl := 0; sl < seqs*layers; sl++ {
					x := sl % tc.slots
					for h := 0; h < heads; h++ {
						attendRow(o, s, q, k[x][h*ctx*HS:], v[x][h*ctx*HS:], n, HS, 0.17)
					}
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*seqs*layers*heads*n), "ns/key")
		})
	}
}
