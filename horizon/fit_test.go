package horizon

import (
	"math"
	"testing"

	"github.com/calibrl/calibrl/metric"
)

func TestFitLineHandComputed(t *testing.T) {
	// x̄ = 2.5, ȳ = 4.75, Sxx = 5, Sxy = 9.5: slope 1.9, intercept 0.
	// Residuals 0.1, 0.2, -0.7, 0.4: SSR = 0.70, s² = 0.35, SE = √(0.35/5).
	// t(0.975, 2 df) = 4.302653, so the half-width is 1.138377.
	f, err := FitLine([]float64{1, 2, 3, 4}, []float64{2, 4, 5, 8}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	se := math.Sqrt(0.07)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"slope", f.Slope, 1.9},
		{"intercept", f.Intercept, 0},
		{"se", f.SlopeSE, se},
		{"lo", f.SlopeLo, 1.9 - 4.302653*se},
		{"hi", f.SlopeHi, 1.9 + 4.302653*se},
	} {
		if math.Abs(c.got-c.want) > 1e-5 {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if f.N != 4 || f.Level != 0.95 {
		t.Errorf("got N=%d level=%v, want 4 and 0.95", f.N, f.Level)
	}
}

func TestFitLogLogPowerLaw(t *testing.T) {
	for _, want := range []float64{1, 2, 0.5} {
		hs := []int{2, 4, 8, 16, 32}
		gap := make([]float64, len(hs))
		for i, h := range hs {
			gap[i] = 3 * math.Pow(float64(h), want)
		}
		f, err := FitLogLog(hs, gap)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(f.Slope-want) > 1e-12 || math.Abs(f.Intercept-math.Log(3)) > 1e-12 {
			t.Errorf("3·H^%v: got slope %v intercept %v, want %v and %v", want, f.Slope, f.Intercept, want, math.Log(3))
		}
		if f.SlopeHi-f.SlopeLo > 1e-9 {
			t.Errorf("3·H^%v: an exact power law got CI [%v, %v], want zero width", want, f.SlopeLo, f.SlopeHi)
		}
	}
}

func TestFitErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		x, y  []float64
		level float64
	}{
		{"two points", []float64{1, 2}, []float64{1, 2}, 0.95},
		{"length mismatch", []float64{1, 2, 3}, []float64{1, 2}, 0.95},
		{"equal x", []float64{1, 1, 1}, []float64{1, 2, 3}, 0.95},
		{"level 1", []float64{1, 2, 3}, []float64{1, 2, 4}, 1},
		{"nan", []float64{1, 2, math.NaN()}, []float64{1, 2, 4}, 0.95},
	} {
		if _, err := FitLine(c.x, c.y, c.level); err == nil {
			t.Errorf("%s: got no error, want one", c.name)
		}
	}
	if _, err := FitLogLog([]int{1, 2, 4}, []float64{1, 0, 3}); err == nil {
		t.Error("zero gap on log axes: got no error, want one")
	}
	if _, err := FitLogLog([]int{0, 2, 4}, []float64{1, 2, 3}); err == nil {
		t.Error("H = 0 on log axes: got no error, want one")
	}
}

func TestStudentTQuantile(t *testing.T) {
	// Reference values from standard t tables (R's qt).
	for _, c := range []struct{ p, nu, want float64 }{
		{0.975, 1, 12.7062047},
		{0.975, 2, 4.30265273},
		{0.975, 10, 2.22813885},
		{0.95, 5, 2.01504837},
		{0.975, 1000, 1.96233908},
		{0.025, 2, -4.30265273},
		{0.5, 3, 0},
	} {
		if got := metric.StudentTQuantile(c.p, c.nu); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("t quantile p=%v nu=%v: got %.8f, want %.8f", c.p, c.nu, got, c.want)
		}
	}
}

func TestPearson(t *testing.T) {
	for _, c := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"hand", []float64{1, 2, 3}, []float64{1, 3, 2}, 0.5},
		{"linear", []float64{1, 2, 3, 4}, []float64{3, 5, 7, 9}, 1},
		{"negative", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
	} {
		got, err := Pearson(c.x, c.y)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if _, err := Pearson([]float64{1, 2, 3}, []float64{2, 2, 2}); err == nil {
		t.Error("constant series: got no error, want one")
	}
}
