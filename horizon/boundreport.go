package horizon

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// writeBoundSection writes the report's table of measured gaps against the
// bound from measured δ_t, one per decoding. perSeed adds each seed's gap
// and bound (the pooled report's top-level seeds).
func writeBoundSection(w io.Writer, checks []BoundCheck, perSeed bool) {
	if len(checks) == 0 {
		return
	}
	fmt.Fprintln(w, "## Measured gaps against the bound from measured δ_t")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "By the simulation lemma a simulator whose user turn t differs from the human's by total variation δ_t moves a policy's objective by at most R_max·Σ_t (H−t)·δ_t (turns numbered 0 … H−1), with R_max = %g: rewards lie in [0, 1] (success, or BLEU/100). ", RMax)
	fmt.Fprintln(w, "Each arm's bound uses its own measured δ_t: the total-variation distance between the calibrated simulator's and the human proxy's dialogue acts at user turn t in the conversations of that arm's policy (reproduce's fidelity stage, fidelity/ARM/seed-K.json), the bound computed per seed and averaged. "+
		"The fidelity stage plays the sampled policy only, so the greedy table uses the sampled δ_t too. "+
		"The gap is normalised by the oracle arm's lead over the base at that H under the same decoding (n/a when the lead is at most 0.02). "+
		"Strictly, the lemma bounds a fixed policy's sim-to-real gap: an arm trained on the simulator may lose up to twice the bound against the oracle arm (once in its own conversations, once in the oracle's), and the static arm never meets the simulator (its own bound is in its per-turn error ε_t, which the run does not measure), so for it the column is for comparison only. "+
		"A gap can never exceed R_max, so a bound at or above it holds trivially (vacuous); \"no (bound within the 95% CI)\" is a point estimate above the bound whose interval still reaches it.")
	perHistory := false
	for _, c := range checks {
		perHistory = perHistory || c.PerHistoryBound != nil
	}
	if perHistory {
		fmt.Fprintln(w, "\nThe last column is the bound from the calibrated simulator's per-history δ_t instead: at every history of validation conversations of the scripted agents with the human proxy, the total variation between the simulator's and the proxy's sampled next-act distributions, less the proxy against its own second sample (reproduce's gate, fidelity/sim.json; clipped at 0). It asks whether the simulator answers each history as the proxy does, where the pooled δ_t above compares act frequencies only.")
	}
	if n, h, ok := carriedTurns(checks); ok {
		fmt.Fprintf(w, "\n† δ_t was measured for user turns 0 … %d; turns %d … H−1 (up to %d) carry the last measured value δ_%d.\n", n-1, n, h-1, n-1)
	}
	for _, dec := range Decodings {
		rows := checksWhere(checks, func(c BoundCheck) bool { return c.Decoding == dec })
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n### %s\n\n", dec)
		head, rule := "| H | arm | gap to oracle (95% CI) | gap / oracle lead | bound from measured δ_t | gap ≤ bound? |", "| --- | --- | --- | --- | --- | --- |"
		if perSeed {
			head, rule = "| H | arm | gap to oracle (95% CI) | per seed | gap / oracle lead | bound from measured δ_t | per seed | gap ≤ bound? |", "| --- | --- | --- | --- | --- | --- | --- | --- |"
		}
		if perHistory {
			head, rule = head+" bound from per-history δ_t |", rule+" --- |"
		}
		fmt.Fprintln(w, head)
		fmt.Fprintln(w, rule)
		for _, c := range rows {
			fmt.Fprintf(w, "| %d | %s | %+.3f [%+.3f, %+.3f] |", c.H, c.Arm, c.Gap, c.GapCI95[0], c.GapCI95[1])
			if perSeed {
				fmt.Fprintf(w, " %s |", joinFloats("%+.3f", c.Seeds))
			}
			fmt.Fprintf(w, " %s | %s |", normalisedCell(c), boundCell(c))
			if perSeed {
				fmt.Fprintf(w, " %s |", joinFloats("%.3f", c.BoundSeeds))
			}
			fmt.Fprintf(w, " %s |", c.verdict())
			if perHistory {
				cell := "n/a"
				if c.PerHistoryBound != nil {
					cell = fmt.Sprintf("%.3f", *c.PerHistoryBound)
				}
				fmt.Fprintf(w, " %s |", cell)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
}

// carriedTurns is how many turns δ_t covers and the largest H whose bound
// carries its last value past them; false when no bound does.
func carriedTurns(checks []BoundCheck) (measured, h int, ok bool) {
	for _, c := range checks {
		if c.Carried > 0 && c.H >= h {
			measured, h, ok = c.H-c.Carried, c.H, true
		}
	}
	return measured, h, ok
}

// checksWhere returns the checks keep accepts, in order.
func checksWhere(checks []BoundCheck, keep func(BoundCheck) bool) []BoundCheck {
	var out []BoundCheck
	for _, c := range checks {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

func normalisedCell(c BoundCheck) string {
	if c.Normalised == nil {
		return fmt.Sprintf("n/a (lead %+.3f)", c.Lead)
	}
	return fmt.Sprintf("%+.2f (lead %+.3f)", *c.Normalised, c.Lead)
}

func boundCell(c BoundCheck) string {
	if c.Carried > 0 {
		return fmt.Sprintf("%.3f †", c.Bound)
	}
	return fmt.Sprintf("%.3f", c.Bound)
}

func joinFloats(format string, xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(s, ", ")
}

// BoundPlot draws, per arm, the measured gap to the oracle under decoding
// (points with their 95% error bars) and the bound from its measured δ_t
// (dashed, the same colour) against H. The gap axis is linear, since gaps
// can be negative, and stops a little above R_max: no gap can pass it, and
// a bound that does is vacuous and runs off the top.
func BoundPlot(checks []BoundCheck, decoding string) (*plot.Plot, error) {
	rows := checksWhere(checks, func(c BoundCheck) bool { return c.Decoding == decoding })
	if len(rows) == 0 {
		return nil, fmt.Errorf("horizon: bound plot: no %s checks", decoding)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("gap to the oracle arm (%s) and bound from measured δ_t", decoding)
	p.X.Label.Text = "horizon H (turns)"
	p.Y.Label.Text = "gap to oracle (reward)"
	p.X.Scale = plot.LogScale{}
	// Top right: the bounds climb out of the top on the left, at small H.
	p.Legend.Top = true
	var arms []string
	var hs []int
	lo := 0.0
	for _, c := range rows {
		if !slices.Contains(arms, c.Arm) {
			arms = append(arms, c.Arm)
		}
		if !slices.Contains(hs, c.H) {
			hs = append(hs, c.H)
		}
		lo = min(lo, c.GapCI95[0])
	}
	for k, arm := range arms {
		if err := addArm(p, checksWhere(rows, func(c BoundCheck) bool { return c.Arm == arm }), arm, k); err != nil {
			return nil, err
		}
	}
	slices.Sort(hs)
	var xticks plot.ConstantTicks
	for _, h := range hs {
		xticks = append(xticks, plot.Tick{Value: float64(h), Label: strconv.Itoa(h)})
	}
	p.X.Tick.Marker = xticks
	p.Add(plotter.NewGrid())
	// After every plotter has widened the range: the bounds' lines are
	// clipped at the top.
	p.Y.Min, p.Y.Max = lo-0.05, 1.1*RMax
	return p, nil
}

// addArm adds one arm's gaps with error bars and its dashed bound.
func addArm(p *plot.Plot, rows []BoundCheck, arm string, k int) error {
	pts := make(plotter.XYs, len(rows))
	bars := make(plotter.YErrors, len(rows))
	bound := make(plotter.XYs, len(rows))
	for i, c := range rows {
		pts[i] = plotter.XY{X: float64(c.H), Y: c.Gap}
		bars[i].Low, bars[i].High = c.Gap-c.GapCI95[0], c.GapCI95[1]-c.Gap
		bound[i] = plotter.XY{X: float64(c.H), Y: c.Bound}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("horizon: bound plot %s: %w", arm, err)
	}
	eb, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, bars})
	if err != nil {
		return fmt.Errorf("horizon: bound plot %s: %w", arm, err)
	}
	bl, err := plotter.NewLine(bound)
	if err != nil {
		return fmt.Errorf("horizon: bound plot %s: %w", arm, err)
	}
	sc.Color, sc.Shape, eb.Color, bl.Color = plotutil.Color(k), plotutil.Shape(k), plotutil.Color(k), plotutil.Color(k)
	bl.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(bl, eb, sc)
	p.Legend.Add(arm+" gap (95% CI)", sc)
	p.Legend.Add(arm+" bound", bl)
	return nil
}
