// Package figure writes calibrl's plots: gonum/plot panels laid side by
// side and saved as PNG and SVG, atomically, plus the line-chart helper the
// reports share.
package figure

import (
	"errors"
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/calibrl/calibrl/atomicfile"
)

// Panel size of a figure's panels.
const (
	PanelW = 6 * vg.Inch
	PanelH = 4.5 * vg.Inch
)

// Write lays the plots out side by side and writes base+".png" and
// base+".svg", each atomically.
func Write(base string, plots ...*plot.Plot) error {
	if len(plots) == 0 {
		return errors.New("figure: no plots")
	}
	w, h := PanelW*vg.Length(len(plots)), PanelH
	row := [][]*plot.Plot{plots}
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Inch / 4, PadTop: vg.Inch / 8,
		PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	render := func(c vg.CanvasSizer) {
		dc := draw.New(c)
		for i, cv := range plot.Align(row, tiles, dc)[0] {
			plots[i].Draw(cv)
		}
	}
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(120))
	render(img)
	if err := atomicfile.Write(base+".png", func(out io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(out)
		return err
	}); err != nil {
		return fmt.Errorf("figure: %w", err)
	}
	svg := vgsvg.New(w, h)
	render(svg)
	if err := atomicfile.Write(base+".svg", func(out io.Writer) error {
		_, err := svg.WriteTo(out)
		return err
	}); err != nil {
		return fmt.Errorf("figure: %w", err)
	}
	return nil
}

// Line is one named curve; Dashed draws it dashed (a companion curve, such
// as the reward against the real user beside the training reward).
type Line struct {
	Name   string
	X, Y   []float64
	Dashed bool
	// Color indexes plotutil's palette; lines sharing it share a colour.
	Color int
}

// Lines draws curves with markers on linear axes.
func Lines(title, xLabel, yLabel string, lines []Line) (*plot.Plot, error) {
	if len(lines) == 0 {
		return nil, errors.New("figure: no lines")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	for _, l := range lines {
		if len(l.X) != len(l.Y) {
			return nil, fmt.Errorf("figure: line %q has %d x and %d y", l.Name, len(l.X), len(l.Y))
		}
		if len(l.X) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(l.X))
		for i := range l.X {
			pts[i].X, pts[i].Y = l.X[i], l.Y[i]
		}
		line, scatter, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("figure: line %q: %w", l.Name, err)
		}
		c := plotutil.Color(l.Color)
		line.Color, scatter.Color = c, c
		scatter.Shape = plotutil.Shape(l.Color)
		if l.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			scatter.Color = color.Gray{Y: 120}
		}
		p.Add(line, scatter)
		p.Legend.Add(l.Name, line, scatter)
	}
	return p, nil
}

// Bars draws one bar per label with an error bar from lo to hi.
func Bars(title, yLabel string, labels []string, values, lo, hi []float64) (*plot.Plot, error) {
	if len(labels) != len(values) || len(lo) != len(values) || len(hi) != len(values) {
		return nil, errors.New("figure: bars: labels, values and intervals differ in length")
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = yLabel
	p.Add(plotter.NewGrid())
	bars, err := plotter.NewBarChart(plotter.Values(values), vg.Points(28))
	if err != nil {
		return nil, fmt.Errorf("figure: bars: %w", err)
	}
	bars.Color = plotutil.Color(0)
	p.Add(bars)
	errs := make(plotter.YErrors, len(values))
	pts := make(plotter.XYs, len(values))
	for i := range values {
		pts[i].X, pts[i].Y = float64(i), values[i]
		errs[i].Low, errs[i].High = values[i]-lo[i], hi[i]-values[i]
	}
	eb, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, errs})
	if err != nil {
		return nil, fmt.Errorf("figure: bars: %w", err)
	}
	p.Add(eb)
	p.NominalX(labels...)
	return p, nil
}
