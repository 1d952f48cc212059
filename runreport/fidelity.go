package runreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/calibrl/calibrl/fidelity"
	"github.com/calibrl/calibrl/summary"
)

// FidelityFile is one file of the run's fidelity/ folder: a simulator's
// fidelity reports (fidelity.Report, alone or as an array), rendered as
// tables and a δ_t chart, or any other JSON, rendered as its numbers and
// strings by path, or text (.md, .txt) shown as written.
type FidelityFile struct {
	Name    string
	Reports []fidelity.Report
	Delta   *LineChart
	Fields  []Field
	Text    string
}

// SimToReal is one policy's sim-to-real gap (summary.SimToReal).
type SimToReal = summary.SimToReal

// simToReal decodes data as a SimToReal record: an object with an arm and
// both scores.
func simToReal(data []byte) (SimToReal, bool) {
	var g SimToReal
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil {
		return g, false
	}
	for _, k := range []string{"arm", "sim_score", "human_score", "gap"} {
		if _, ok := raw[k]; !ok {
			return g, false
		}
	}
	return g, json.Unmarshal(data, &g) == nil
}

// gapChart draws δ_t under each arm's policy (its lowest seed index).
func gapChart(gaps []SimToReal) *LineChart {
	var lines []Line
	seen := map[string]bool{}
	for _, g := range gaps {
		if seen[g.Arm] || len(g.Delta) == 0 {
			continue
		}
		seen[g.Arm] = true
		l := Line{Name: fmt.Sprintf("%s seed %d", g.Arm, g.Seed), Color: color(len(lines))}
		for t, d := range g.Delta {
			l.X, l.Y = append(l.X, float64(t)), append(l.Y, d)
		}
		lines = append(lines, l)
	}
	c := newLineChart("δ_t between the simulator and the human proxy under each policy", "user turn", "δ_t (act distance)", lines, nil)
	if c != nil {
		c.Class = "chart fidelity"
	}
	return c
}

// Field is one scalar of a JSON document, named by its path.
type Field struct {
	Path, Value string
}

// maxFields bounds a generic JSON file's table: a report, not a dump.
const maxFields = 400

// fidelityFiles reads dir/fidelity/**: the sim-to-real gaps of the
// policies, in the order of arms and then by seed, and every other file; a
// run without the folder has none.
func fidelityFiles(dir string, arms []string) ([]FidelityFile, []SimToReal, error) {
	root := filepath.Join(dir, "fidelity")
	if _, err := os.Stat(root); err != nil {
		return nil, nil, nil // a run made without the fidelity stage
	}
	var out []FidelityFile
	var gaps []SimToReal
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err // temporaries of an atomic write start with a dot
		}
		ext := filepath.Ext(path)
		if ext != ".json" && ext != ".md" && ext != ".txt" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		f := FidelityFile{Name: filepath.ToSlash(rel)}
		if g, ok := simToReal(data); ok && ext == ".json" {
			gaps = append(gaps, g)
			return nil
		}
		if ext != ".json" {
			f.Text = string(data)
		} else if reps, ok := fidelityReports(data); ok {
			f.Reports = reps
			f.Delta = deltaChart(reps)
		} else {
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				return fmt.Errorf("runreport: %s: %w", rel, err)
			}
			flatten("", v, &f.Fields)
			if len(f.Fields) > maxFields {
				f.Fields = append(f.Fields[:maxFields], Field{"…", fmt.Sprintf("%d more fields", len(f.Fields)-maxFields)})
			}
		}
		out = append(out, f)
		return nil
	})
	rank := map[string]int{}
	for i, a := range arms {
		rank[a] = i + 1
	}
	sort.SliceStable(gaps, func(i, j int) bool {
		ri, rj := rank[gaps[i].Arm], rank[gaps[j].Arm]
		if ri == 0 {
			ri = len(arms) + 1 // arms the summary does not name go last
		}
		if rj == 0 {
			rj = len(arms) + 1
		}
		if ri != rj {
			return ri < rj
		}
		if gaps[i].Arm != gaps[j].Arm {
			return gaps[i].Arm < gaps[j].Arm
		}
		return gaps[i].Seed < gaps[j].Seed
	})
	return out, gaps, err
}

// fidelityReports decodes data as fidelity reports: an object or array of
// objects that each name their simulator and carry δ̄.
func fidelityReports(data []byte) ([]fidelity.Report, bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, false
	}
	if data[0] == '{' {
		data = append(append([]byte{'['}, data...), ']')
	}
	var raws []map[string]json.RawMessage
	if json.Unmarshal(data, &raws) != nil || len(raws) == 0 {
		return nil, false
	}
	for _, r := range raws {
		_, sim := r["sim"]
		_, delta := r["delta_mean"]
		if !sim || !delta {
			return nil, false
		}
	}
	var reps []fidelity.Report
	if json.Unmarshal(data, &reps) != nil {
		return nil, false
	}
	return reps, true
}

// deltaChart draws each report's δ_t against the user turn t.
func deltaChart(reps []fidelity.Report) *LineChart {
	var lines []Line
	for i, r := range reps {
		l := Line{Name: r.Sim, Color: color(i)}
		for t, d := range r.Delta {
			l.X, l.Y = append(l.X, float64(t)), append(l.Y, d)
		}
		lines = append(lines, l)
	}
	c := newLineChart("δ_t: act distance to the human proxy by user turn", "user turn", "δ_t (act distance)", lines, nil)
	if c != nil {
		c.Class = "chart fidelity"
	}
	return c
}

// flatten appends v's scalars to out, objects' keys in order, each named
// by its path ("agents.careful.gap", "delta[2]").
func flatten(path string, v any, out *[]Field) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, v[k], out)
		}
	case []any:
		for i, x := range v {
			flatten(fmt.Sprintf("%s[%d]", path, i), x, out)
		}
	case float64:
		*out = append(*out, Field{path, fmt.Sprintf("%.4g", v)})
	case nil:
		*out = append(*out, Field{path, "–"})
	default:
		*out = append(*out, Field{path, fmt.Sprint(v)})
	}
}

// AgentNames lists the agents of a file's reports, sorted.
func (f FidelityFile) AgentNames() []string {
	seen := map[string]bool{}
	for _, r := range f.Reports {
		for a := range r.Agents {
			seen[a] = true
		}
	}
	names := make([]string, 0, len(seen))
	for a := range seen {
		names = append(names, a)
	}
	sort.Strings(names)
	return names
}
