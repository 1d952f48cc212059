package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runHorizon executes `calibrl horizon args...` in-process.
func runHorizon(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return run(t, append([]string{"horizon"}, args...)...)
}

func TestHorizonSyntheticJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	out, err := runHorizon(t, "--synthetic", "--json", "--horizons", "2,3,4", "--episodes", "200", "--seed", "3", "--out", dir)
	if err != nil {
		t.Fatalf("horizon --synthetic: %v\n%s", err, out)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	for _, key := range []string{"static_slope", "interactive_slope", "position_weight_corr", "rows"} {
		if _, ok := got[key]; !ok {
			t.Errorf("--json output lacks %q", key)
		}
	}
	if c, _ := got["position_weight_corr"].(float64); c <= 0.99 {
		t.Errorf("position_weight_corr: got %v, want > 0.99", got["position_weight_corr"])
	}
	for _, name := range []string{"report.md", "horizon_synthetic.png", "horizon_synthetic.svg"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("--out: %v", err)
		}
	}
}

func TestHorizonSyntheticText(t *testing.T) {
	out, err := runHorizon(t, "--synthetic", "--horizons", "2,4,8", "--episodes", "0")
	if err != nil {
		t.Fatalf("horizon --synthetic: %v\n%s", err, out)
	}
	for _, want := range []string{"static [bound]", "95% CI", "Pearson"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestHorizonErrors(t *testing.T) {
	if _, err := runHorizon(t, "--task", "mathchat"); !errors.Is(err, errNeedsArms) {
		t.Errorf("without --synthetic: got %v, want errNeedsArms", err)
	}
	for _, args := range [][]string{
		{"--synthetic", "--horizons", "2,x"},
		{"--synthetic", "--horizons", "2,4"},
		{"--synthetic", "--eps", "0"},
	} {
		if _, err := runHorizon(t, args...); err == nil {
			t.Errorf("%v: got no error, want one", args)
		}
	}
}
