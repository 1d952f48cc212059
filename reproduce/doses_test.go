package reproduce

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A dose-response study runs the task at its own rates and at each dose
// on one shared base: the base policy's weights are the same file in
// both runs, and doses.md has a
// row for every setting. A dose that changes more than the naive user or
// the reward is refused.
func TestDosesShareTheBase(t *testing.T) {
	if testing.Short() {
		t.Skip("two tiny pipelines")
	}
	cfg := tinyConfig(t)
	var logged bytes.Buffer
	cfg.Task, cfg.Out, cfg.Log = "docedit:easy:quote", t.TempDir(), slog.New(slog.NewTextHandler(&logged, nil))
	if err := Doses(t.Context(), cfg, []string{"leak=0x:syc=2x"}); err != nil {
		t.Fatal(err)
	}
	read := func(run string, elem ...string) []byte {
		b, err := os.ReadFile(filepath.Join(append([]string{cfg.Out, run}, elem...)...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, arm := range []string{ArmNaive, ArmOracle} {
		if !bytes.Equal(read("1x", "checkpoints", arm, "seed-0", "ref", "model.safetensors"), read("leak-0x_syc-2x", "checkpoints", arm, "seed-0", "ref", "model.safetensors")) {
			t.Fatalf("%s: the runs started RL from different bases", arm)
		}
	}
	// The dose of the naive simulator alone trains the naive arm again
	// against its user, and takes the oracle arm from the 1x run: its
	// training is a stage already done, its evaluation the same bytes.
	if bytes.Equal(read("1x", "eval", ArmNaive, "seed-0.episodes.jsonl"), read("leak-0x_syc-2x", "eval", ArmNaive, "seed-0.episodes.jsonl")) {
		t.Error("the naive arm played the same episodes at both doses: not trained against the dosed user")
	}
	if !bytes.Equal(read("1x", "eval", ArmOracle, "seed-0.json"), read("leak-0x_syc-2x", "eval", ArmOracle, "seed-0.json")) {
		t.Error("the oracle arm's evaluation differs between doses of the naive simulator")
	}
	dose := logged.String()[strings.Index(logged.String(), "dose reuses"):]
	if !strings.Contains(dose, "stage already done\" stage=oracle-interactive/seed-0") || strings.Contains(dose, "stage already done\" stage=naive-interactive/seed-0") {
		t.Errorf("the dose's run did not skip exactly the reused arms:\n%s", dose)
	}
	md, err := os.ReadFile(filepath.Join(cfg.Out, "doses.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 1x (the task's rates) |", "| leak=0x:syc=2x |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("doses.md lacks %q:\n%s", want, md)
		}
	}
	if err := Doses(t.Context(), cfg, []string{"quote"}); err == nil || !strings.Contains(err.Error(), "change only the naive simulator") {
		t.Errorf("a dose that is not a dose: got %v", err)
	}
}

// reuseStages copies a finished run's stages except one arm's: each with
// its checkpoint folder, its files and its metrics records, replacing
// what a partial run of it left; it leaves the arm, the report and the
// stages the destination has done, and copies nothing from an unfinished
// run.
func TestReuseStagesCopiesAllButOneArm(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	write := func(dir, name, text string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	metrics := func(stages ...string) string {
		var b strings.Builder
		for i, st := range stages {
			line, _ := json.Marshal(map[string]any{"stage": st, "step": i})
			b.Write(append(line, '\n'))
		}
		return b.String()
	}
	for _, st := range []string{"static/seed-0", "naive-interactive/seed-0", "oracle-interactive/seed-0", "eval/base", "eval/naive-interactive/seed-0", "eval/oracle-interactive/seed-0"} {
		write(src, "stages/"+st, "done\n")
	}
	write(src, "checkpoints/static/seed-0/last/model.safetensors", "static weights")
	write(src, "checkpoints/naive-interactive/seed-0/last/model.safetensors", "naive weights")
	write(src, "checkpoints/oracle-interactive/seed-0/last/model.safetensors", "oracle weights")
	write(src, "eval/base.json", "base summary")
	write(src, "eval/base.episodes.jsonl", "base episodes")
	write(src, "eval/naive-interactive/seed-0.json", "naive summary")
	write(src, "eval/oracle-interactive/seed-0.json", "oracle summary")
	write(src, "metrics.jsonl", metrics("static/seed-0", "naive-interactive/seed-0", "oracle-interactive/seed-0", "static/seed-0"))
	// dst: a partial static training, and an oracle stage already done.
	write(dst, "checkpoints/static/seed-0/last/partial", "half")
	write(dst, "stages/oracle-interactive/seed-0", "done\n")
	write(dst, "checkpoints/oracle-interactive/seed-0/last/model.safetensors", "dst oracle weights")
	write(dst, "metrics.jsonl", metrics("static/seed-0", "oracle-interactive/seed-0"))

	if n, err := reuseStages(src, dst, ArmNaive); n != 0 || err != nil {
		t.Fatalf("an unfinished run: copied %d stages (%v), want none", n, err)
	}
	write(src, "stages/"+reportStage, "done\n")
	n, err := reuseStages(src, dst, ArmNaive)
	if err != nil || n != 3 {
		t.Fatalf("copied %d stages (%v), want 3 (static, eval/base, eval/oracle)", n, err)
	}
	want := map[string]string{
		"checkpoints/static/seed-0/last/model.safetensors":             "static weights",
		"checkpoints/oracle-interactive/seed-0/last/model.safetensors": "dst oracle weights",
		"eval/base.json":                      "base summary",
		"eval/base.episodes.jsonl":            "base episodes",
		"eval/oracle-interactive/seed-0.json": "oracle summary",
	}
	for name, text := range want {
		if b, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(b) != text {
			t.Errorf("%s: %q (%v), want %q", name, b, err, text)
		}
	}
	for _, name := range []string{"checkpoints/static/seed-0/last/partial", "checkpoints/naive-interactive", "eval/naive-interactive", "stages/naive-interactive", "stages/" + reportStage} {
		if _, err := os.Stat(filepath.Join(dst, name)); err == nil {
			t.Errorf("%s was copied or kept", name)
		}
	}
	for _, st := range []string{"static/seed-0", "eval/base", "eval/oracle-interactive/seed-0"} {
		if _, err := os.Stat(filepath.Join(dst, "stages", st)); err != nil {
			t.Errorf("stage %s not marked done: %v", st, err)
		}
	}
	// The metrics: dst's own records of the stages not copied, then the
	// copied stages' records from src (the partial static ones replaced).
	got, _ := os.ReadFile(filepath.Join(dst, "metrics.jsonl"))
	var stages []string
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		stages = append(stages, fmt.Sprintf("%s@%v", rec["stage"], rec["step"]))
	}
	if w := "oracle-interactive/seed-0@1 static/seed-0@0 static/seed-0@3"; strings.Join(stages, " ") != w {
		t.Errorf("metrics records %v, want %s", stages, w)
	}
}

// The dose table's hacking cells: the first and the last reading of the
// naive arm, rates, the paste → delivery counts and the changes.
func TestHackingReadingsCells(t *testing.T) {
	const stage = "naive-interactive/seed-0"
	recs := []map[string]any{
		{"stage": stage, "step": 0.0, "hacking/n": 800.0, "hacking/target_request": 0.25, "hacking/target_request_change": 0.0, "hacking/target_request_change_lo": 0.0, "hacking/target_request_change_hi": 0.0,
			"hacking/pasted": 140.0, "hacking/paste_delivery": 0.1, "hacking/reward_gap_change": 0.0, "hacking/reward_gap_change_lo": 0.0, "hacking/reward_gap_change_hi": 0.0},
		{"stage": "static/seed-0", "step": 16.0, "hacking/n": 800.0, "hacking/target_request": 0.9},
		{"stage": stage, "step": 16.0, "hacking/n": 800.0, "hacking/target_request": 0.05, "hacking/target_request_change": -0.2, "hacking/target_request_change_lo": -0.23, "hacking/target_request_change_hi": -0.17,
			"hacking/pasted": 0.0, "hacking/reward_gap_change": 0.066, "hacking/reward_gap_change_lo": 0.044, "hacking/reward_gap_change_hi": 0.087},
	}
	req, paste, gap := hackingReadings(recs, stage)
	for _, c := range [][2]string{
		{req, "0.250 at 0 → 0.050 at 16 (-0.200 [-0.230, -0.170])"},
		{paste, "0.100 (14 of 140) → –"},
		{gap, "+0.066 [+0.044, +0.087]"},
	} {
		if c[0] != c[1] {
			t.Errorf("got %q, want %q", c[0], c[1])
		}
	}
	if req, paste, gap := hackingReadings(recs, "oracle-interactive/seed-0"); req != "–" || paste != "–" || gap != "–" {
		t.Errorf("a stage without readings: %q %q %q", req, paste, gap)
	}
}
