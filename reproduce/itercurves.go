package reproduce

// The success-vs-iterations study (Config.Curves): at every reading of the
// monitor, each RL arm's policy plays Curves validation problems against
// the human proxy, greedy and sampled at the rollouts' temperature (the
// evaluation's two decodings), so that a run shows where along its budget
// an arm passes the base, or that none does. The problems are
// eval.ValidationSlice's, as every choice of settings uses, never the
// test slice the verdict reads; every arm and RL seed plays the same
// problems with the same users, so the reading at iteration 0 is the
// base's own.

import (
	"fmt"
	"io"
	"os"
	"strings"

	"gonum.org/v1/plot"

	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/figure"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/train"
)

// curveReadings is about how many readings after iteration 0 a curve gets,
// whatever the budget (curveEvery).
const curveReadings = 10

// curveEvery is the monitor's interval for a budget of n iterations:
// n/curveReadings rounded up, so that 300 iterations read every 30 (11
// readings with iteration 0) and 4 every one.
func curveEvery(n int) int { return max(1, (n+curveReadings-1)/curveReadings) }

// curvesOn sets c's monitor for the study when the run has one: Curves
// problems of the validation slice (users seeded from the run's seed, the
// same for every RL seed), read every curveEvery iterations with the
// evaluation's decodings, greedy (MonitorGen) and sampled at the
// rollouts' temperature and top-p (MonitorSampled).
func (r *run) curvesOn(c *train.RLConfig) {
	if r.cfg.Curves <= 0 {
		return
	}
	c.MonitorEvery, c.MonitorInstances, c.MonitorSampled = curveEvery(c.Iterations), r.cfg.Curves, true
	c.MonitorGen = spec.EvalGen()
	c.MonitorOn(eval.ValidationSlice, r.cfg.Seed)
}

// checkCurves refuses a study whose problems (or the hacking metrics',
// which start where the monitor's do) would run past the validation
// slice. Run asks it before the run folder is opened, so that a refused
// study leaves nothing behind.
func checkCurves(cfg Config) error {
	if cfg.Curves < 0 {
		return fmt.Errorf("reproduce: %d curve problems, want ≥ 0", cfg.Curves)
	}
	if cfg.Curves == 0 {
		return nil
	}
	if err := eval.ValidationSlice.Check(max(cfg.Curves, cfg.Preset.RL.HackingInstances)); err != nil {
		return fmt.Errorf("reproduce: curves: %w", err)
	}
	return nil
}

// seedReadings are one arm's and seed's readings: iteration, greedy and
// sampled success.
type seedReadings struct{ iter, greedy, sampled []float64 }

// armCurve is an RL arm's readings averaged over its seeds, at the
// iterations every seed read.
type armCurve struct {
	arm                   string
	iter, greedy, sampled []float64
}

// iterationCurves reads the study's readings of every RL arm from the
// metrics records, averaged over seeds, and the base's (every arm's
// reading at iteration 0, the policy RL starts from), greedy and sampled.
func (r *run) iterationCurves(recs []map[string]any) (curves []armCurve, base [2]float64, ok bool) {
	byStage := perStep(recs, train.MetricMonitorSampledSuccess)
	var at0 [2]float64
	var n0 int
	for _, arm := range r.rlArms() {
		var seeds []seedReadings
		for k := range r.seeds() {
			var s seedReadings
			for _, rec := range byStage[seedName(arm, k)] {
				s.iter = append(s.iter, num(rec, train.MetricStep))
				s.greedy = append(s.greedy, num(rec, train.MetricMonitorHumanSuccess))
				s.sampled = append(s.sampled, num(rec, train.MetricMonitorSampledSuccess))
			}
			if len(s.iter) > 0 {
				seeds = append(seeds, s)
			}
		}
		if len(seeds) == 0 {
			continue
		}
		c := armCurve{arm: arm}
		for i, it := range seeds[0].iter {
			var g, s float64
			for _, sd := range seeds {
				if i >= len(sd.iter) || sd.iter[i] != it {
					return nil, base, false // an unfinished seed: no mean yet
				}
				g, s = g+sd.greedy[i], s+sd.sampled[i]
			}
			n := float64(len(seeds))
			c.iter, c.greedy, c.sampled = append(c.iter, it), append(c.greedy, g/n), append(c.sampled, s/n)
			if it == 0 {
				at0[0], at0[1], n0 = at0[0]+g, at0[1]+s, n0+len(seeds)
			}
		}
		curves = append(curves, c)
	}
	if n0 == 0 {
		return nil, base, false
	}
	return curves, [2]float64{at0[0] / float64(n0), at0[1] / float64(n0)}, true
}

// curveSection writes the study's plot (plots/curves.png) and section.
func (r *run) curveSection(w io.Writer, recs []map[string]any) error {
	if r.cfg.Curves <= 0 {
		return nil
	}
	curves, base, ok := r.iterationCurves(recs)
	if !ok {
		return nil
	}
	k, iters := r.cfg.Curves, r.cfg.Preset.RL.Iterations
	if err := os.MkdirAll(r.f.Path("plots"), 0o755); err != nil {
		return err
	}
	var panels []*plot.Plot
	for d, name := range []string{"greedy", "sampled"} {
		var lines []figure.Line
		for i, c := range curves {
			lines = append(lines, figure.Line{Name: c.arm, X: c.iter, Y: [][]float64{c.greedy, c.sampled}[d], Color: i})
		}
		lines = append(lines, figure.Line{Name: "base", X: []float64{0, float64(iters)}, Y: []float64{base[d], base[d]}, Dashed: true, Color: len(curves)})
		p, err := figure.Lines(fmt.Sprintf("%s, %d validation problems, mean of %d RL seeds", name, k, r.seeds()), "RL iteration", "success against the human proxy", lines)
		if err != nil {
			return err
		}
		p.Y.Min, p.Y.Max = 0, 1
		panels = append(panels, p)
	}
	if err := figure.Write(r.f.Path("plots", "curves"), panels...); err != nil {
		return err
	}
	s := eval.ValidationSlice
	fmt.Fprintf(w, "## Success over RL iterations, on validation problems\n\n")
	fmt.Fprintf(w, "Every %d of the %d RL iterations (and at 0 and the end), each arm's policy played the same %d validation problems (the test split from problem %d, users seeded apart: no verdict uses them) against the human proxy, "+
		"greedy and sampled at the rollouts' temperature %g (the evaluation's decodings, turns of at most %d tokens). Iteration 0 is the base policy, the same for every arm. "+
		"An arm's value is the mean over its %d RL seeds; the 95%% interval is Wilson's with n = %d problems (as in the verdict's rows).\n\n",
		curveEvery(iters), iters, k, s.Start, r.gen(sampled).Temperature, spec.EvalGen().MaxNewTokens, r.seeds(), k)
	fmt.Fprintln(w, "![success over iterations](plots/curves.png)")
	fmt.Fprintln(w)
	better, bestValue := "greedy", base[0]
	if base[1] > base[0] {
		better, bestValue = "sampled", base[1]
	}
	for d, name := range []string{"greedy", "sampled"} {
		fmt.Fprintf(w, "%s, success (95%% CI):\n\n| iteration |", strings.ToUpper(name[:1])+name[1:])
		for _, c := range curves {
			fmt.Fprintf(w, " %s |", c.arm)
		}
		fmt.Fprintf(w, "\n| --- |%s\n", repeatCell(len(curves)))
		for i, it := range curves[0].iter {
			label := fmt.Sprint(it)
			if it == 0 {
				label = "0 (base)"
			}
			fmt.Fprintf(w, "| %s |", label)
			for _, c := range curves {
				if i >= len(c.iter) || c.iter[i] != it {
					fmt.Fprint(w, " – |")
					continue
				}
				v := [][]float64{c.greedy, c.sampled}[d][i]
				ci := wilson(v, k)
				fmt.Fprintf(w, " %.3f [%.3f, %.3f] |", v, ci[0], ci[1])
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "The base's better decoding on these problems is %s (%.3f; greedy %.3f, sampled %.3f): an arm beats the base for a user only above that. Readings whose 95%% interval lies wholly above that value (the base's own interval not counted): ", better, bestValue, base[0], base[1])
	var above []string
	for _, c := range curves {
		for d, name := range []string{"greedy", "sampled"} {
			for i, it := range c.iter {
				if v := [][]float64{c.greedy, c.sampled}[d][i]; it > 0 && wilson(v, k)[0] > bestValue {
					above = append(above, fmt.Sprintf("%s %s at iteration %g (%.3f)", c.arm, name, it, v))
				}
			}
		}
	}
	if len(above) == 0 {
		fmt.Fprintf(w, "none.\n\n")
	} else {
		fmt.Fprintf(w, "%s.\n\n", strings.Join(above, "; "))
	}
	return nil
}
