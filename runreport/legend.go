package runreport

import (
	"strings"
	"unicode/utf8"
)

// Every chart carries its own visible title, axis labels and legend inside
// its SVG (class "chart-title", "axis-label x", "axis-label y", "legend"
// with one "legend-entry" per series), so that a chart read alone, copied
// or screenshotted, says what it plots; scripts/check-report-html.sh
// checks each in the page Chromium renders. SVG text does not wrap, so the
// layout here estimates text widths.

// charW is the width, in SVG user units, of an average character of the
// charts' 11px sans-serif text, a little generous so that estimated text
// ends before the real one would.
const charW = 6.4

// Text widths and line heights of a chart's visible text, in user units.
const (
	titleLineH   = 14
	legendRowH   = 15
	legendSwatch = 18 // the sample line's length, then a gap before its name
	legendGap    = 14 // between two entries of a row
)

// TextLine is one line of a chart's title.
type TextLine struct {
	Y    float64
	Text string
}

// LegendEntry names one series, beside a sample of its mark: Mark is
// "line" (a line chart's series), "bar" (a spread chart's mean and
// interval) or "circle" (a spread chart's seed).
type LegendEntry struct {
	X, Y   float64
	Name   string
	Color  string
	Dashed bool
	Mark   string
}

// textWidth estimates the width of s in the charts' text.
func textWidth(s string) float64 { return charW * float64(utf8.RuneCountInString(s)) }

// wrapTitle splits title into lines no wider than width, at spaces; a
// word wider than width gets a line of its own.
func wrapTitle(title string, width float64) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(title) {
		switch {
		case line == "":
			line = w
		case textWidth(line+" "+w) <= width:
			line += " " + w
		default:
			lines, line = append(lines, line), w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// titleLines lays out title's lines from the chart's top, centred at the
// caller's x; it returns them and the y below the last.
func titleLines(title string, width float64) ([]TextLine, float64) {
	var out []TextLine
	y := 0.0
	for _, l := range wrapTitle(title, width) {
		y += titleLineH
		out = append(out, TextLine{Y: y, Text: l})
	}
	return out, y
}

// layoutLegend places entries in rows from (x0, y0), starting a new row
// where an entry would pass x1; it returns the y of the last row.
func layoutLegend(entries []LegendEntry, x0, x1, y0 float64) float64 {
	x, y := x0, y0
	for i := range entries {
		w := legendSwatch + textWidth(entries[i].Name)
		if x > x0 && x+w > x1 {
			x, y = x0, y+legendRowH
		}
		entries[i].X, entries[i].Y = x, y
		x += w + legendGap
	}
	return y
}
