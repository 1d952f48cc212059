package metric

import (
	"math"
	"math/rand/v2"
	"testing"
)

// One pipeline: the estimate is its mean, and the interval brackets it.
// Identical pipelines: the same estimate, and the between-pipeline draw
// adds nothing, so the interval is no wider than one pipeline's.
func TestTwoLevelBootstrapOnePipelineAndCopies(t *testing.T) {
	p := []float64{1, 0, 1, 1, 0, 1, 0, 1, 1, 1}
	d1, lo1, hi1, err := TwoLevelBootstrap([][]float64{p}, 4000, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(d1-0.7) > 1e-12 || !(lo1 <= 0.7 && 0.7 <= hi1) || lo1 == hi1 {
		t.Errorf("one pipeline: %v [%v, %v]", d1, lo1, hi1)
	}
	d3, lo3, hi3, err := TwoLevelBootstrap([][]float64{p, p, p}, 4000, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(d3-0.7) > 1e-12 || hi3-lo3 > hi1-lo1+1e-9 {
		t.Errorf("three copies: %v [%v, %v], one: [%v, %v]", d3, lo3, hi3, lo1, hi1)
	}
}

// Pipelines that disagree widen the interval past what the problems alone
// give: two pipelines at +0.3 and one at −0.3, each on many problems, have
// a problem-level interval far above 0, but the pooled one includes 0.
func TestTwoLevelBootstrapCoversPipelineVariation(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	mk := func(mu float64) []float64 {
		p := make([]float64, 2000)
		for i := range p {
			p[i] = mu + rng.NormFloat64()*0.2
		}
		return p
	}
	d := [][]float64{mk(0.3), mk(0.3), mk(-0.3)}
	diff, lo, hi, err := TwoLevelBootstrap(d, 2000, 0.95, 3)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(diff-0.1) > 0.02 {
		t.Errorf("pooled difference %v, want about 0.1", diff)
	}
	if !(lo < 0 && hi > 0.2) {
		t.Errorf("interval [%v, %v] should include 0 and reach the agreeing pipelines", lo, hi)
	}
	// The problem-level bootstrap of the same numbers, pipelines as
	// replicates, would call it: that is what pooling guards against.
	if _, plo, _, err := PairedBootstrap(d, zeros(d), 2000, 0.95, 3); err != nil || plo <= 0 {
		t.Errorf("problem-level interval's low end %v (err %v), want above 0", plo, err)
	}
}

func zeros(d [][]float64) [][]float64 {
	z := make([][]float64, len(d))
	for i := range d {
		z[i] = make([]float64, len(d[i]))
	}
	return z
}

// The same inputs give the same interval; bad inputs are errors.
func TestTwoLevelBootstrapDeterministicAndChecked(t *testing.T) {
	d := [][]float64{{1, 0, 1}, {0, 0, 1, 1}}
	a1, b1, c1, _ := TwoLevelBootstrap(d, 500, 0.9, 5)
	a2, b2, c2, _ := TwoLevelBootstrap(d, 500, 0.9, 5)
	if a1 != a2 || b1 != b2 || c1 != c2 {
		t.Errorf("not deterministic: %v %v %v vs %v %v %v", a1, b1, c1, a2, b2, c2)
	}
	for _, bad := range [][][]float64{nil, {{}}, {{1}, {}}} {
		if _, _, _, err := TwoLevelBootstrap(bad, 10, 0.95, 1); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, _, _, err := TwoLevelBootstrap(d, 0, 0.95, 1); err == nil {
		t.Error("0 resamples: no error")
	}
	if got := Bonferroni(0.95, 10); math.Abs(got-0.995) > 1e-12 {
		t.Errorf("Bonferroni(0.95, 10) = %v", got)
	}
}
