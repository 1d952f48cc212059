package lm

import (
	"math"
	"testing"
)

func TestExpfTanhf(t *testing.T) {
	var maxExp, maxTanh float64
	for x := -87.0; x <= 88.7; x += 0.001 {
		want := math.Exp(x)
		got := float64(expf(float32(x)))
		// compare at float32 input precision
		want = math.Exp(float64(float32(x)))
		maxExp = max(maxExp, math.Abs(got-want)/want)
	}
	for x := -10.0; x <= 10; x += 0.0001 {
		xf := float64(float32(x))
		want := math.Tanh(xf)
		got := float64(tanhf(float32(x)))
		maxTanh = max(maxTanh, math.Abs(got-want)/max(math.Abs(want), 1e-30))
	}
	t.Logf("max relative error: expf %.2e, tanhf %.2e", maxExp, maxTanh)
	if maxExp > 5e-7 || maxTanh > 5e-7 {
		t.Errorf("expf rel err %.3e, tanhf %.3e; want ≤ 5e-7", maxExp, maxTanh)
	}
	tests := []struct {
		x    float32
		want float32
	}{{-100, 0}, {0, 1}, {89, float32(math.Inf(1))}}
	for _, tc := range tests {
		if got := expf(tc.x); got != tc.want {
			t.Errorf("expf(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}

// TestVectorKernels compares the AVX2 paths with the pure-Go reference.
func TestVectorKernels(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2+FMA on this CPU")
	}
	for _, n := range []int{8, 13, 64, 1027} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i%97)*0.37 - 20
		}
		vec, ref := append([]float32(nil), x...), append([]float32(nil), x...)
		sv := expShiftSum(vec, 3)
		saved := useAVX2
		useAVX2 = false
		sr := expShiftSum(ref, 3)
		gOut, gTh := make([]float32, n), make([]float32, n)
		geluSpan(gOut, gTh, x)
		useAVX2 = saved
		vOut, vTh := make([]float32, n), make([]float32, n)
		geluSpan(vOut, vTh, x)
		dRef, dVec := make([]float32, n), make([]float32, n)
		sRef, sVec := append([]float32(nil), x...), append([]float32(nil), x...)
		useAVX2 = false
		geluBackSpan(dRef, x, x, gTh)
		softmaxBackRow(sRef, gTh, 0.7, 0.5)
		useAVX2 = saved
		geluBackSpan(dVec, x, x, gTh)
		softmaxBackRow(sVec, gTh, 0.7, 0.5)
		var maxE, maxG float64
		useAVX2 = false
		mRef := maxf(x)
		scRef := append([]float32(nil), x...)
		scalef(scRef, 0.3)
		useAVX2 = saved
		scVec := append([]float32(nil), x...)
		scalef(scVec, 0.3)
		if got := maxf(x); got != mRef {
			t.Errorf("n=%d: maxf AVX2 %v, Go %v", n, got, mRef)
		}
		if i := sameBits(scVec, scRef); i >= 0 {
			t.Errorf("n=%d: scalef differs at %d", n, i)
		}
		for i := range x {
			rel := func(a, b float32) float64 { return math.Abs(float64(a-b)) / max(1, math.Abs(float64(b))) }
			maxG = max(maxG, rel(dVec[i], dRef[i]), rel(sVec[i], sRef[i]))
		}
		for i := range x {
			maxE = max(maxE, math.Abs(float64(vec[i]-ref[i]))/float64(ref[i]))
			maxG = max(maxG, math.Abs(float64(vOut[i]-gOut[i])), math.Abs(float64(vTh[i]-gTh[i])))
		}
		if maxE > 1e-6 || math.Abs(float64(sv-sr))/float64(sr) > 1e-5 || maxG > 1e-5 {
			t.Errorf("n=%d: exp rel diff %.2e, sum %v vs %v, gelu diff %.2e", n, maxE, sv, sr, maxG)
		}
	}
}

func TestAttendRowVectorMatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2+FMA on this CPU")
	}
	for _, tc := range []struct{ n, stride, HS int }{{37, 48, 16}, {37, 48, 40}, {9, 64, 64}, {3, 8, 8}} {
		n, stride, HS := tc.n, tc.stride, tc.HS
		k, v, q := make([]float32, n*stride), make([]float32, n*stride), make([]float32, HS)
		for i := range k {
			k[i], v[i] = float32(i%13)*0.1-0.6, float32(i%7)*0.2-0.5
		}
		for i := range q {
			q[i] = float32(i)*0.05 - 0.3
		}
		oV, oG, s := make([]float32, HS), make([]float32, HS), make([]float32, n)
		attendRow(oV, s, q, k[8:], v[8:], n-1, stride, 0.25)
		useAVX2 = false
		attendRow(oG, s, q, k[8:], v[8:], n-1, stride, 0.25)
		useAVX2 = true
		for i := range oV {
			if d := math.Abs(float64(oV[i] - oG[i])); d > 1e-6 {
				t.Errorf("%+v: o[%d]: AVX2 %v, Go %v", tc, i, oV[i], oG[i])
			}
		}
	}
}
