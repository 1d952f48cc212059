package metric

import (
	"math"
	"testing"
)

func TestWilsonCI(t *testing.T) {
	for _, tc := range []struct {
		s, n   int
		z      float64
		lo, hi float64
	}{
		// p = 1/2, n = 10: centre 1/2, half-width 1.96·√(0.025+0.0096)/1.384.
		{5, 10, Z95, 0.236593, 0.763407},
		{0, 10, Z95, 0, 0.277533},
		{10, 10, Z95, 0.722467, 1},
		{1, 1, Z95, 0.206549, 1}, // lower bound 1/(1+z²)
		{50, 100, Z95, 0.403832, 0.596168},
		{0, 0, Z95, 0, 1},              // no trials: uninformative
		{12, 10, Z95, 0.722467, 1},     // clamped to 10/10
		{-3, 10, Z95, 0, 0.277533},     // clamped to 0/10
		{5, 10, 0, 0.236593, 0.763407}, // z ≤ 0 means Z95
	} {
		lo, hi := WilsonCI(tc.s, tc.n, tc.z)
		if math.Abs(lo-tc.lo) > 1e-6 || math.Abs(hi-tc.hi) > 1e-6 {
			t.Errorf("WilsonCI(%d, %d, %v): got [%.6f, %.6f], want [%.6f, %.6f]", tc.s, tc.n, tc.z, lo, hi, tc.lo, tc.hi)
		}
	}
	// A wider z gives a wider interval.
	lo1, hi1 := WilsonCI(30, 100, 1.0)
	lo2, hi2 := WilsonCI(30, 100, 2.576)
	if !(lo2 < lo1 && hi2 > hi1) {
		t.Errorf("z=2.576 [%v,%v] should contain z=1 [%v,%v]", lo2, hi2, lo1, hi1)
	}
}

func TestStudentTQuantile(t *testing.T) {
	// Two-sided 95% critical values from standard t tables.
	for _, tc := range []struct{ df, want float64 }{
		{1, 12.706205}, {2, 4.302653}, {4, 2.776445}, {10, 2.228139},
		{30, 2.042272}, {100, 1.983972}, {1e7, Z95},
	} {
		if got := StudentTQuantile(0.975, tc.df); math.Abs(got-tc.want) > 1e-5 {
			t.Errorf("t(0.975, %v): got %.6f, want %.6f", tc.df, got, tc.want)
		}
	}
	if got := StudentTQuantile(0.025, 4); math.Abs(got+2.776445) > 1e-5 {
		t.Errorf("lower tail: got %v, want -2.776445", got)
	}
	if got := StudentTQuantile(0.995, 3); math.Abs(got-5.840909) > 1e-5 {
		t.Errorf("t(0.995, 3): got %v, want 5.840909", got)
	}
	for _, bad := range [][2]float64{{0, 5}, {1, 5}, {0.5, 0}, {math.NaN(), 5}, {0.9, -1}} {
		if got := StudentTQuantile(bad[0], bad[1]); !math.IsNaN(got) {
			t.Errorf("StudentTQuantile(%v, %v): got %v, want NaN", bad[0], bad[1], got)
		}
	}
}

func TestMeanCI(t *testing.T) {
	// 1..5: mean 3, s = √2.5, t(0.975, 4) = 2.776445: half-width 1.963243.
	m, lo, hi := MeanCI([]float64{1, 2, 3, 4, 5})
	if m != 3 || math.Abs(lo-1.036757) > 1e-5 || math.Abs(hi-4.963243) > 1e-5 {
		t.Errorf("MeanCI(1..5): got %v [%v, %v], want 3 [1.036757, 4.963243]", m, lo, hi)
	}
	for _, tc := range []struct {
		name         string
		xs           []float64
		mean, lo, hi float64
	}{
		{"empty", nil, 0, 0, 0},
		{"one", []float64{0.7}, 0.7, 0.7, 0.7},
		{"constant", []float64{2, 2, 2}, 2, 2, 2},
	} {
		m, lo, hi := MeanCI(tc.xs)
		if m != tc.mean || lo != tc.lo || hi != tc.hi {
			t.Errorf("%s: got %v [%v, %v], want %v [%v, %v]", tc.name, m, lo, hi, tc.mean, tc.lo, tc.hi)
		}
	}
	// 99% is wider than 95%; a bad level falls back to 95%.
	xs := []float64{0.1, 0.4, 0.35, 0.8, 0.5, 0.45}
	_, lo95, hi95 := MeanCI(xs)
	_, lo99, hi99 := MeanCILevel(xs, 0.99)
	_, loBad, hiBad := MeanCILevel(xs, 7)
	if !(lo99 < lo95 && hi99 > hi95) || loBad != lo95 || hiBad != hi95 {
		t.Errorf("levels: 95%% [%v,%v], 99%% [%v,%v], bad [%v,%v]", lo95, hi95, lo99, hi99, loBad, hiBad)
	}
}
