package metric

import (
	"fmt"
	"math"
	"testing"
)

// rowOf is a pipeline's per-problem differences with mean m: n values,
// half m+1 and half m−1 (n even).
func rowOf(m float64, n int) []float64 {
	r := make([]float64, n)
	for i := range r {
		r[i] = m + 1 - 2*float64(i%2)
	}
	return r
}

// Pipelines on different problems (different counts) share nothing: the
// interval is the t interval of their means, the calibrated >
// naive sampled: +0.077 [−0.064, +0.218] from 0.012, 0.100, 0.118.
func TestPipelineIntervalUnsharedIsTOfMeans(t *testing.T) {
	d := [][]float64{rowOf(0.012, 500), rowOf(0.100, 498), rowOf(0.118, 496)}
	e, err := PipelineInterval(d, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	m, lo, hi := MeanCILevel([]float64{0.012, 0.100, 0.118}, 0.95)
	if math.Abs(e.Diff-m) > 1e-12 || math.Abs(e.Lo-lo) > 1e-12 || math.Abs(e.Hi-hi) > 1e-12 || e.Shared != 0 || e.DF != 2 {
		t.Errorf("got %+v, want the t interval %v [%v, %v]", e, m, lo, hi)
	}
	if got := [3]string{f3(e.Diff), f3(e.Lo), f3(e.Hi)}; got != [3]string{"+0.077", "-0.064", "+0.218"} {
		t.Errorf("got %v, want the issue's +0.077 [-0.064, +0.218]", got)
	}
}

func f3(x float64) string { return fmt.Sprintf("%+.3f", x) }

// Identical pipelines on the same problems: s² is 0 and everything is the
// shared problems' variance, so SE is one pipeline's standard error over
// its problems, var(d)/n, and Tau is 0; the interval uses t on k − 1.
func TestPipelineIntervalIdenticalPipelines(t *testing.T) {
	row := []float64{1, 0, 0, 1, -1, 1, 0, 1}
	e, err := PipelineInterval([][]float64{row, row, row}, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	m := Mean(row)
	se := math.Sqrt(sampleVar(row, m) / float64(len(row)))
	half := StudentTQuantile(0.95, 2) * se
	if math.Abs(e.Diff-m) > 1e-12 || math.Abs(e.SE-se) > 1e-12 || math.Abs(e.Lo-(m-half)) > 1e-12 || math.Abs(e.Hi-(m+half)) > 1e-12 || e.Tau != 0 {
		t.Errorf("got %+v, want %v ± %v (SE %v, Tau 0)", e, m, half, se)
	}
}

// Pipelines that disagree: Tau sees their spread beyond the problems'
// noise (sd 1 over 400 problems: w = 1/400), and the interval widens with
// it. (Different counts: no shared problems.)
func TestPipelineIntervalSpread(t *testing.T) {
	near, err := PipelineInterval([][]float64{rowOf(0.10, 400), rowOf(0.11, 398), rowOf(0.12, 396)}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	far, err := PipelineInterval([][]float64{rowOf(-0.1, 400), rowOf(0.11, 398), rowOf(0.32, 396)}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(far.Tau-0.204) > 0.002 || near.Tau != 0 || !(far.Hi-far.Lo > 5*(near.Hi-near.Lo)) || near.Lo <= 0 {
		t.Errorf("near %+v, far %+v: want far's Tau ≈ √(0.21² − 1/400) = 0.204, near's 0, and a much wider interval, near's above 0", near, far)
	}
}

func TestPipelineIntervalChecked(t *testing.T) {
	for _, bad := range [][][]float64{nil, {{1, 0}}, {{1, 0}, {1}}} {
		if _, err := PipelineInterval(bad, 0.95); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// Power: at no effect the verdict holds at most about its one-sided
// level; at a large effect nearly always; more pipelines, more power; and
// PipelinesFor returns the first count whose power reaches the target.
func TestPipelinePower(t *testing.T) {
	null, err := PipelinePower(0, 0.04, 0.025, 0.00015, 3, 0.95, 20000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if null > 0.025+3*math.Sqrt(0.025*0.975/20000) {
		t.Errorf("power at no effect %v, want ≤ 0.025", null)
	}
	big, _ := PipelinePower(0.3, 0.04, 0.025, 0.00015, 3, 0.95, 2000, 1)
	if big < 0.99 {
		t.Errorf("power at +0.3 %v, want about 1", big)
	}
	p3, _ := PipelinePower(0.08, 0.04, 0.025, 0.00015, 3, 0.95, 2000, 1)
	p8, _ := PipelinePower(0.08, 0.04, 0.025, 0.00015, 8, 0.95, 2000, 1)
	if !(p8 > p3+0.2) {
		t.Errorf("power at +0.08: 3 pipelines %v, 8 %v: want many more with 8", p3, p8)
	}
	k, err := PipelinesFor(0.08, 0.04, 0.025, 0.00015, 0.95, 0.8, 20, 2000, 1)
	if err != nil || k < 3 {
		t.Fatalf("PipelinesFor: %d, %v", k, err)
	}
	at, _ := PipelinePower(0.08, 0.04, 0.025, 0.00015, k, 0.95, 2000, 1)
	below, _ := PipelinePower(0.08, 0.04, 0.025, 0.00015, k-1, 0.95, 2000, 1)
	if at < 0.8 || below >= 0.8 {
		t.Errorf("PipelinesFor gave %d: power %v there, %v at %d", k, at, below, k-1)
	}
	if _, err := PipelinePower(0.1, 0.04, 0.02, 0.001, 3, 0.95, 10, 1); err == nil {
		t.Error("shared > se²: no error")
	}
}

// From the means alone, with the per-problem data's within and shared
// terms, the interval is PipelineInterval's; a shared term outside [0,
// within] is refused.
func TestPipelineIntervalOfMeans(t *testing.T) {
	d := [][]float64{{1, 0, 1, 1, -1, 0}, {0, 0, 1, 1, 0, 1}, {1, -1, 1, 0, 0, 0}}
	want, err := PipelineInterval(d, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	got, err := PipelineIntervalOfMeans([]float64{Mean(d[0]), Mean(d[1]), Mean(d[2])}, want.Within, want.Shared, 0.99)
	if err != nil || got != want {
		t.Errorf("got %+v (%v), want %+v", got, err, want)
	}
	if _, err := PipelineIntervalOfMeans([]float64{0.1, 0.2}, 0.01, 0.02, 0.95); err == nil {
		t.Error("shared > within: no error")
	}
}
