package reproduce

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/train"
)

func TestCurveEvery(t *testing.T) {
	for n, want := range map[int]int{1: 1, 2: 1, 4: 1, 10: 1, 11: 2, 25: 3, 30: 3, 300: 30} {
		if got := curveEvery(n); got != want {
			t.Errorf("curveEvery(%d) = %d, want %d", n, got, want)
		}
	}
}

// Without the study the RL arms train with the preset's config exactly
// (the monitor on its own problems, greedy only), and the manifest names
// neither option: runs without them keep their bits.
func TestNoCurvesKeepsThePresetsConfig(t *testing.T) {
	cfg := tinyConfig(t)
	r := &run{cfg: cfg}
	for k := range 2 {
		if got, want := r.rlConfig(k), cfg.Preset.RLConfig(RLSeed(cfg.Seed, k)); !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d: RL config %+v, want the preset's %+v", k, got, want)
		}
	}
	r.cfg.Curves = 5
	c := r.rlConfig(1)
	if !c.MonitorSampled || c.MonitorInstances != 5 || c.MonitorStart != eval.ValidationSlice.Start || c.MonitorSeed == nil ||
		*c.MonitorSeed != eval.ValidationSlice.Seed(cfg.Seed) || c.MonitorGen.Temperature != 0 {
		t.Errorf("with curves: monitor %+v", c)
	}
}

// One command gives every RL arm's success over its iterations on
// validation problems, greedy and sampled: a tiny run of 4 iterations
// with 4 curve problems reads every iteration, every arm and seed reads
// the base at iteration 0 alike, and report.md holds the section, the
// plot and a table row per reading. A run folder resumed with another
// budget or another number of curve problems is refused.
func TestCurvesOfATinyRun(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.RLIterations, cfg.Curves = 4, 4
	cfg.Out = filepath.Join(t.TempDir(), "curves")
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	f := &runfolder.Folder{Dir: cfg.Out}
	recs, err := f.ReadMetrics()
	if err != nil {
		t.Fatal(err)
	}
	byStage := perStep(recs, train.MetricMonitorSampledSuccess)
	var at0 [][2]float64
	last := map[string][]float64{} // arm: each seed's greedy reading at 4
	for _, arm := range rlArms {
		for k := range cfg.Preset.RLSeeds {
			pts := byStage[seedName(arm, k)]
			var steps []float64
			for _, rec := range pts {
				steps = append(steps, num(rec, train.MetricStep))
			}
			if !reflect.DeepEqual(steps, []float64{0, 1, 2, 3, 4}) {
				t.Fatalf("%s: readings at %v, want 0 to 4", seedName(arm, k), steps)
			}
			at0 = append(at0, [2]float64{num(pts[0], train.MetricMonitorHumanSuccess), num(pts[0], train.MetricMonitorSampledSuccess)})
			last[arm] = append(last[arm], num(pts[4], train.MetricMonitorHumanSuccess))
		}
	}
	for _, v := range at0 {
		if v != at0[0] {
			t.Errorf("iteration 0 read %v and %v: not the same base on the same problems", at0[0], v)
		}
	}
	for _, name := range []string{"curves.png", "curves.svg"} {
		if _, err := os.Stat(f.Path("plots", name)); err != nil {
			t.Error(err)
		}
	}
	b, err := os.ReadFile(f.Path("report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{"## Success over RL iterations, on validation problems", "![success over iterations](plots/curves.png)",
		"Greedy, success (95% CI):", "Sampled, success (95% CI):", "| 0 (base) |", "| 4 |", "test split from problem 20000",
		"gets, per RL seed, 4 RL iterations"} {
		if strings.Count(md, want) == 0 {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if n := strings.Count(md, "| 0 (base) |"); n != 2 {
		t.Errorf("report.md has %d base rows, want 2 (greedy, sampled)", n)
	}
	// The greedy table's last row holds each arm's mean over seeds.
	row := md[strings.Index(md, "Greedy, success"):]
	row = row[strings.Index(row, "| 4 |"):]
	row = row[:strings.Index(row, "\n")]
	for _, arm := range rlArms {
		v := mean(last[arm])
		ci := wilson(v, 4)
		if cell := fmt.Sprintf(" %.3f [%.3f, %.3f] |", v, ci[0], ci[1]); !strings.Contains(row, cell) {
			t.Errorf("greedy row at 4 %q lacks %s's mean %s", row, arm, cell)
		}
	}
	var m runfolder.Manifest
	if err := f.ReadJSON("manifest.json", &m); err != nil {
		t.Fatal(err)
	}
	if c := m.Config.(map[string]any); c["curves"] != 4.0 || c["rl_iterations"] != 4.0 {
		t.Errorf("manifest records curves %v and RL iterations %v, want 4 and 4", c["curves"], c["rl_iterations"])
	}
	for _, c := range []struct {
		iters, curves int
		want          string
	}{
		{0, 4, "started with rl.Iterations 4, not 2 (--rl-iterations)"},
		{5, 4, "started with rl.Iterations 4, not 5 (--rl-iterations)"},
		{4, 0, "started with curves 4, not 0 (--curves"},
		{4, 8, "started with curves 4, not 8 (--curves"},
	} {
		again := cfg
		again.RLIterations, again.Curves = c.iters, c.curves
		if _, err := Run(context.Background(), again); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("resumed with --rl-iterations %d --curves %d: got %v, want %q", c.iters, c.curves, err, c.want)
		}
	}
}

// The section averages each arm's readings over its seeds, tabulates them
// with Wilson intervals beside the base's (iteration 0), and names the
// readings whose interval lies above the base's better decoding.
func TestCurveSectionOfReadings(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Preset.RL.Iterations, cfg.Curves = 4, 10
	cfg.StaticRewards = []string{train.StaticOutcome, train.StaticContinuation}
	r := &run{cfg: cfg, f: &runfolder.Folder{Dir: t.TempDir()}}
	var recs []map[string]any
	add := func(stage string, greedy, sampled []float64) {
		for i := range greedy {
			recs = append(recs, map[string]any{"stage": stage, train.MetricStep: float64(2 * i), train.MetricMonitorTrainReward: 0.0,
				train.MetricMonitorHumanSuccess: greedy[i], train.MetricMonitorSampledSuccess: sampled[i]})
		}
	}
	add("oracle-interactive/seed-0", []float64{0.5, 0.6, 0.9}, []float64{0.3, 0.4, 0.5})
	add("oracle-interactive/seed-1", []float64{0.5, 0.8, 0.9}, []float64{0.3, 0.2, 0.7})
	add("static/seed-0", []float64{0.5, 0.4, 0.3}, []float64{0.3, 0.3, 0.2})
	add("static/seed-1", []float64{0.5, 0.4, 0.1}, []float64{0.3, 0.3, 0.2})
	add("static-continuation/seed-0", []float64{0.5, 0.5, 0.5}, []float64{0.3, 0.3, 0.3})
	add("static-continuation/seed-1", []float64{0.5, 0.5, 0.5}, []float64{0.3, 0.3, 0.3})
	recs = append(recs, map[string]any{"stage": "static/seed-1", train.MetricStep: 4.0, train.MetricReward: 0.1}) // an iteration record
	var b strings.Builder
	if err := r.curveSection(&b, recs); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	cell := func(v float64) string { ci := wilson(v, 10); return fmt.Sprintf("%.3f [%.3f, %.3f]", v, ci[0], ci[1]) }
	for _, want := range []string{
		"| iteration | static | static-continuation | oracle-interactive |",
		"| 0 (base) | " + cell(0.5) + " | " + cell(0.5) + " | " + cell(0.5) + " |",
		"| 2 | " + cell(0.4) + " | " + cell(0.5) + " | " + cell(0.7) + " |",
		"| 4 | " + cell(0.2) + " | " + cell(0.5) + " | " + cell(0.9) + " |",
		"| 0 (base) | " + cell(0.3) + " | " + cell(0.3) + " | " + cell(0.3) + " |",
		"| 4 | " + cell(0.2) + " | " + cell(0.3) + " | " + cell(0.6) + " |",
		"better decoding on these problems is greedy (0.500; greedy 0.500, sampled 0.300)",
		"(the base's own interval not counted): oracle-interactive greedy at iteration 4 (0.900).",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(r.f.Path("plots", "curves.png")); err != nil {
		t.Error(err)
	}
	// Without the study, nothing.
	r.cfg.Curves = 0
	b.Reset()
	if err := r.curveSection(&b, recs); err != nil || b.Len() != 0 {
		t.Errorf("no curves: wrote %q, %v", b.String(), err)
	}
}
