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

// Field is one scalar of a JSON document, named by its path.
type Field struct {
	Path, Value string
}

// maxFields bounds a generic JSON file's table: a report, not a dump.
const maxFields = 400

// fidelityFiles reads dir/fidelity/**; a run without it has none.
func fidelityFiles(dir string) ([]FidelityFile, error) {
	root := filepath.Join(dir, "fidelity")
	if _, err := os.Stat(root); err != nil {
		return nil, nil // a run made without the fidelity stage
	}
	var out []FidelityFile
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
	return out, err
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
	return newLineChart("δ_t: act distance to the human proxy by user turn", "user turn", lines, nil)
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
