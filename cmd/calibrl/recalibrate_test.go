package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// reproduce --recalibrate adds the recalibrated-interactive arm and its
// control: rows in the summary, their checkpoints and recalibration.json.
func TestReproduceRecalibrate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	out := mustRun(t, "reproduce", "--task", "mathchat", "--preset", "tiny", "--out", dir, "--recalibrate", "--json")
	var rows []struct {
		Arm string `json:"arm"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("reproduce --json: %v\n%s", err, out)
	}
	if len(rows) < 2 || rows[len(rows)-2].Arm != "recalibrated-interactive" || rows[len(rows)-1].Arm != "refit-control-interactive" {
		t.Fatalf("rows %+v: want the recalibrated arm, then its control, last", rows)
	}
	for _, f := range []string{"recalibration.json", "checkpoints/recalibrated-interactive/seed-1/model.safetensors",
		"checkpoints/recalibrated-interactive/rounds/seed-0/round-1/sim/model.safetensors", "recalibration/seed-1/round-1/human.episodes.jsonl",
		"checkpoints/refit-control-interactive/seed-1/model.safetensors", "checkpoints/refit-control-interactive/sim/seed-1/model.safetensors",
		"recalibration/seed-1/control/human.episodes.jsonl", "recalibration/seed-1/control/gap.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run folder lacks %s", f)
		}
	}
}
