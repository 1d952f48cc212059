package runreport

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Axis is a chart axis: its range, fitted to the data (fitAxis), and its
// ticks.
type Axis struct {
	Min, Max float64
	Ticks    []Tick
}

// Tick is one labelled tick at pixel position Pos.
type Tick struct {
	Pos   float64
	Label string
}

// fitAxis fits a range of about n nice steps (1, 2, 2.5 or 5 × 10^k) around
// the data's [lo, hi]: the range starts and ends on a step, so it exceeds
// the data by less than one step at each end. A flat series (lo == hi)
// gets ±5% of its value, not crossing 0 (all zeros get [0, 0.06]). The
// range is never widened to a metric's theoretical bounds: rewards that
// all lie in [0.03, 0.16] get [0, 0.2], not [0, 1].
func fitAxis(lo, hi float64, n int) (min, max, step float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, 1, 0.25
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi-lo <= 1e-12*math.Max(1, math.Abs(hi)) {
		pad := 0.05 * math.Abs(hi)
		if pad == 0 {
			pad = 0.05
		}
		// Padding does not cross 0: data that are all 0 (a tiny run's
		// rewards) get [0, 0.06], not a negative reward axis.
		if lo >= 0 {
			lo, hi = math.Max(0, lo-pad), hi+pad
		} else {
			lo, hi = lo-pad, math.Min(0, hi+pad)
		}
	}
	step = niceStep((hi - lo) / float64(n))
	// The small slack keeps a value that is a whole number of steps (0.2
	// as 4 × 0.05) from being pushed one step out by rounding.
	min = math.Floor(lo/step+1e-9) * step
	max = math.Ceil(hi/step-1e-9) * step
	// k × step may round just inside the data (4 × 1e-5 < 4e-5).
	min, max = math.Min(min, lo), math.Max(max, hi)
	return min, max, step
}

// niceStep is the smallest of 1, 2, 2.5, 5 × 10^k not below x.
func niceStep(x float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(x)))
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if x <= f*e*(1+1e-9) {
			return f * e
		}
	}
	return 10 * e
}

// tickLabel writes v with as many decimals as step needs; steps below
// 0.001 (KL divergences) in short scientific form.
func tickLabel(v, step float64) string {
	if math.Abs(v) < step*1e-6 {
		v = 0
	}
	if step < 1e-3 {
		if v == 0 {
			return "0"
		}
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	d := 0
	for s := step; math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, s) && d < 6; s *= 10 {
		d++
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}

// Chart geometry in SVG user units: a line chart's width, the margins of
// its plot area (the left one holds the tick labels and the rotated y
// label) and the plot area's height. The title's lines above the plot
// and the legend's rows below it add to the height.
const (
	chartW, plotH = 320, 148
	padL, padR    = 64, 12
	// yLabelX is the x of the rotated y label's baseline.
	yLabelX = 14
)

// LineChart is one small multiple: lines over a shared x, on axes fitted
// to the data, with its title, axis labels and a legend naming each line.
type LineChart struct {
	// Class is the SVG's class: "chart" for the training curves, "chart
	// fidelity" for the fidelity section's.
	Class string
	// Title is the chart's whole title (its accessible name); Titles are
	// its visible lines.
	Title          string
	Titles         []TextLine
	XLabel, YLabel string
	W, H           int
	// The plot area's corners.
	X0, X1, Y0, Y1 float64
	X, Y           Axis
	Series         []Series
	Legend         []LegendEntry
	// DataMin and DataMax are the extremes of the plotted y values.
	DataMin, DataMax float64
}

// MidX and MidY are the plot area's centre: where the axis labels sit.
func (c *LineChart) MidX() float64 { return (c.X0 + c.X1) / 2 }
func (c *LineChart) MidY() float64 { return (c.Y0 + c.Y1) / 2 }

// TitleX centres the title's lines on the chart.
func (c *LineChart) TitleX() float64 { return float64(c.W) / 2 }

// Series is one line of a chart.
type Series struct {
	Name   string
	Color  string
	Dashed bool
	// Points is the polyline's "x,y x,y …"; Dots are drawn for short
	// series, where a line alone hides how few readings there are.
	Points string
	Dots   []Dot
}

// Dot is one marked reading; Color is set where the dot's colour is its
// own (a spread chart's seed), not its line's.
type Dot struct {
	X, Y  float64
	Label string
	Color string
}

// Line is the data of one series.
type Line struct {
	Name   string
	X, Y   []float64
	Color  string
	Dashed bool
}

// palette colours the seeds (and simulators) of a chart, in order.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"}

// color is palette entry k, cycling.
func color(k int) string { return palette[k%len(palette)] }

// newLineChart lays out lines on axes fitted to their data, or to yRange
// when it is given (a range shared by the small multiples of one metric,
// itself fitted to all of their data), under title and with a legend entry
// per line that has a point. It returns nil when no line has a point.
func newLineChart(title, xLabel, yLabel string, lines []Line, yRange *[2]float64) *LineChart {
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for i := range l.X {
			xlo, xhi = math.Min(xlo, l.X[i]), math.Max(xhi, l.X[i])
			ylo, yhi = math.Min(ylo, l.Y[i]), math.Max(yhi, l.Y[i])
		}
	}
	if math.IsInf(xlo, 1) {
		return nil
	}
	c := &LineChart{Class: "chart", Title: title, XLabel: xLabel, YLabel: yLabel, W: chartW,
		X0: padL, X1: chartW - padR, DataMin: ylo, DataMax: yhi}
	var top float64
	c.Titles, top = titleLines(title, chartW-8)
	c.Y1 = top + 8
	c.Y0 = c.Y1 + plotH
	fy0, fy1 := ylo, yhi
	if yRange != nil {
		fy0, fy1 = yRange[0], yRange[1]
	}
	ymin, ymax, ystep := fitAxis(fy0, fy1, 4)
	if xhi == xlo {
		xlo, xhi = xlo-1, xhi+1
	}
	xmin, xmax, xstep := fitAxis(xlo, xhi, 5)
	c.X, c.Y = Axis{Min: xmin, Max: xmax}, Axis{Min: ymin, Max: ymax}
	for v := xmin; v <= xmax+xstep*1e-6; v += xstep {
		c.X.Ticks = append(c.X.Ticks, Tick{Pos: c.px(v), Label: tickLabel(v, xstep)})
	}
	for v := ymin; v <= ymax+ystep*1e-6; v += ystep {
		c.Y.Ticks = append(c.Y.Ticks, Tick{Pos: c.py(v), Label: tickLabel(v, ystep)})
	}
	for _, l := range lines {
		if len(l.X) == 0 {
			continue
		}
		s := Series{Name: l.Name, Color: l.Color, Dashed: l.Dashed}
		pts := make([]string, len(l.X))
		for i := range l.X {
			x, y := c.px(l.X[i]), c.py(l.Y[i])
			pts[i] = fmt.Sprintf("%.1f,%.1f", x, y)
			if len(l.X) <= 12 {
				s.Dots = append(s.Dots, Dot{X: x, Y: y, Label: fmt.Sprintf("%s, %s %g: %.4g", l.Name, xLabel, l.X[i], l.Y[i])})
			}
		}
		s.Points = strings.Join(pts, " ")
		c.Series = append(c.Series, s)
		c.Legend = append(c.Legend, LegendEntry{Name: l.Name, Color: l.Color, Dashed: l.Dashed, Mark: "line"})
	}
	// Below the plot: the x ticks' labels, the x label, then the legend.
	last := layoutLegend(c.Legend, 8, chartW-padR, c.Y0+46)
	c.H = int(math.Ceil(last)) + 8
	return c
}

// XLabelY is the baseline of the x label, under the ticks' labels.
func (c *LineChart) XLabelY() float64 { return c.Y0 + 28 }

func (c *LineChart) px(v float64) float64 {
	return c.X0 + (v-c.X.Min)/(c.X.Max-c.X.Min)*(c.X1-c.X0)
}

func (c *LineChart) py(v float64) float64 {
	return c.Y0 - (v-c.Y.Min)/(c.Y.Max-c.Y.Min)*(c.Y0-c.Y1)
}

// SpreadChart shows each arm's mean with its 95% interval and each RL
// seed's figure as a dot, on one x axis fitted to all of them, under its
// title, with the arms down the y axis and a legend for the bar and each
// seed's colour.
type SpreadChart struct {
	Title          string
	Titles         []TextLine
	XLabel, YLabel string
	W, H           int
	X0, X1         float64
	X              Axis
	Rows           []SpreadRow
	Legend         []LegendEntry
	// Top and Bottom are the y of the first row's top and of the x axis.
	Top, Bottom float64
}

// MidX and MidY are the plotted area's centre, where the axis labels sit;
// XLabelY is the x label's baseline, under the ticks' labels.
func (c *SpreadChart) MidX() float64    { return (c.X0 + c.X1) / 2 }
func (c *SpreadChart) MidY() float64    { return (c.Top + c.Bottom) / 2 }
func (c *SpreadChart) XLabelY() float64 { return c.Bottom + 32 }

// SpreadRow is one arm's line of a spread chart.
type SpreadRow struct {
	Arm          string
	Y            float64
	Mean, Lo, Hi float64
	// MeanLabel is the mean's tooltip.
	MeanLabel string
	Seeds     []Dot
}

// newSpreadChart lays out the rows of set s, whose figure is measure; nil
// when no row has a figure. Seed k's dots have the colour of seed k's
// training curves.
func newSpreadChart(s Set, measure string) *SpreadChart {
	const rowH, left, right, width = 28, 190, 20, 900
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range s.Rows {
		if v := r.Value(); !math.IsNaN(v) {
			lo, hi = math.Min(lo, math.Min(v, r.CI95[0])), math.Max(hi, math.Max(v, r.CI95[1]))
		}
		for _, sd := range r.Seeds {
			if v := sd.Value(); !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return nil
	}
	min, max, step := fitAxis(lo, hi, 6)
	c := &SpreadChart{Title: "Per-seed spread of the arms' held-out " + measure, XLabel: "held-out " + measure, YLabel: "arm",
		W: width, X0: left, X1: width - right, X: Axis{Min: min, Max: max}}
	var top float64
	c.Titles, top = titleLines(c.Title, width-16)
	c.Top = top + 8
	c.Bottom = c.Top + float64(rowH*len(s.Rows))
	px := func(v float64) float64 { return c.X0 + (v-min)/(max-min)*(c.X1-c.X0) }
	for v := min; v <= max+step*1e-6; v += step {
		c.X.Ticks = append(c.X.Ticks, Tick{Pos: px(v), Label: tickLabel(v, step)})
	}
	var seeds []int
	for i, r := range s.Rows {
		v := r.Value()
		if math.IsNaN(v) {
			continue
		}
		row := SpreadRow{Arm: r.Arm, Y: c.Top + float64(rowH*i+rowH/2), Mean: px(v), Lo: px(r.CI95[0]), Hi: px(r.CI95[1]),
			MeanLabel: fmt.Sprintf("%s: %.3f [%.3f, %.3f]", r.Arm, v, r.CI95[0], r.CI95[1])}
		for _, sd := range r.Seeds {
			if sv := sd.Value(); !math.IsNaN(sv) {
				row.Seeds = append(row.Seeds, Dot{X: px(sv), Y: row.Y, Color: color(sd.Seed), Label: fmt.Sprintf("%s seed %d: %.3f", r.Arm, sd.Seed, sv)})
				if !slices.Contains(seeds, sd.Seed) {
					seeds = append(seeds, sd.Seed)
				}
			}
		}
		c.Rows = append(c.Rows, row)
	}
	c.Legend = []LegendEntry{{Name: "mean over RL seeds (the base: its one model), line: 95% interval", Color: meanColor, Mark: "bar"}}
	slices.Sort(seeds)
	for _, k := range seeds {
		c.Legend = append(c.Legend, LegendEntry{Name: fmt.Sprintf("seed %d", k), Color: color(k), Mark: "circle"})
	}
	last := layoutLegend(c.Legend, c.X0, c.X1, c.Bottom+50)
	c.H = int(math.Ceil(last)) + 10
	return c
}

// meanColor draws a spread chart's means and intervals.
const meanColor = "#1d2330"
