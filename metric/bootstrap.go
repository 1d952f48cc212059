package metric

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
)

// PairedBootstrap is the paired difference between two arms A and B
// evaluated on the same problems in one or more replicates (RL seeds), with
// its percentile bootstrap interval at level conf (0.95 for 95%).
//
// a[s][i] and b[s][i] are the scores of A and B on problem i in replicate
// s; every replicate holds the same problems in the same order, so the
// difference of one problem is d_i = (1/S) Σ_s (a[s][i] − b[s][i]) and the
// estimate is diff = (1/N) Σ_i d_i. Each of the resamples draws N problem
// indices uniformly with replacement from a PCG generator seeded with seed,
// and uses the same indices for both arms and for every replicate (a
// problem that is hard for one seed is hard for the others); its statistic
// is the mean of d over the drawn indices. With the statistics sorted
// ascending, t_(1) ≤ … ≤ t_(R), the interval is [t_(⌈αR⌉), t_(⌈(1−α)R⌉)],
// α = (1−conf)/2: always values the bootstrap distribution takes, no
// interpolation. The interval is conditional on the replicates: it covers
// the variation of the problems, not of the seeds.
//
// The same (N, resamples, seed) draw the same indices whatever the scores,
// so several comparisons over one set of problems share their resamples.
// It returns an error when there are no replicates or no problems, when a
// replicate's length differs, or when resamples < 1; a conf outside (0,1)
// is taken as 0.95.
func PairedBootstrap(a, b [][]float64, resamples int, conf float64, seed uint64) (diff, lo, hi float64, err error) {
	if len(a) == 0 || len(a) != len(b) {
		return 0, 0, 0, errors.New("metric: paired bootstrap: want the same positive number of replicates for both arms")
	}
	n := len(a[0])
	if n == 0 {
		return 0, 0, 0, errors.New("metric: paired bootstrap: no problems")
	}
	for s := range a {
		if len(a[s]) != n || len(b[s]) != n {
			return 0, 0, 0, errors.New("metric: paired bootstrap: every replicate of both arms must score the same problems")
		}
	}
	if resamples < 1 {
		return 0, 0, 0, errors.New("metric: paired bootstrap: want at least one resample")
	}
	if !(conf > 0 && conf < 1) {
		conf = 0.95
	}
	d := make([]float64, n)
	for i := range d {
		for s := range a {
			d[i] += a[s][i] - b[s][i]
		}
		d[i] /= float64(len(a))
		diff += d[i]
	}
	diff /= float64(n)
	rng := rand.New(rand.NewPCG(seed, 0xb007))
	stats := make([]float64, resamples)
	for r := range stats {
		var sum float64
		for range n {
			sum += d[rng.IntN(n)]
		}
		stats[r] = sum / float64(n)
	}
	sort.Float64s(stats)
	alpha := (1 - conf) / 2
	return diff, stats[rank(alpha, resamples)], stats[rank(1-alpha, resamples)], nil
}

// rank is the 0-based index of the ⌈p·r⌉-th smallest of r values, at
// least the first.
func rank(p float64, r int) int {
	// The tolerance keeps 0.025·2000, which is 50.00000000000004 in
	// floating point, at 50.
	k := int(math.Ceil(p*float64(r) - 1e-9))
	return min(max(k, 1), r) - 1
}
