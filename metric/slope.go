package metric

import (
	"errors"
	"fmt"
	"math"
)

// GroupSlope is the regression of y on x over groups of points that share
// an unmeasured level (pipelines: each has its own base, simulators and
// problems' difficulty for its policies), the group as a random effect.
type GroupSlope struct {
	// Slopes is each group's least-squares slope of y on x.
	Slopes []float64
	// Slope is their mean, [Lo, Hi] its interval at the level asked:
	// Student's t on groups − 1 degrees of freedom times the slopes'
	// standard error. This is the two-stage random-slopes estimate: the
	// groups are the unit, so a slope that differs between groups widens
	// the interval, and one group's many points do not narrow it.
	Slope, Lo, Hi float64
	// Within is the fixed-effects slope (each group's points centred on
	// their own means, then one least-squares fit), [WithinLo, WithinHi]
	// its interval from the pooled residuals on N − groups − 1 degrees of
	// freedom: the reading that treats every point as independent once
	// the groups' levels are removed, for comparison.
	Within, WithinLo, WithinHi float64
	// N is the points, DF the random-slopes interval's degrees of freedom.
	N, DF int
}

// Slope is the least-squares slope of ys on xs.
func Slope(xs, ys []float64) (float64, error) {
	sxy, sxx, _, err := centredSums(xs, ys)
	if err != nil {
		return 0, err
	}
	return sxy / sxx, nil
}

// centredSums returns Σ(x−x̄)(y−ȳ), Σ(x−x̄)² and Σ(y−ȳ)², refusing
// what has no slope: unequal lengths, fewer than 2 points, one x.
func centredSums(xs, ys []float64) (sxy, sxx, syy float64, err error) {
	if len(xs) != len(ys) {
		return 0, 0, 0, fmt.Errorf("metric: slope of %d y on %d x", len(ys), len(xs))
	}
	if len(xs) < 2 {
		return 0, 0, 0, fmt.Errorf("metric: slope of %d points: need at least 2", len(xs))
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 {
		return 0, 0, 0, errors.New("metric: slope: every x is the same")
	}
	return sxy, sxx, syy, nil
}

// SlopeOverGroups fits y on x with xs[g], ys[g] the points of group g, at
// confidence conf (0.95 for a 95% interval). Each group needs at least two
// points of different x; the random-slopes interval needs two groups.
func SlopeOverGroups(xs, ys [][]float64, conf float64) (GroupSlope, error) {
	var r GroupSlope
	if len(xs) != len(ys) {
		return r, fmt.Errorf("metric: %d groups of x, %d of y", len(xs), len(ys))
	}
	if len(xs) < 2 {
		return r, fmt.Errorf("metric: %d groups: the random-slopes interval needs at least 2", len(xs))
	}
	if conf <= 0 || conf >= 1 {
		return r, fmt.Errorf("metric: confidence %v: want a level in (0, 1)", conf)
	}
	var sxy, sxx, syy float64
	for g := range xs {
		gxy, gxx, gyy, err := centredSums(xs[g], ys[g])
		if err != nil {
			return r, fmt.Errorf("group %d: %w", g, err)
		}
		r.Slopes = append(r.Slopes, gxy/gxx)
		sxy, sxx, syy = sxy+gxy, sxx+gxx, syy+gyy
		r.N += len(xs[g])
	}
	r.Slope, r.Lo, r.Hi = MeanCILevel(r.Slopes, conf)
	r.DF = len(r.Slopes) - 1

	// Fixed effects: the common slope through each group's mean; its
	// residual sum of squares is what the within-group sums leave,
	// Σ(y−ȳ)² − Sxy²/Sxx (at least 0: rounding of an exact fit aside).
	r.Within = sxy / sxx
	rss := max(0, syy-sxy*sxy/sxx)
	df := r.N - len(xs) - 1 // ≥ 1: at least 2 groups of at least 2 points
	se := math.Sqrt(rss / float64(df) / sxx)
	t := StudentTQuantile(1-(1-conf)/2, float64(df))
	r.WithinLo, r.WithinHi = r.Within-t*se, r.Within+t*se
	return r, nil
}
