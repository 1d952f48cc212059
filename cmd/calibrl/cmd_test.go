package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run executes `calibrl args...` in-process and returns what it printed.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("calibrl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func TestEvalJSONAndDeterminism(t *testing.T) {
	args := []string{"eval", "--task", "mathchat", "--agent", "scripted:careful", "--user", "human", "-n", "40", "--seed", "3", "--json"}
	first := mustRun(t, args...)
	var s map[string]any
	if err := json.Unmarshal([]byte(first), &s); err != nil {
		t.Fatalf("eval --json is not one JSON object: %v\n%s", err, first)
	}
	for _, k := range []string{"task", "agent", "user", "split", "episodes", "success", "success_ci95", "reward", "turns", "tokens"} {
		if _, ok := s[k]; !ok {
			t.Errorf("eval --json lacks %q", k)
		}
	}
	if s["episodes"].(float64) != 40 || s["split"] != "test" {
		t.Fatalf("episodes %v split %v", s["episodes"], s["split"])
	}
	if again := mustRun(t, append(args, "--workers", "1")...); again != first {
		t.Fatalf("same seed and flags, one worker: output differs\n%s\n%s", first, again)
	}
	other := mustRun(t, "eval", "--task", "mathchat", "--agent", "scripted:guesser", "--user", "naive", "-n", "40", "--seed", "3", "--json")
	if other == first {
		t.Fatal("a different agent and user gave the same output")
	}
}

func TestBadInputIsAOneLineError(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n{oops\n"), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown task", []string{"eval", "--task", "chess"}, `unknown task "chess"`},
		{"unknown agent", []string{"eval", "--agent", "scripted:wizard", "-n", "1"}, "wizard"},
		{"unknown agent kind", []string{"eval", "--agent", "robot", "-n", "1"}, `unknown agent "robot"`},
		{"unknown user", []string{"eval", "--user", "alien", "-n", "1"}, `unknown user "alien"`},
		{"zero episodes", []string{"eval", "-n", "0"}, "-n must be positive"},
		{"bad split", []string{"eval", "--split", "dev", "-n", "1"}, `unknown split "dev"`},
		{"unwritable output", []string{"collect", "-n", "2", "--out", filepath.Join(dir, "missing", "logs.jsonl")}, "cannot write"},
		{"malformed logs", []string{"train-sim", "--logs", bad, "--out", filepath.Join(dir, "sim"), "--preset", "tiny"}, bad + `:1: field "task": missing`},
		{"missing checkpoint", []string{"eval", "--agent", "lm:" + filepath.Join(dir, "nope"), "-n", "1"}, "nope"},
		{"unknown preset", []string{"reproduce", "--preset", "huge", "--out", filepath.Join(dir, "r")}, `unknown preset "huge"`},
		{"unknown static reward", []string{"reproduce", "--preset", "tiny", "--static-reward", "outcome,acceptance", "--out", filepath.Join(dir, "r")}, `--static-reward: static reward "acceptance", want outcome, continuation, behaviour`},
		{"static reward twice", []string{"reproduce", "--preset", "tiny", "--static-reward", "continuation,outcome,continuation", "--out", filepath.Join(dir, "r")}, "--static-reward: static reward continuation given twice"},
		{"unknown optimizer", []string{"reproduce", "--preset", "tiny", "--optimizers", "grpo,ppo", "--out", filepath.Join(dir, "r")}, `--optimizers: optimizer "ppo", want one of grpo, rft, grpo-greedy-baseline, grpo-turn-credit`},
		{"optimizers without grpo", []string{"reproduce", "--preset", "tiny", "--optimizers", "rft", "--out", filepath.Join(dir, "r")}, "--optimizers: optimizers rft leave out grpo"},
		{"unknown precision", []string{"eval", "--precision", "fp16", "-n", "1"}, `--precision: precision "fp16": want fp32 or bf16`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(t, c.args...)
			if err == nil {
				t.Fatalf("want an error, got success:\n%s", out)
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q: want one line containing %q", msg, c.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatal("a failed collect left a folder behind")
	}
}

func TestCollectWritesLogs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "logs.jsonl")
	mustRun(t, "collect", "--agent", "scripted:careful,guesser", "-n", "7", "--seed", "2", "--out", out)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 7 {
		t.Fatalf("got %d episodes, want 7", len(lines))
	}
	if !strings.Contains(lines[0], `"agent":"scripted:careful"`) || !strings.Contains(lines[6], `"agent":"scripted:guesser"`) {
		t.Fatal("profiles not shared out between the episodes")
	}
	if !strings.Contains(lines[0], `"oracle"`) {
		t.Fatal("logs lack the oracle context")
	}
}

// The whole Phase I path on the tiny preset: collect, calibrate, play the
// learned user, measure its fidelity.
func TestTrainSimAndFidelityTiny(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.jsonl")
	sim := filepath.Join(dir, "sim")
	mustRun(t, "collect", "--agent", "scripted:careful,sloppy,guesser,answer-seeker", "-n", "40", "--out", logs)
	trained := mustRun(t, "train-sim", "--logs", logs, "--out", sim, "--preset", "tiny", "--select-conversations", "8", "--select-samples", "4")
	if !strings.Contains(trained, "per-history excess") {
		t.Errorf("train-sim (--select fidelity by default) does not report the kept weights' fidelity:\n%s", trained)
	}
	if _, err := run(t, "train-sim", "--logs", logs, "--out", filepath.Join(dir, "sim-x"), "--preset", "tiny", "--select", "loss"); err == nil || !strings.Contains(err.Error(), "--select") {
		t.Errorf("train-sim --select loss: %v, want an error naming --select", err)
	}
	for _, f := range []string{"config.json", "model.safetensors", "tokenizer.json", "calibrl.json", "last/optimizer.safetensors"} {
		if _, err := os.Stat(filepath.Join(sim, f)); err != nil {
			t.Errorf("simulator checkpoint lacks %s", f)
		}
	}
	ev := mustRun(t, "eval", "--agent", "scripted:careful", "--user", "learned:"+sim, "-n", "4", "--max-turns", "3", "--json")
	if !strings.Contains(ev, `"user": "learned:`) {
		t.Fatalf("eval against the learned user: %s", ev)
	}
	if _, err := run(t, "eval", "--user", "learned-nocontext:"+sim, "-n", "1"); err == nil {
		t.Fatal("a simulator trained with the oracle context used as learned-nocontext: want an error")
	}
	fid := mustRun(t, "fidelity", "--sim", "naive,learned:"+sim, "-n", "6", "--max-turns", "3", "--histories", "6", "--samples", "4", "--json", "--out", filepath.Join(dir, "fid"))
	dec := json.NewDecoder(strings.NewReader(fid))
	for _, want := range []string{"naive", "learned:" + sim} {
		var rep map[string]any
		if err := dec.Decode(&rep); err != nil {
			t.Fatalf("fidelity --json: %v\n%s", err, fid)
		}
		if rep["sim"] != want {
			t.Fatalf("sim %v, want %s", rep["sim"], want)
		}
		for _, k := range []string{"delta_mean", "sycophancy", "leak", "oversharing", "sim_to_real_gap", "human", "per_history"} {
			if _, ok := rep[k]; !ok {
				t.Errorf("fidelity --json lacks %q", k)
			}
		}
		if ph, _ := rep["per_history"].(map[string]any); ph["samples"] != 4.0 || ph["conversations"] != 6.0 {
			t.Errorf("fidelity --json per_history %v: want 6 validation conversations, 4 samples", ph)
		}
		if want != "naive" {
			if _, ok := rep["nll"]; !ok {
				t.Error("a learned simulator's report lacks its NLL on human turns")
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "fid", "fidelity_delta.png")); err != nil {
		t.Error("no δ_t plot")
	}
}

// reproduce on the tiny preset: every stage runs and the run folder holds
// what the report promises.
func TestReproduceTiny(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	out := mustRun(t, "reproduce", "--task", "mathchat", "--preset", "tiny", "--out", dir, "--json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("reproduce --json: %v\n%s", err, out)
	}
	arms := map[string]bool{}
	for _, r := range rows {
		arms[r["arm"].(string)] = true
		for _, k := range []string{"success", "ci95", "turns", "tokens", "train_reward", "real_reward"} {
			if _, ok := r[k]; !ok {
				t.Errorf("arm %v lacks %q", r["arm"], k)
			}
		}
	}
	for _, a := range []string{"base", "static", "naive-interactive", "calibrated-interactive", "oracle-interactive"} {
		if !arms[a] {
			t.Errorf("no row for arm %s", a)
		}
		ckpt := filepath.Join(dir, "checkpoints", a, "seed-1") // the tiny preset's second RL seed
		if a == "base" {
			ckpt = filepath.Join(dir, "checkpoints", a)
		}
		if _, err := os.Stat(filepath.Join(ckpt, "model.safetensors")); err != nil {
			t.Errorf("no checkpoint for arm %s", a)
		}
	}
	for _, f := range []string{"manifest.json", "metrics.jsonl", "logs.jsonl", "tokenizer.json", "summary.json", "report.md",
		"plots/comparison.png", "plots/training.png", "checkpoints/sim/model.safetensors", "eval/base.episodes.jsonl"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("run folder lacks %s", f)
		}
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"## Verdict", "| calibrated-interactive > static |", "| arm |", "plots/training.png", "| static | 0.", "| static | 1 |", "idle iterations"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// Run again: every stage is already done and the summary is the same.
	again := mustRun(t, "reproduce", "--task", "mathchat", "--preset", "tiny", "--out", dir, "--json")
	if again != out {
		t.Fatalf("resuming a finished run changed its summary:\n%s\n%s", out, again)
	}
	if _, err := run(t, "reproduce", "--task", "mathchat", "--preset", "tiny", "--out", dir, "--seed", "9"); err == nil {
		t.Fatal("resuming with another seed: want an error")
	}
	if _, err := run(t, "reproduce", "--task", "mathchat", "--preset", "tiny", "--out", dir, "--rl-seeds", "3"); err == nil {
		t.Fatal("resuming with another number of RL seeds: want an error")
	}
	if _, err := run(t, "reproduce", "--task", "mathchat", "--preset", "tiny", "--out", dir, "--rl-seeds", "0"); err == nil {
		t.Fatal("--rl-seeds 0: want an error")
	}
	if _, err := run(t, "reproduce", "--task", "mathchat", "--preset", "tiny", "--out", dir, "--jobs", "-1"); err == nil || !strings.Contains(err.Error(), "--jobs") {
		t.Fatalf("--jobs -1: got %v, want an error naming the flag", err)
	}
	// Resuming a finished run with another --jobs is allowed: results do
	// not depend on it.
	if one := mustRun(t, "reproduce", "--task", "mathchat", "--preset", "tiny", "--out", dir, "--json", "--jobs", "1"); one != out {
		t.Fatalf("--jobs 1 on a finished run changed its summary:\n%s\n%s", out, one)
	}
}

// train-policy's RL overrides reach the trainer: the group and the
// rollouts' temperature are in the state it saves (the levers of the RL
// settings study).
func TestTrainPolicyGroupAndTemperature(t *testing.T) {
	dir := t.TempDir()
	logs, base, out := filepath.Join(dir, "logs.jsonl"), filepath.Join(dir, "base"), filepath.Join(dir, "grpo")
	mustRun(t, "collect", "--agent", "scripted:careful", "-n", "8", "--out", logs)
	mustRun(t, "train-policy", "--algo", "sft", "--logs", logs, "--out", base, "--preset", "tiny", "--steps", "2")
	mustRun(t, "train-policy", "--algo", "grpo", "--user", "naive", "--init", base, "--out", out, "--preset", "tiny",
		"--steps", "2", "--instances", "2", "--group", "3", "--temperature", "0.7", "--lr-schedule", "cosine")
	b, err := os.ReadFile(filepath.Join(out, "last", "trainer_state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Group    int `json:"group"`
		Settings struct {
			Gen              struct{ Temperature float64 }
			CosineIterations int `json:"cosine_iterations"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.Group != 3 || st.Settings.Gen.Temperature != 0.7 || st.Settings.CosineIterations != 2 {
		t.Errorf("trainer state has group %d, temperature %v, cosine over %d iterations, want 3, 0.7 and 2", st.Group, st.Settings.Gen.Temperature, st.Settings.CosineIterations)
	}
	if _, err := run(t, "train-policy", "--algo", "grpo", "--user", "naive", "--init", base, "--out", filepath.Join(dir, "x"), "--preset", "tiny",
		"--lr-schedule", "linear"); err == nil || !strings.Contains(err.Error(), `--lr-schedule "linear": want constant or cosine`) {
		t.Errorf("an unknown schedule: got %v", err)
	}
}

// train-policy trains each optimizer reproduce's --optimizers names: rft,
// and GRPO with the greedy baseline or turn-level credit, the state it
// saves naming the algorithm and credit (the RL settings study's runs); a
// credit flag on rft is refused before anything loads.
func TestTrainPolicyOptimizers(t *testing.T) {
	dir := t.TempDir()
	logs, base := filepath.Join(dir, "logs.jsonl"), filepath.Join(dir, "base")
	mustRun(t, "collect", "--agent", "scripted:careful", "-n", "8", "--out", logs)
	mustRun(t, "train-policy", "--algo", "sft", "--logs", logs, "--out", base, "--preset", "tiny", "--steps", "2")
	for _, c := range []struct {
		flags             []string
		algo, baseline    string
		turnContinuations int
	}{
		{[]string{"--algo", "rft"}, "rft", "", 0},
		{[]string{"--algo", "grpo", "--baseline", "greedy"}, "grpo", "greedy", 0},
		{[]string{"--algo", "grpo", "--turn-credit", "2"}, "grpo", "", 2},
	} {
		out := filepath.Join(dir, strings.Join(c.flags, ""))
		mustRun(t, append([]string{"train-policy", "--user", "naive", "--init", base, "--out", out, "--preset", "tiny", "--steps", "1"}, c.flags...)...)
		b, err := os.ReadFile(filepath.Join(out, "last", "trainer_state.json"))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Algo     string `json:"algo"`
			Settings struct {
				Baseline          string `json:"baseline"`
				TurnContinuations int    `json:"turn_continuations"`
			} `json:"settings"`
		}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		if st.Algo != c.algo || st.Settings.Baseline != c.baseline || st.Settings.TurnContinuations != c.turnContinuations {
			t.Errorf("%v: trainer state algo %q, baseline %q, turn continuations %d; want %q, %q, %d", c.flags, st.Algo, st.Settings.Baseline, st.Settings.TurnContinuations, c.algo, c.baseline, c.turnContinuations)
		}
	}
	if _, err := run(t, "train-policy", "--algo", "rft", "--baseline", "greedy", "--init", base, "--out", filepath.Join(dir, "x"), "--preset", "tiny"); err == nil ||
		!strings.Contains(err.Error(), "--algo grpo only, not rft") {
		t.Errorf("rft with a GRPO baseline: got %v", err)
	}
}
