package lm

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/gemm"
)

// The AVX-512 kernels over a bf16 cache against their Go twin: same
// widened keys and values, fp32 sums in another order, so they agree to
// a few fp32 roundings of the terms' magnitude (|o| ≤ max|v|; the scores
// enter through a softmax, whose output moves by the scores' error).
func TestAttendRowBF16VectorMatchesGo(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this CPU")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ n, stride, HS int }{{37, 48, 32}, {37, 64, 32}, {9, 64, 64}, {1, 32, 32}, {8, 32, 32}, {150, 128, 32}, {19, 96, 96}} {
		n, stride, HS := tc.n, tc.stride, tc.HS
		k, v, q := make([]uint16, n*stride+8), make([]uint16, n*stride+8), make([]float32, HS)
		for i := range k {
			k[i], v[i] = gemm.ToBF16(rng.Float32()*2-1), gemm.ToBF16(rng.Float32()*2-1)
		}
		for i := range q {
			q[i] = rng.Float32()*2 - 1
		}
		oV, oG, sV, sG := make([]float32, HS), make([]float32, HS), make([]float32, n), make([]float32, n)
		attendRowBF16(oV, sV, q, k[8:], v[8:], n, stride, 0.25)
		useAVX512 = false
		attendRowBF16(oG, sG, q, k[8:], v[8:], n, stride, 0.25)
		useAVX512 = true
		for i := range oV {
			if d := math.Abs(float64(oV[i] - oG[i])); d > 1e-6 {
				t.Errorf("%+v: o[%d]: AVX-512 %v, Go %v", tc, i, oV[i], oG[i])
			}
		}
		for j := range sV {
			if d := math.Abs(float64(sV[j] - sG[j])); d > 1e-6 {
				t.Errorf("%+v: p[%d]: AVX-512 %v, Go %v", tc, j, sV[j], sG[j])
			}
		}
	}
}

// The bf16 cache holds what attendRow reads, rounded: over the same
// keys and values rounded to bf16 in fp32, attendRowBF16's Go twin, on
// rows stored by putBF16Row (pair blocks at head size 32), gives
// attendRow's Go loops' result exactly (the widening is exact and the
// loops sum in the same order).
func TestAttendRowBF16IsAttendRowOfRounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, HS := range []int{16, 32, 64} {
		n, stride := 23, HS+16
		kb, vb := make([]uint16, n*stride), make([]uint16, n*stride)
		kf, vf := make([]float32, n*stride), make([]float32, n*stride)
		for i := range kf {
			kf[i] = gemm.FromBF16(gemm.ToBF16(rng.Float32()*2 - 1))
			vf[i] = gemm.FromBF16(gemm.ToBF16(rng.Float32()*2 - 1))
		}
		for j := 0; j < n; j++ {
			putBF16Row(kb[j*stride:], kf[j*stride:j*stride+HS])
			putBF16Row(vb[j*stride:], vf[j*stride:j*stride+HS])
		}
		q := make([]float32, HS)
		for i := range q {
			q[i] = rng.Float32()*2 - 1
		}
		o16, o32, s := make([]float32, HS), make([]float32, HS), make([]float32, n)
		avx2, avx512 := useAVX2, useAVX512
		useAVX2, useAVX512 = false, false
		attendRowBF16(o16, s, q, kb, vb, n, stride, 0.25)
		attendRow(o32, s, q, kf, vf, n, stride, 0.25)
		useAVX2, useAVX512 = avx2, avx512
		for i := range o16 {
			if o16[i] != o32[i] {
				t.Errorf("HS %d: o[%d]: bf16 cache %v, fp32 of the rounded cache %v", HS, i, o16[i], o32[i])
			}
		}
	}
}

// A cache follows the precision: filled in fp32 and continued in bf16 (or
// the reverse) it is read again from the start, so every continuation is
// bit for bit a fresh Sample at the precision it runs at. Head size 32
// runs the AVX-512 kernels where the CPU has them.
func TestSampleKVAcrossPrecisions(t *testing.T) {
	if !gemm.HasBF16() {
		t.Skip("no bf16 instructions on this CPU")
	}
	cfg := Config{VocabSize: 37, Context: 40, Dim: 64, Layers: 2, Heads: 2}
	rng := rand.New(rand.NewPCG(13, 14))
	m, err := New(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Params.Data {
		m.Params.Data[i] += float32(rng.NormFloat64() * 0.2)
	}
	sc := SampleConfig{Temperature: 1, TopP: 1, MaxNewTokens: 5}
	rngs := func(turn int) []*rand.Rand {
		return []*rand.Rand{rand.New(rand.NewPCG(uint64(turn), 1)), rand.New(rand.NewPCG(uint64(turn), 2))}
	}
	convs := [][]int{{1, 2, 3}, {4, 5}}
	kvs := []*KV{m.NewKV(), m.NewKV()}
	for turn, p := range []Precision{FP32, BF16, BF16, FP32, BF16} {
		withPrecision(t, p)
		got, err := m.SampleKV(convs, kvs, sc, rngs(turn))
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.Sample(convs, sc, rngs(turn))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("turn %d at %v: cached %+v, from scratch %+v", turn, p, got, want)
		}
		for i := range convs {
			convs[i] = append(append(convs[i], got[i].Tokens...), 7)
		}
	}
}

// putBF16Row stores value i of a row at bf16Index, rounded as gemm.ToBF16.
func TestPutBF16Row(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, HS := range []int{8, 16, 32, 64, 96} {
		src, dst := make([]float32, HS), make([]uint16, HS)
		for i := range src {
			src[i] = rng.Float32()*8 - 4
		}
		putBF16Row(dst, src)
		for i, x := range src {
			if got, want := dst[bf16Index(i, HS)], gemm.ToBF16(x); got != want {
				t.Fatalf("HS %d: value %d stored %#04x, want %#04x", HS, i, got, want)
			}
		}
	}
}
