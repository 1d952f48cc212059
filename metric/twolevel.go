package metric

import (
	"errors"
	"math/rand/v2"
	"sort"
)

// TwoLevelBootstrap is the pooled paired difference between two arms over
// independent pipelines (each its own logs, base, simulator and RL arms),
// with a percentile interval that covers both the variation between
// pipelines and the variation of the problems within them.
//
// d[p][i] is pipeline p's paired difference on problem i (already averaged
// over that pipeline's RL seeds, as PairedBootstrap's d_i). The estimate is
// the mean over pipelines of each pipeline's mean over problems. Each of
// the resamples first draws P pipelines with replacement, then, inside
// each drawn pipeline, its problems with replacement (the nested bootstrap
// of hierarchical data: Davison & Hinkley 1997, §3.8, strategy 1), and its
// statistic is the mean of the drawn pipelines' means. With one pipeline it
// is PairedBootstrap's interval on the same draws' shape; with several, a
// pipeline that disagrees with the rest widens it, as it should: the
// verdict then holds only if it holds across training runs.
//
// Pipelines may hold different numbers of problems. The same shapes,
// resamples and seed draw the same indices whatever the values, so every
// claim of one verdict shares its resamples. conf outside (0,1) is 0.95.
func TwoLevelBootstrap(d [][]float64, resamples int, conf float64, seed uint64) (diff, lo, hi float64, err error) {
	if len(d) == 0 {
		return 0, 0, 0, errors.New("metric: two-level bootstrap: no pipelines")
	}
	for _, p := range d {
		if len(p) == 0 {
			return 0, 0, 0, errors.New("metric: two-level bootstrap: a pipeline with no problems")
		}
	}
	if resamples < 1 {
		return 0, 0, 0, errors.New("metric: two-level bootstrap: want at least one resample")
	}
	if !(conf > 0 && conf < 1) {
		conf = 0.95
	}
	for _, p := range d {
		diff += Mean(p)
	}
	diff /= float64(len(d))
	stats := twoLevelStats(d, resamples, seed)
	alpha := (1 - conf) / 2
	return diff, stats[rank(alpha, resamples)], stats[rank(1-alpha, resamples)], nil
}

// twoLevelStats are TwoLevelBootstrap's resampled statistics, sorted
// ascending: one draw serves every level.
func twoLevelStats(d [][]float64, resamples int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x2b007))
	stats := make([]float64, resamples)
	for r := range stats {
		var sum float64
		for range d {
			p := d[rng.IntN(len(d))]
			var s float64
			for range p {
				s += p[rng.IntN(len(p))]
			}
			sum += s / float64(len(p))
		}
		stats[r] = sum / float64(len(d))
	}
	sort.Float64s(stats)
	return stats
}

// Bonferroni is the per-claim confidence level that keeps the chance of
// any of m claims' intervals missing at most 1 − conf: conf' = 1 − (1 −
// conf)/m. It is conservative under the positive dependence of claims
// that share arms, and needs no assumption about it.
func Bonferroni(conf float64, m int) float64 {
	if m < 1 {
		m = 1
	}
	return 1 - (1-conf)/float64(m)
}

// Mean is the arithmetic mean of xs (NaN for none).
func Mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
