package main

import (
	"encoding/json"
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
	for _, args := range [][]string{
		{"--task", "mathchat", "--preset", "huge"},
		{"--task", "chess", "--preset", "tiny", "--horizons", "2,3,4", "--out", t.TempDir()},
		{"--task", "mathchat", "--preset", "tiny", "--horizons", "4"},
		// --seeds as reproduce --pipelines takes them: at least two,
		// none twice, none negative.
		{"--task", "mathchat", "--preset", "tiny", "--horizons", "2,3", "--seeds", "1"},
		{"--task", "mathchat", "--preset", "tiny", "--horizons", "2,3", "--seeds", "1,1"},
		{"--task", "mathchat", "--preset", "tiny", "--horizons", "2,3", "--seeds", "-1,2"},
		{"--synthetic", "--seeds", "1,2"},
		{"--task", "mathchat", "--preset", "tiny", "--horizons", "2,3,4", "--iterations", "-1"},
		{"--synthetic", "--horizons", "2,x"},
		{"--synthetic", "--horizons", "2,4"},
		{"--synthetic", "--eps", "0"},
	} {
		if _, err := runHorizon(t, args...); err == nil {
			t.Errorf("%v: got no error, want one", args)
		}
	}
}

// The learned-model study on the tiny preset: a reproduce run per horizon,
// the gaps, the fits where there are enough positive gaps, the report.
func TestHorizonLearnedTiny(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hz")
	out, err := runHorizon(t, "--task", "mathchat", "--preset", "tiny", "--horizons", "2,3,4", "--json", "--out", dir)
	if err != nil {
		t.Fatalf("horizon (learned): %v\n%s", err, out)
	}
	var res struct {
		Horizons []int `json:"horizons"`
		Arms     []struct {
			Arm   string       `json:"arm"`
			Gap   []float64    `json:"gap"`
			GapCI [][2]float64 `json:"gap_ci95"`
		} `json:"arms"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(res.Arms) != 3 || len(res.Horizons) != 3 {
		t.Fatalf("got %d arms over %d horizons, want 3 over 3", len(res.Arms), len(res.Horizons))
	}
	for _, a := range res.Arms {
		if len(a.Gap) != 3 || len(a.GapCI) != 3 {
			t.Errorf("arm %s has %d gaps and %d intervals", a.Arm, len(a.Gap), len(a.GapCI))
		}
		for i, ci := range a.GapCI {
			if !(ci[0] <= a.Gap[i] && a.Gap[i] <= ci[1]) {
				t.Errorf("arm %s: gap %v outside its interval %v", a.Arm, a.Gap[i], ci)
			}
		}
	}
	for _, f := range []string{"report.md", "result.json", "h2/summary.json", "h3/summary.json", "h4/report.md",
		"shared/logs/mathchat_h2.jsonl", "shared/logs/mathchat_h4.jsonl", "shared/checkpoints/base/config.json", "shared/checkpoints/sim/config.json",
		"h3/checkpoints/static/seed-0/config.json", "h3/eval/base.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("study folder lacks %s", f)
		}
	}
	// One base policy and one simulator serve every horizon.
	for _, f := range []string{"h2/checkpoints/base", "h2/checkpoints/sim", "h3/logs.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("study folder has its own %s: want the shared one", f)
		}
	}
}

// The learned study with the simulator's own ledger on the tiny preset:
// every H plays the hH level with both ledgers, the shared simulator is
// fitted with the notes and says so, every arm plays it (a simulator
// fitted without them would be refused), and the notes, the oracle's, are
// in no file the study writes.
func TestHorizonLearnedUserLedgerTiny(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hz")
	if out, err := runHorizon(t, "--task", "mathchat:ledger:userledger", "--preset", "tiny", "--horizons", "2,4", "--out", dir); err != nil {
		t.Fatalf("horizon --task mathchat:ledger:userledger: %v\n%s", err, out)
	}
	meta, err := os.ReadFile(filepath.Join(dir, "shared", "checkpoints", "sim", "calibrl.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sim struct {
		Task      string `json:"task"`
		UserNotes bool   `json:"user_notes"`
	}
	if err := json.Unmarshal(meta, &sim); err != nil || !sim.UserNotes || !strings.HasSuffix(sim.Task, ":ledger:userledger") {
		t.Errorf("the shared simulator's calibrl.json (%v):\n%s", err, meta)
	}
	for _, h := range []string{"2", "4"} {
		manifest, err := os.ReadFile(filepath.Join(dir, "h"+h, "manifest.json"))
		if err != nil || !strings.Contains(string(manifest), `"mathchat:h`+h+`:ledger:userledger"`) {
			t.Errorf("H=%s: the run does not play mathchat:h%s:ledger:userledger (%v)", h, h, err)
		}
	}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") && !strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, ".md") {
			return err
		}
		if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), "Asked about:") {
			t.Errorf("%s holds the simulator's note", path)
		}
		return nil
	})
}
