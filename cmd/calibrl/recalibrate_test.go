package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
	// The recalibration budget's flags: refused without --recalibrate,
	// validated against the RL budget, and kept by the run folder.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--recal-rounds", "2"}, "--recal-rounds sets the recalibrated arm's budget: it needs --recalibrate"},
		{[]string{"--recalibrate", "--recal-rounds", "3"}, "recalibration: 3 rounds of 2 RL iterations, want 1 to 2"},
		{[]string{"--recalibrate", "--recal-gap", "6"}, "was started with recalibration {Rounds:"},
	} {
		args := append([]string{"reproduce", "--task", "mathchat", "--preset", "tiny", "--out", dir}, c.args...)
		if _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
