package horizon

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteJSONKeys(t *testing.T) {
	res, err := RunSynthetic(quickConfig())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	for key, want := range map[string]float64{
		"static_slope":         res.Slopes.Static.Slope,
		"interactive_slope":    res.Slopes.Interactive.Slope,
		"simulator_slope":      res.Slopes.Simulator.Slope,
		"position_weight_corr": res.PositionCorr.Static,
	} {
		if v, ok := got[key].(float64); !ok || v != want {
			t.Errorf("%s: got %v, want %v", key, got[key], want)
		}
	}
	rows, ok := got["rows"].([]any)
	if !ok || len(rows) != len(res.Config.Horizons) {
		t.Errorf("rows: got %v, want %d rows", got["rows"], len(res.Config.Horizons))
	}
}

func TestWriteDir(t *testing.T) {
	res, err := RunSynthetic(quickConfig())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := res.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, PlotName+".png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("png: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 300 {
		t.Errorf("png size: got %dx%d, want at least 800x300", b.Dx(), b.Dy())
	}
	svg, err := os.ReadFile(filepath.Join(dir, PlotName+".svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("svg: got error %v, contains <svg %v", err, bytes.Contains(svg, []byte("<svg")))
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 16 |", "static", PlotName + ".png", "Pearson"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "result.json")); err != nil {
		t.Error(err)
	}
	// Nothing but the four files: the atomic writes left no temporaries.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("run folder: got %d entries, want 4", len(entries))
	}
}

func TestWriteText(t *testing.T) {
	res, err := RunSynthetic(quickConfig())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"static [bound]", "every gap within its bound: true", "95% CI", "Pearson corr(cost, H-i)", "Monte Carlo"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, b.String())
		}
	}
}

func TestGapPlotErrors(t *testing.T) {
	if _, err := GapPlot("x", nil); err == nil {
		t.Error("no series: got no error, want one")
	}
	if _, err := GapPlot("x", []Series{{Name: "a", H: []int{1, 2}, Gap: []float64{1, 0}}}); err == nil {
		t.Error("zero gap on log axes: got no error, want one")
	}
	if _, err := GapPlot("x", []Series{{Name: "a", H: []int{1, 2}, Gap: []float64{1}}}); err == nil {
		t.Error("length mismatch: got no error, want one")
	}
}
