package metric

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// PipelineEstimate is a paired difference pooled over pipelines with the
// pipeline as the unit of replication (PipelineInterval).
type PipelineEstimate struct {
	// Diff is the mean over pipelines of each one's mean difference.
	Diff float64 `json:"difference"`
	// Lo and Hi bound the interval at the level asked for.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// SE is the standard error of Diff the interval uses, and DF the
	// degrees of freedom of its t quantile (pipelines − 1).
	SE float64 `json:"se"`
	DF int     `json:"df"`
	// Tau is the estimated spread of the true difference between
	// pipelines (the standard deviation of the pipelines' own effects,
	// moment estimate, 0 when the pipelines agree within their problems'
	// noise).
	Tau float64 `json:"tau"`
	// Within is the variance of one pipeline's mean difference over its
	// problems (the mean over pipelines), and Shared the covariance of two
	// pipelines' mean differences that their playing the same problems
	// induces (0 when they play different ones).
	Within float64 `json:"within"`
	Shared float64 `json:"shared"`
}

// PipelineInterval pools d, the per-problem paired differences of k ≥ 2
// independent pipelines (d[p][i]: pipeline p's difference on problem i,
// averaged over its RL seeds), into a random-effects interval whose unit
// is the pipeline: with three pipelines it is as wide as three training
// runs warrant, not as narrow as 1500 problems would make it.
//
// The model is the crossed design of pipelines × problems: d[p][i] = μ +
// u_p + b_i + e_pi, with u_p a pipeline's own effect (spread τ), b_i a
// problem's, shared by every pipeline that plays it, and e_pi the rest.
// The pipelines' means m_p then have variance τ² + w each, w the variance
// of one pipeline's mean over its problems, and covariance c = Var(b̄)
// between any two, so the pooled mean has
//
//	Var(m̄) = (τ² + w − c)/k + c,
//
// and the sample variance s² of the k means estimates τ² + w − c: the
// problems all pipelines share move every mean together and never show in
// s². PipelineInterval estimates c from the pipelines' per-problem
// covariances and uses
//
//	SE² = s²/k + c,
//
// and the interval Diff ± t·SE with t Student's quantile on k − 1 degrees
// of freedom (the Hartung–Knapp interval, Hartung & Knapp 2001, which with
// the pipelines' equal weights is the t interval of their means, plus the
// shared term). With k = 3 and a 95% level t = 4.30: three pipelines that
// disagree by a few points give a wide interval, as they should. Because
// c is estimated from every problem and s² from k − 1 degrees of freedom
// only, t on k − 1 is conservative when c is a large part of SE²; the
// Welch–Satterthwaite degrees of freedom would narrow it, but under the
// null they miss 0 too often (TestFalseHoldTable prints both), so the
// verdict keeps k − 1. Tau is the moment estimate of τ
// (DerSimonian & Laird 1986): s² − w + c, w the variance of one pipeline's
// mean over its problems, at least 0.
//
// The two-level bootstrap (TwoLevelBootstrap) resamples three pipelines
// as if they were a population and ignores the shared problems; under a
// true difference of 0 and a between-pipeline spread of 0.04 its 95%
// interval excludes 0 far more often than 5% (TestFalseHold measures
// both).
//
// The pipelines share problems when they hold the same number of them
// (problem i of one is problem i of every other: the caller's contract);
// otherwise Shared is 0. conf outside (0,1) is 0.95. It returns an error
// for fewer than 2 pipelines or a pipeline with fewer than 2 problems.
func PipelineInterval(d [][]float64, conf float64) (PipelineEstimate, error) {
	k := len(d)
	if k < 2 {
		return PipelineEstimate{}, fmt.Errorf("metric: pipeline interval: %d pipelines, want at least 2", k)
	}
	means := make([]float64, k)
	var w float64
	shared := true
	for p, row := range d {
		n := len(row)
		if n < 2 {
			return PipelineEstimate{}, errors.New("metric: pipeline interval: a pipeline with fewer than 2 problems")
		}
		shared = shared && n == len(d[0])
		means[p] = Mean(row)
		w += sampleVar(row, means[p]) / float64(n) / float64(k)
	}
	var c float64
	if shared {
		n := len(d[0])
		pairs := 0
		for p := range d {
			for q := p + 1; q < k; q++ {
				var s float64
				for i := range n {
					s += (d[p][i] - means[p]) * (d[q][i] - means[q])
				}
				c += s / float64(n-1) / float64(n)
				pairs++
			}
		}
		c = max(c/float64(pairs), 0)
	}
	return poolMeans(means, w, c, tQuantile(conf, k)), nil
}

// PipelineIntervalOfMeans is PipelineInterval from the pipelines' mean
// differences alone, for pipelines whose per-problem differences are not
// at hand (a published table): within is the variance of one pipeline's
// mean over its problems (its standard error squared) and shared the
// covariance the shared problems induce between two pipelines' means,
// which lies in [0, within]: 0 for pipelines on different problems,
// within when every pipeline's per-problem differences are the same
// (correlation 1), the widest the interval can be. It returns an error
// for fewer than 2 pipelines or a shared term outside [0, within].
func PipelineIntervalOfMeans(means []float64, within, shared, conf float64) (PipelineEstimate, error) {
	if len(means) < 2 {
		return PipelineEstimate{}, fmt.Errorf("metric: pipeline interval: %d pipelines, want at least 2", len(means))
	}
	if !(within >= 0) || !(shared >= 0 && shared <= within*(1+1e-9)) {
		return PipelineEstimate{}, fmt.Errorf("metric: pipeline interval: want 0 ≤ shared ≤ within, got %v and %v", shared, within)
	}
	return poolMeans(means, within, shared, tQuantile(conf, len(means))), nil
}

// tQuantile is the interval's t for k pipelines at level conf (0.95
// outside (0,1)).
func tQuantile(conf float64, k int) float64 {
	if !(conf > 0 && conf < 1) {
		conf = 0.95
	}
	return StudentTQuantile(0.5+conf/2, float64(k-1))
}

// poolMeans is PipelineInterval's interval from the pipelines' means, w
// (the variance of one pipeline's mean over its problems), c (the
// covariance the shared problems induce between two means) and t
// (tQuantile).
func poolMeans(means []float64, w, c, t float64) PipelineEstimate {
	k := float64(len(means))
	m := Mean(means)
	s2 := sampleVar(means, m)
	se := math.Sqrt(s2/k + c)
	half := t * se
	return PipelineEstimate{Diff: m, Lo: m - half, Hi: m + half, SE: se, DF: len(means) - 1,
		Tau: math.Sqrt(max(s2-w+c, 0)), Within: w, Shared: c}
}

// sampleVar is the sample variance of xs about their mean m (n − 1 in the
// denominator).
func sampleVar(xs []float64, m float64) float64 {
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs)-1)
}

// PipelinePower is the chance that PipelineInterval at level conf holds
// (its low end above 0) for a true difference effect over k pipelines,
// when the pipelines' own effects spread by tau, one pipeline's mean over
// its problems has standard error se, and the problems the pipelines
// share make two pipelines' means covary by shared (≤ se²; 0 for none).
// It draws the k means of the model PipelineInterval states (normal
// pipeline effects, normal problem means) sims times from a generator
// seeded with seed, and applies the interval's own rule to each draw, w
// and c known: the power of the verdict as it is computed, not of an
// idealised test.
func PipelinePower(effect, tau, se, shared float64, k int, conf float64, sims int, seed uint64) (float64, error) {
	if k < 2 {
		return 0, fmt.Errorf("metric: pipeline power: %d pipelines, want at least 2", k)
	}
	w := se * se
	if !(tau >= 0) || !(se > 0) || !(shared >= 0 && shared <= w*(1+1e-9)) { // se² rounds
		return 0, fmt.Errorf("metric: pipeline power: want tau ≥ 0, se > 0 and 0 ≤ shared ≤ se² (got %v, %v, %v)", tau, se, shared)
	}
	if sims < 1 {
		return 0, errors.New("metric: pipeline power: want at least one simulation")
	}
	rng := rand.New(rand.NewPCG(seed, 0x90e7))
	means := make([]float64, k)
	holds := 0
	t := tQuantile(conf, k)
	own := math.Sqrt(max(tau*tau+w-shared, 0))
	for range sims {
		g := rng.NormFloat64() * math.Sqrt(min(shared, w))
		for p := range means {
			means[p] = effect + g + own*rng.NormFloat64()
		}
		if poolMeans(means, w, shared, t).Lo > 0 {
			holds++
		}
	}
	return float64(holds) / float64(sims), nil
}

// PipelinesFor is the fewest pipelines, from 2 to maxK, whose pooled
// interval at level conf holds with at least the chance power for a true
// difference effect (PipelinePower's model and arguments); 0 when even
// maxK falls short.
func PipelinesFor(effect, tau, se, shared, conf, power float64, maxK, sims int, seed uint64) (int, error) {
	for k := 2; k <= maxK; k++ {
		p, err := PipelinePower(effect, tau, se, shared, k, conf, sims, seed)
		if err != nil {
			return 0, err
		}
		if p >= power {
			return k, nil
		}
	}
	return 0, nil
}
