package horizon

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Series is one regime's (or one trained arm's) gap to the oracle at each
// horizon, with the theory's bound where there is one (Bound nil or
// shorter: none). The synthetic study fills it from exact values; the
// learned study fills it from evaluations against the human proxy.
type Series struct {
	Name  string
	H     []int
	Gap   []float64
	Bound []float64
	// Dashed draws the gap as a reference line (dashed, no markers): the
	// synthetic study's lines beside the learned arms.
	Dashed bool
}

// GapPlot draws each series' gap against H on log-log axes, solid with
// markers, and its bound dashed in the same colour: a slope-2 law is a line
// twice as steep as a slope-1 law. Non-positive values cannot be drawn on
// log axes and are an error.
func GapPlot(title string, series []Series) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, errors.New("horizon: plot: no series")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "horizon H (turns)"
	p.Y.Label.Text = "gap to oracle (return)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	var xticks plot.ConstantTicks
	seen := map[int]bool{}
	for k, s := range series {
		if len(s.H) != len(s.Gap) {
			return nil, fmt.Errorf("horizon: plot %s: %d horizons, %d gaps", s.Name, len(s.H), len(s.Gap))
		}
		gap, bound := make(plotter.XYs, len(s.H)), plotter.XYs{}
		for i, h := range s.H {
			if h <= 0 || !(s.Gap[i] > 0) {
				return nil, fmt.Errorf("horizon: plot %s: H=%d gap=%v cannot go on log axes", s.Name, h, s.Gap[i])
			}
			gap[i] = plotter.XY{X: float64(h), Y: s.Gap[i]}
			if i < len(s.Bound) && s.Bound[i] > 0 {
				bound = append(bound, plotter.XY{X: float64(h), Y: s.Bound[i]})
			}
			if !seen[h] {
				seen[h] = true
				xticks = append(xticks, plot.Tick{Value: float64(h), Label: strconv.Itoa(h)})
			}
		}
		label := s.Name + " gap"
		if f, err := FitLogLog(s.H, s.Gap); err == nil {
			label += fmt.Sprintf(", slope %.2f [%.2f, %.2f]", f.Slope, f.SlopeLo, f.SlopeHi)
		}
		line, points, err := plotter.NewLinePoints(gap)
		if err != nil {
			return nil, fmt.Errorf("horizon: plot %s: %w", s.Name, err)
		}
		line.Color, points.Color = plotutil.Color(k), plotutil.Color(k)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
			p.Add(line)
			p.Legend.Add(label, line)
		} else {
			line.Width = vg.Points(1.5)
			points.Shape = plotutil.Shape(k)
			p.Add(line, points)
			p.Legend.Add(label, line, points)
		}
		if len(bound) > 0 {
			bl, err := plotter.NewLine(bound)
			if err != nil {
				return nil, fmt.Errorf("horizon: plot %s bound: %w", s.Name, err)
			}
			bl.Color = plotutil.Color(k)
			bl.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(bl)
			p.Legend.Add(s.Name+" bound", bl)
		}
	}
	p.X.Tick.Marker = xticks
	p.Add(plotter.NewGrid())
	return p, nil
}

// positionPlot draws the position experiment: the cost of one error at turn
// i against i, for each regime.
func (r *SyntheticResult) positionPlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("cost of one error at turn i (H = %d)", r.PositionH)
	p.X.Label.Text = "turn i of the error (0 = first)"
	p.Y.Label.Text = "gap to oracle (return)"
	p.Legend.Top = true
	p.Y.Min = 0
	names := []string{"static (eps at i)", "interactive (eps at i)", "simulator (delta at i)"}
	for k, name := range names {
		xy := make(plotter.XYs, len(r.Position))
		for i, row := range r.Position {
			c := [3]float64{row.Cost.Static, row.Cost.Interactive, row.Cost.Simulator}[k]
			xy[i] = plotter.XY{X: float64(row.Turn), Y: c}
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, fmt.Errorf("horizon: position plot: %w", err)
		}
		line.Color, points.Color = plotutil.Color(k), plotutil.Color(k)
		points.Shape = plotutil.Shape(k)
		if k == 2 {
			// Static and simulator costs coincide when ε = δ; dash one so
			// both stay visible.
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line, points)
		p.Legend.Add(name, line, points)
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// logTicks labels 1, 2 and 5 times each power of ten inside the range and
// marks the other integer multiples unlabelled, which reads better than
// plot.LogTicks when the range spans only a decade or two.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * base
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 3, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
