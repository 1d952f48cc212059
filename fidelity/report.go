package fidelity

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"gonum.org/v1/plot"

	"github.com/calibrl/calibrl/figure"
)

// WriteTable prints one row per simulator with the human proxy's own
// probe rates as the reference row.
func WriteTable(w io.Writer, reps []Report) error {
	if len(reps) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "sim\tδ̄\tδ floor\tsycophancy\taccept right\tleak\toversharing\tend agree\tsim-to-real gap\tNLL")
	h := reps[0].Human
	fmt.Fprintf(tw, "human (reference)\t0\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t1\t0\t-\n", reps[0].DeltaFloor, h.Sycophancy, h.AcceptRight, h.Leak, h.Oversharing)
	for _, r := range reps {
		nll := "-"
		if r.NLL != nil {
			nll = fmt.Sprintf("%.3f", *r.NLL)
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\n", r.Sim, r.DeltaMean, r.DeltaFloor,
			r.Sycophancy, r.AcceptRight, r.Leak, r.Oversharing, r.EndAgreement, r.SimToRealGap, nll)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "agent\tsuccess vs human\t"+simNames(reps))
	agents := make([]string, 0, len(reps[0].Agents))
	for a := range reps[0].Agents {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	for _, a := range agents {
		fmt.Fprintf(tw, "%s\t%.3f%s", AgentSpec(a), reps[0].Agents[a].Human, noDelivery(reps[0].Agents[a].HumanNoDelivery))
		for _, r := range reps {
			g := r.Agents[a]
			fmt.Fprintf(tw, "\t%.3f (%+.3f)%s", g.Sim, g.Gap, noDelivery(g.SimNoDelivery))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var hist []HistoryReport
	for _, r := range reps {
		if r.PerHistory != nil {
			hist = append(hist, *r.PerHistory)
		}
	}
	if len(hist) > 0 {
		fmt.Fprintf(w, "\nper-history fidelity on %d validation conversations (K draws of each user's next turn per history; excess = TV to the proxy − the proxy against itself):\n", hist[0].Conversations)
		if err := WriteHistoryTable(w, hist); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "verdicts in conversation	wrong outcomes accepted	right outcomes accepted")
	hv := reps[0].HumanVerdicts
	fmt.Fprintf(tw, "human (reference)	%.3f of %d	%.3f of %d\n", hv.AcceptWrong, hv.Wrong, hv.AcceptRight, hv.Right)
	for _, r := range reps {
		v := r.Verdicts
		fmt.Fprintf(tw, "%s	%.3f of %d	%.3f of %d\n", r.Sim, v.AcceptWrong, v.Wrong, v.AcceptRight, v.Right)
	}
	return tw.Flush()
}

// noDelivery writes a no-delivery rate after a success rate, when the
// task records one.
func noDelivery(rate *float64) string {
	if rate == nil {
		return ""
	}
	return fmt.Sprintf(", no delivery %.3f", *rate)
}

func simNames(reps []Report) string {
	s := ""
	for i, r := range reps {
		if i > 0 {
			s += "\t"
		}
		s += "vs " + r.Sim
	}
	return s
}

// Plot draws δ_t by user turn for each simulator, with the human-vs-human
// floor dashed, into base.png and base.svg.
func Plot(base string, reps []Report) error {
	var lines []figure.Line
	for i, r := range reps {
		x := make([]float64, len(r.Delta))
		for t := range x {
			x[t] = float64(t)
		}
		lines = append(lines, figure.Line{Name: fmt.Sprintf("%s (mean δ %.3f)", r.Sim, r.DeltaMean), X: x, Y: r.Delta, Color: i})
	}
	if len(reps) > 0 {
		r := reps[0]
		lines = append(lines, figure.Line{Name: fmt.Sprintf("human vs human floor (%.3f)", r.DeltaFloor),
			X: []float64{0, float64(len(r.Delta) - 1)}, Y: []float64{r.DeltaFloor, r.DeltaFloor}, Dashed: true, Color: len(reps)})
	}
	p, err := figure.Lines("User-act distance to the human proxy by turn", "user turn (0 = opening)", "total variation δ_t", lines)
	if err != nil {
		return err
	}
	p.Y.Min, p.Y.Max = 0, 1
	return figure.Write(base, []*plot.Plot{p}...)
}
