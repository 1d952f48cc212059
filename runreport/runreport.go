// Package runreport renders a reproduce run folder as report.html: one
// self-contained page (inline CSS and SVG, no script, nothing fetched: its
// Content-Security-Policy forbids every load) with the verdict on the
// paper's claims, each arm's figures and the spread of its RL seeds, the
// training curves on axes fitted to their data, the simulator's fidelity
// when the run measured it (fidelity/), and the same held-out problems
// under every arm side by side with the users' dialogue acts marked.
//
// It reads the folder's files by their JSON names (summary.json,
// manifest.json, metrics.jsonl, eval/**/*.episodes.jsonl, fidelity/**), so
// it renders any finished run, old or new, and does not import the
// package that writes them. Every text from the run goes through
// html/template, so a transcript that contains markup shows it as text.
package runreport

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/summary"
)

// File is the report's name in the run folder, beside report.md.
const File = "report.html"

// Report is everything the page shows, read from one run folder.
type Report struct {
	Dir string
	// Task, Preset and Seed come from manifest.json ("" when absent).
	Task, Preset, Seed string
	Command            string
	Started, Version   string
	Sets               []SetView
	Curves             []CurveRow
	Metrics            []Metric
	Fidelity           []FidelityFile
	// Gaps are the sim-to-real gaps of the run's policies (fidelity/),
	// GapDelta their δ_t.
	Gaps        []SimToReal
	GapDelta    *LineChart
	Transcripts []TranscriptSet
}

// SetView is one evaluation set laid out for the page.
type SetView struct {
	Set
	Title, Measure string
	Verdict        []VerdictRow
	Spread         *SpreadChart
	// MaxSeeds is the largest number of RL seeds of an arm: the spread
	// table's seed columns.
	MaxSeeds int
}

// VerdictRow is one claim of the verdict table.
type VerdictRow struct {
	Comparison
	// Here is the two arms' figures in this run; Verdict says whether the
	// claim holds, and how it fails ("reversed" when the interval is
	// below 0); Class styles the row.
	Here, Verdict, Class string
}

// Load reads the run folder dir. It needs summary.json; every other part
// of the report is skipped when its files are absent.
func Load(dir string) (*Report, error) {
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		return nil, fmt.Errorf("runreport: %s is not a finished run: %w", dir, err)
	}
	// summary.json is the primary evaluation; summary-NAME.json (reproduce
	// writes summary-greedy.json) are secondary ones.
	files, _ := filepath.Glob(filepath.Join(dir, "summary-*.json"))
	sort.Strings(files)
	var sets []Set
	for _, file := range append([]string{filepath.Join(dir, "summary.json")}, files...) {
		rows, err := summary.Read(file)
		if err != nil {
			return nil, fmt.Errorf("runreport: %w", err)
		}
		set := Set{Rows: rows}
		if base := filepath.Base(file); base != "summary.json" {
			set.Name = strings.TrimSuffix(strings.TrimPrefix(base, "summary-"), ".json")
		}
		sets = append(sets, set)
	}
	rep := &Report{Dir: dir, Metrics: Metrics}
	primary := sets[0].Decoding()
	if rep.manifest(dir) && primary == "" {
		primary = "greedy"
		sets[0].Notes = append(sets[0].Notes, "decoding: greedy (this run was made before reproduce evaluated the policies sampled at the RL temperature)")
	}
	var arms []string
	for _, row := range sets[0].Rows {
		arms = append(arms, row.Arm)
	}
	for _, s := range sets {
		rep.Sets = append(rep.Sets, view(s))
	}
	recs, err := (&runfolder.Folder{Dir: dir}).ReadMetrics()
	if err != nil {
		return nil, fmt.Errorf("runreport: %w", err)
	}
	rep.Curves = curveRows(recs, arms)
	if rep.Fidelity, rep.Gaps, err = fidelityFiles(dir, arms); err != nil {
		return nil, err
	}
	rep.GapDelta = gapChart(rep.Gaps)
	if rep.Transcripts, err = transcriptSets(dir, arms); err != nil {
		return nil, err
	}
	for i := range rep.Transcripts {
		ts := &rep.Transcripts[i]
		switch {
		case ts.Dir == "fidelity":
			ts.Title = "Against the calibrated simulator (the fidelity stage's conversations)"
		case ts.Dir == "eval" && primary == "":
			ts.Title = "Against the human proxy"
		case ts.Dir == "eval":
			ts.Title = "Against the human proxy, decoded " + primary
		default:
			ts.Title = "Against the human proxy, decoded " + strings.TrimPrefix(ts.Dir, "eval-")
		}
	}
	return rep, nil
}

// manifest fills the run's identity from manifest.json, if it is there,
// and reports whether the run predates sampled evaluations (its
// configuration names no "eval_decodings": its eval/ is greedy).
func (r *Report) manifest(dir string) (greedyOnly bool) {
	var m struct {
		Command []string       `json:"command"`
		Config  map[string]any `json:"config"`
		Seed    *uint64        `json:"seed"`
		Version string         `json:"version"`
		Started string         `json:"started"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil || json.Unmarshal(data, &m) != nil {
		return false
	}
	if len(m.Command) > 0 {
		r.Command = "calibrl " + strings.Join(m.Command[1:], " ")
	}
	if t, ok := m.Config["task"].(string); ok {
		r.Task = t
	}
	if p, ok := m.Config["preset"].(string); ok {
		r.Preset = p
	}
	if m.Seed != nil {
		r.Seed = fmt.Sprint(*m.Seed)
	}
	r.Version = m.Version
	if !strings.HasPrefix(m.Started, "0001-") { // the zero time of a manifest that did not set it
		r.Started = m.Started
	}
	_, has := m.Config["eval_decodings"]
	return m.Config != nil && !has
}

// view lays out a set: its claims in the order of its rows, its spread.
func view(s Set) SetView {
	v := SetView{Set: s, Title: "Held-out evaluation", Measure: "success"}
	switch {
	case s.Decoding() != "":
		v.Title += ", " + s.Decoding()
	case s.Name != "":
		v.Title += ", " + s.Name
	}
	if s.BLEU() {
		v.Measure = "BLEU"
	}
	byArm := map[string]Row{}
	for _, row := range s.Rows {
		byArm[row.Arm] = row
		v.MaxSeeds = max(v.MaxSeeds, len(row.Seeds))
	}
	for _, row := range s.Rows {
		for _, c := range row.Comparisons {
			vr := VerdictRow{Comparison: c, Here: "–", Verdict: "yes", Class: "holds"}
			if other, ok := byArm[c.Than]; ok {
				vr.Here = fmt.Sprintf("%.3f vs %.3f", row.Value(), other.Value())
			}
			switch {
			case c.Holds:
			case c.CI95[1] < 0:
				vr.Verdict, vr.Class = "no: reversed (interval below 0)", "reversed"
			default:
				vr.Verdict, vr.Class = "no (interval includes 0)", "open"
			}
			v.Verdict = append(v.Verdict, vr)
		}
	}
	v.Spread = newSpreadChart(s, v.Measure)
	return v
}

// Render writes the report of run folder dir to w.
func Render(w io.Writer, dir string) error {
	rep, err := Load(dir)
	if err != nil {
		return err
	}
	return page.Execute(w, rep)
}

// Write renders dir's report into dir/report.html (File).
func Write(dir string) error { return WriteFile(dir, filepath.Join(dir, File)) }

// WriteFile renders dir's report into path, atomically: a reader sees the
// old page or the whole new one, never part of it.
func WriteFile(dir, path string) error {
	rep, err := Load(dir)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return page.Execute(w, rep) }); err != nil {
		return fmt.Errorf("runreport: %w", err)
	}
	return nil
}

//go:embed report.html.tmpl
var templates embed.FS

var page = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
	"f3":     func(v float64) string { return fmtNum(v, "%.3f") },
	"f2":     func(v float64) string { return fmtNum(v, "%.2f") },
	"f1":     func(v float64) string { return fmtNum(v, "%.1f") },
	"signed": func(v float64) string { return fmtNum(v, "%+.3f") },
	"opt": func(p *float64) string {
		if p == nil {
			return "–"
		}
		return fmtNum(*p, "%.3f")
	},
	"optSigned": func(p *float64) string {
		if p == nil {
			return "–"
		}
		return fmtNum(*p, "%+.3f")
	},
	"seedCell": func(seeds []SeedRow, k int) string {
		for _, s := range seeds {
			if s.Seed == k {
				return fmtNum(s.Value(), "%.3f")
			}
		}
		return "–"
	},
	"seq": func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	},
	"signedList": func(xs []float64) string {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = fmtNum(x, "%+.3f")
		}
		return strings.Join(parts, ", ")
	},
	"ratePct":   func(v float64) string { return fmtNum(100*v, "%.0f%%") },
	"half":      func(v float64) float64 { return v / 2 },
	"add":       func(a, b float64) float64 { return a + b },
	"yLabelX":   func() float64 { return yLabelX },
	"meanColor": func() string { return meanColor },
}).ParseFS(templates, "report.html.tmpl"))

// fmtNum formats v, or a dash for a missing (NaN) figure.
func fmtNum(v float64, format string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf(format, v)
}
