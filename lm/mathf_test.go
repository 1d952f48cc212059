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
