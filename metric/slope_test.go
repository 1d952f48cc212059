package metric

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Hand-computed: y = 1 + 2x exactly has slope 2; x = 0,1,2 with y = 0,2,1
// has Σ(x−x̄)(y−ȳ) = 1 over Σ(x−x̄)² = 2.
func TestSlopeByHand(t *testing.T) {
	if b, err := Slope([]float64{0, 1, 2, 3}, []float64{1, 3, 5, 7}); err != nil || b != 2 {
		t.Errorf("exact line: slope %v, %v; want 2", b, err)
	}
	if b, err := Slope([]float64{0, 1, 2}, []float64{0, 2, 1}); err != nil || math.Abs(b-0.5) > 1e-15 {
		t.Errorf("slope %v, %v; want 0.5", b, err)
	}
	for _, c := range []struct {
		xs, ys []float64
		want   string
	}{
		{[]float64{1}, []float64{1}, "at least 2"},
		{[]float64{1, 2}, []float64{1}, "slope of 1 y on 2 x"},
		{[]float64{3, 3, 3}, []float64{1, 2, 3}, "every x is the same"},
	} {
		if _, err := Slope(c.xs, c.ys); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Slope(%v, %v): %v, want an error containing %q", c.xs, c.ys, err, c.want)
		}
	}
}

// Groups with their own levels and one common slope: both estimates find
// the slope, the group levels do not leak into it (a pooled fit ignoring
// the groups would), and with no noise both intervals close on it.
func TestSlopeOverGroupsRemovesGroupLevels(t *testing.T) {
	xs := [][]float64{{0.1, 0.2, 0.3}, {0.4, 0.5, 0.6}, {0.7, 0.8, 0.9}}
	levels := []float64{0.9, 0.5, 0.1} // later groups: larger x, lower level
	ys := make([][]float64, len(xs))
	for g := range xs {
		for _, x := range xs[g] {
			ys[g] = append(ys[g], levels[g]-0.5*x)
		}
	}
	r, err := SlopeOverGroups(xs, ys, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []float64{r.Slope, r.Lo, r.Hi, r.Within, r.WithinLo, r.WithinHi} {
		if math.Abs(got+0.5) > 1e-12 {
			t.Errorf("estimate or bound %v, want -0.5 (fit %+v)", got, r)
		}
	}
	if r.N != 9 || r.DF != 2 || len(r.Slopes) != 3 {
		t.Errorf("N %d DF %d slopes %d; want 9, 2, 3", r.N, r.DF, len(r.Slopes))
	}
	var all, ally []float64
	for g := range xs {
		all, ally = append(all, xs[g]...), append(ally, ys[g]...)
	}
	if pooled, _ := Slope(all, ally); pooled > -1 {
		t.Errorf("the check is weak: ignoring the groups gives %v, want far below -0.5", pooled)
	}
}

// The random-slopes interval is Student's t on groups − 1 over the groups'
// slopes (checked against the hand formula), and it covers a true slope of
// 0 at about its level when groups' slopes differ; the fixed-effects
// interval, which counts every point, covers it far less often then.
func TestSlopeOverGroupsIntervals(t *testing.T) {
	xs := [][]float64{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}}
	ys := [][]float64{{0, 1, 2}, {0, 2, 4}, {0, 3, 6}} // slopes 1, 2, 3
	r, err := SlopeOverGroups(xs, ys, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	half := StudentTQuantile(0.975, 2) * 1 / math.Sqrt(3) // sd of 1,2,3 is 1
	if math.Abs(r.Slope-2) > 1e-12 || math.Abs(r.Hi-r.Slope-half) > 1e-9 || math.Abs(r.Slope-r.Lo-half) > 1e-9 {
		t.Errorf("random slopes %v [%v, %v], want 2 ± %v", r.Slope, r.Lo, r.Hi, half)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	const runs = 2000
	var coverRandom, coverWithin int
	for range runs {
		xs := make([][]float64, 4)
		ys := make([][]float64, 4)
		for g := range xs {
			b := rng.NormFloat64() * 0.5 // each group's own slope, mean 0
			for i := range 8 {
				x := float64(i) / 7
				xs[g] = append(xs[g], x)
				ys[g] = append(ys[g], b*x+0.02*rng.NormFloat64())
			}
		}
		r, err := SlopeOverGroups(xs, ys, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if r.Lo <= 0 && 0 <= r.Hi {
			coverRandom++
		}
		if r.WithinLo <= 0 && 0 <= r.WithinHi {
			coverWithin++
		}
	}
	if c := float64(coverRandom) / runs; c < 0.93 || c > 0.97 {
		t.Errorf("random-slopes 95%% interval covers the true slope %.3f of the time, want about 0.95", c)
	}
	if c := float64(coverWithin) / runs; c > 0.6 {
		t.Errorf("fixed-effects interval covers %.3f of the time: the check of the random slopes' purpose is weak", c)
	}
}

func TestSlopeOverGroupsErrors(t *testing.T) {
	one := [][]float64{{0, 1}}
	for _, c := range []struct {
		xs, ys [][]float64
		conf   float64
		want   string
	}{
		{one, one, 0.95, "at least 2"},
		{[][]float64{{0, 1}, {0, 1}}, one, 0.95, "2 groups of x, 1 of y"},
		{[][]float64{{0, 1}, {2, 2}}, [][]float64{{0, 1}, {0, 1}}, 0.95, "group 1: metric: slope: every x is the same"},
		{[][]float64{{0, 1}, {0, 1}}, [][]float64{{0, 1}, {0, 1}}, 1, "confidence"},
	} {
		if _, err := SlopeOverGroups(c.xs, c.ys, c.conf); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SlopeOverGroups(%v, %v, %v): %v, want an error containing %q", c.xs, c.ys, c.conf, err, c.want)
		}
	}
	// Two groups of two points: one residual degree of freedom, the
	// fixed-effects interval Student's t on 1 (four residuals of ±0.5 about
	// the common slope 2: RSS 1 over Σ(x−x̄)² = 1, a standard error of 1).
	r, err := SlopeOverGroups([][]float64{{0, 1}, {0, 1}}, [][]float64{{0, 1}, {0, 3}}, 0.95)
	half := StudentTQuantile(0.975, 1)
	if err != nil || r.Within != 2 || math.Abs(r.WithinHi-2-half) > 1e-9 || math.Abs(2-r.WithinLo-half) > 1e-9 {
		t.Errorf("two points per group: %+v, %v; want Within 2 ± %v", r, err, half)
	}
}
