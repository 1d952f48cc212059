package lm

import "testing"

// BenchmarkAttendRow times one decode row's attention over n = 72 cached
// positions of head size 32 (model A's), fp32 cache against bf16.
func BenchmarkAttendRow(b *testing.B) {
	const n, HS, stride = 72, 32, 32
	k, v, q := make([]float32, n*stride), make([]float32, n*stride), make([]float32, HS)
	kb, vb := make([]uint16, 1<<15), make([]uint16, 1<<15) // 64 KiB: page aligned, as the cache
	for i := range k {
		k[i], v[i] = float32(i%13)*0.1-0.6, float32(i%7)*0.2-0.5
	}
	for j := 0; j < n; j++ {
		putBF16Row(kb[j*stride:], k[j*stride:j*stride+HS])
		putBF16Row(vb[j*stride:], v[j*stride:j*stride+HS])
	}
	o, s := make([]float32, HS), make([]float32, n)
	b.Run("fp32", func(b *testing.B) {
		for b.Loop() {
			attendRow(o, s, q, k, v, n, stride, 0.25)
		}
	})
	b.Run("bf16", func(b *testing.B) {
		for b.Loop() {
			attendRowBF16(o, s, q, kb, vb, n, stride, 0.25)
		}
	})
}

func BenchmarkAttendParts(b *testing.B) {
	const n, HS, stride = 72, 32, 32
	k, v, q := make([]float32, n*stride), make([]float32, n*stride), make([]float32, HS)
	kb, vb := make([]uint16, 1<<15), make([]uint16, 1<<15) // 64 KiB: page aligned, as the cache
	for i := range k {
		k[i], v[i] = float32(i%13)*0.1-0.6, float32(i%7)*0.2-0.5
	}
	for j := 0; j < n; j++ {
		putBF16Row(kb[j*stride:], k[j*stride:j*stride+HS])
		putBF16Row(vb[j*stride:], v[j*stride:j*stride+HS])
	}
	o, s := make([]float32, HS), make([]float32, n)
	for i := range s {
		s[i] = 1.0 / n
	}
	b.Run("scores32", func(b *testing.B) {
		for b.Loop() {
			scoresAVX2(s, q, k, stride, 0.25)
		}
	})
	b.Run("scores16", func(b *testing.B) {
		for b.Loop() {
			scoresBF16AVX512(s, q, kb, stride, 0.25)
		}
	})
	b.Run("mix32", func(b *testing.B) {
		for b.Loop() {
			mixAVX2(o, s, v, stride)
		}
	})
	b.Run("mix16", func(b *testing.B) {
		for b.Loop() {
			mixBF16AVX512(o, s, vb, stride)
		}
	})
	b.Run("softmax", func(b *testing.B) {
		for b.Loop() {
			softmaxCausalRow(s, n-1)
		}
	})
}
