package metric

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func bootstrap(t *testing.T, a, b [][]float64) (diff, lo, hi float64) {
	t.Helper()
	diff, lo, hi, err := PairedBootstrap(a, b, 2000, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	return diff, lo, hi
}

// Hand-computed cases: with few problems the bootstrap distribution has a
// handful of atoms, far enough from the 2.5% and 97.5% points that 2000
// resamples land on them whatever the generator draws.
func TestPairedBootstrapHandComputed(t *testing.T) {
	// Two problems, A solves the first, B neither: d = (1, 0). A resample
	// draws d's mean 0, ½ or 1 with probability ¼, ½, ¼, so the 2.5% point
	// is 0 and the 97.5% point 1.
	if d, lo, hi := bootstrap(t, [][]float64{{1, 0}}, [][]float64{{0, 0}}); d != 0.5 || lo != 0 || hi != 1 {
		t.Errorf("d = (1, 0): %v [%v, %v], want 0.5 [0, 1]", d, lo, hi)
	}
	// Four problems, d = (1, 0, 0, 0): a resample's mean is k/4 with k ~
	// Binomial(4, ¼), P(k ≤ 0, 1, 2, 3) = 81/256, 189/256, 243/256,
	// 255/256. The 2.5% point is 0 (81/256 ≥ 0.025) and the 97.5% point
	// 3/4 (243/256 = 0.949 < 0.975 ≤ 255/256).
	if d, lo, hi := bootstrap(t, [][]float64{{1, 0, 0, 0}}, [][]float64{{0, 0, 0, 0}}); d != 0.25 || lo != 0 || hi != 0.75 {
		t.Errorf("d = (1, 0, 0, 0): %v [%v, %v], want 0.25 [0, 0.75]", d, lo, hi)
	}
	// The same indices for every seed: seed 0's difference is (1, 0), seed
	// 1's (0, 1), so every problem's seed mean is ½ and so is every
	// resample's. Independent draws per seed would spread the interval.
	if d, lo, hi := bootstrap(t, [][]float64{{1, 0}, {0, 1}}, [][]float64{{0, 0}, {0, 0}}); d != 0.5 || lo != 0.5 || hi != 0.5 {
		t.Errorf("seeds cancelling per problem: %v [%v, %v], want 0.5 [0.5, 0.5]", d, lo, hi)
	}
	// The same indices for both arms: two arms that score the same on every
	// problem differ by exactly 0, however much the problems vary.
	same := [][]float64{{1, 0, 1, 1, 0}, {0, 0, 1, 1, 1}}
	if d, lo, hi := bootstrap(t, same, same); d != 0 || lo != 0 || hi != 0 {
		t.Errorf("identical arms: %v [%v, %v], want 0 [0, 0]", d, lo, hi)
	}
	// One arm's single evaluation paired with each seed of the other (the
	// base, which has no RL seed): B repeated per seed.
	if d, lo, hi := bootstrap(t, [][]float64{{1, 1}, {1, 0}}, [][]float64{{0, 1}, {0, 1}}); d != 0.25 || lo != -0.5 || hi != 1 {
		// d per problem: ((1−0)+(1−0))/2 = 1, ((1−1)+(0−1))/2 = −½.
		t.Errorf("paired with a repeated base: %v [%v, %v], want 0.25 [−0.5, 1]", d, lo, hi)
	}
}

// The exact bootstrap distribution of d = (1, 0, 0, 0), by enumerating
// all 4⁴ draws, has the quantiles the hand-computed case states.
func TestPairedBootstrapHandCaseByEnumeration(t *testing.T) {
	d := []float64{1, 0, 0, 0}
	var means []float64
	for x := range 256 {
		var sum float64
		for j := 0; j < 4; j++ {
			sum += d[(x>>(2*j))&3]
		}
		means = append(means, sum/4)
	}
	sort.Float64s(means)
	if lo, hi := means[rank(0.025, 256)], means[rank(0.975, 256)]; lo != 0 || hi != 0.75 {
		t.Fatalf("exact 2.5%% and 97.5%% points: %v, %v, want 0, 0.75", lo, hi)
	}
}

func TestPairedBootstrapIsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	a, b := make([][]float64, 3), make([][]float64, 3)
	for s := range a {
		for range 200 {
			a[s] = append(a[s], float64(rng.IntN(2)))
			b[s] = append(b[s], float64(rng.IntN(2)))
		}
	}
	d1, lo1, hi1, err := PairedBootstrap(a, b, 2000, 0.95, 42)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		d2, lo2, hi2, _ := PairedBootstrap(a, b, 2000, 0.95, 42)
		if d1 != d2 || lo1 != lo2 || hi1 != hi2 {
			t.Fatalf("same inputs and seed: %v [%v, %v], then %v [%v, %v]", d1, lo1, hi1, d2, lo2, hi2)
		}
	}
	if !(lo1 <= d1 && d1 <= hi1) {
		t.Fatalf("estimate %v outside its interval [%v, %v]", d1, lo1, hi1)
	}
}

// On many problems the percentile interval is close to the normal one,
// diff ± 1.96·sd(d)/√N.
func TestPairedBootstrapMatchesTheNormalIntervalOnManyProblems(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const n = 500
	a, b := [][]float64{make([]float64, n)}, [][]float64{make([]float64, n)}
	for i := range n {
		a[0][i] = float64(rng.IntN(2))
		if rng.Float64() < 0.3 {
			b[0][i] = 1
		}
	}
	diff, lo, hi, err := PairedBootstrap(a, b, 2000, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	var ss float64
	for i := range n {
		x := a[0][i] - b[0][i] - diff
		ss += x * x
	}
	half := Z95 * math.Sqrt(ss/(n-1)) / math.Sqrt(n)
	if math.Abs((hi-lo)/2-half) > 0.1*half || math.Abs((lo+hi)/2-diff) > 0.2*half {
		t.Fatalf("bootstrap %v [%v, %v], normal %v ± %v", diff, lo, hi, diff, half)
	}
}

func TestPairedBootstrapRejectsMismatchedInputs(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b [][]float64
		r    int
	}{
		{"no replicates", nil, nil, 10},
		{"replicate counts differ", [][]float64{{1}}, [][]float64{{1}, {0}}, 10},
		{"no problems", [][]float64{{}}, [][]float64{{}}, 10},
		{"problem counts differ", [][]float64{{1, 0}, {1}}, [][]float64{{1, 0}, {1, 0}}, 10},
		{"no resamples", [][]float64{{1}}, [][]float64{{0}}, 0},
	} {
		if _, _, _, err := PairedBootstrap(c.a, c.b, c.r, 0.95, 1); err == nil {
			t.Errorf("%s: want an error", c.name)
		}
	}
}
