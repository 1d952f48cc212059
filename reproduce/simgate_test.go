package reproduce

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The gate runs before RL in every run: the tiny run's folder holds its
// record (the calibrated and the naive simulator measured on the same
// validation histories) and the report its section, whose verdict is the
// record's.
func TestSimGateRecordAndReport(t *testing.T) {
	out, _ := wholeRun(t)
	var rec SimFidelity
	data, err := os.ReadFile(filepath.Join(out, simGateFile+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Sim.Histories == 0 || rec.Sim.Histories != rec.Naive.Histories || rec.Mode != SimGateWarn || rec.Bound != DefaultSimGateBound {
		t.Fatalf("gate record %+v: want both simulators on the same histories, warn mode, the default bound", rec)
	}
	if rec.Pass != (rec.Sim.Excess <= rec.Bound) {
		t.Errorf("pass %v with excess %.3f and bound %.3f", rec.Pass, rec.Sim.Excess, rec.Bound)
	}
	t.Logf("tiny seed 3: calibrated %s; naive %s", rec.Sim, rec.Naive)
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "within the gate's bound"
	if !rec.Pass {
		want = "outside the gate's bound"
	}
	if !strings.Contains(string(report), "## Simulator fidelity before RL") || !strings.Contains(string(report), want) {
		t.Errorf("report lacks the gate's section saying %q", want)
	}
}

// In refuse mode a simulator outside the bound stops the run before any
// arm trains; the record is written all the same.
func TestSimGateRefusesBeforeRL(t *testing.T) {
	whole, _ := wholeRun(t)
	dir := t.TempDir()
	// The stages before the gate, from the whole run.
	for _, p := range []string{"manifest.json", "logs.jsonl", "tokenizer.json", "checkpoints/base", "checkpoints/sim",
		"stages/collect", "stages/tokenizer", "stages/base", "stages/sim"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-r", filepath.Join(whole, p), filepath.Join(dir, p)).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v %s", p, err, out)
		}
	}
	cfg := tinyConfig(t)
	cfg.Out = dir
	cfg.SimGate = SimGate{Mode: SimGateRefuse, Bound: 1e-9, Conversations: 8, Samples: 4}
	_, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrSimGate) {
		t.Fatalf("refuse mode with a bound no simulator meets: %v, want ErrSimGate", err)
	}
	if _, err := os.Stat(filepath.Join(dir, simGateFile+".json")); err != nil {
		t.Errorf("no gate record: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "checkpoints"))
	for _, e := range entries {
		if e.Name() != "base" && e.Name() != "sim" {
			t.Errorf("checkpoints/%s: an arm trained past the gate", e.Name())
		}
	}
	cfg.SimGate.Mode = "strict"
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "sim gate") {
		t.Errorf("unknown gate mode: %v, want an error naming the sim gate", err)
	}
}
