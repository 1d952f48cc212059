package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calibrl/calibrl/chatlm/chatlmtest"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/reproduce"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
)

// runCtx is run under a context, as main runs a command under the one
// SIGINT and SIGTERM cancel.
func runCtx(ctx context.Context, args ...string) error {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// An interrupted run of any size stops within a second or two and leaves
// no file (documented), nor a temporary one.
func TestInterruptStopsLargeRunsPromptly(t *testing.T) {
	for _, args := range [][]string{
		{"collect", "-n", "2000000000", "--out"},
		{"eval", "-n", "2000000000", "--episodes-out"},
	} {
		dir := t.TempDir()
		out := filepath.Join(dir, "episodes.jsonl")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		start := time.Now()
		err := runCtx(ctx, append(args, out)...)
		took := time.Since(start)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want context.Canceled (exit status 130)", args[0], err)
		}
		if took > 2500*time.Millisecond {
			t.Errorf("%s: took %v to stop after the interrupt at 0.5 s", args[0], took)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s: an interrupted run left %v", args[0], entries)
		}
	}
}

// Streaming writes the very file the whole-run code wrote, and eval's
// running figures are those of Summarize.
func TestStreamedEpisodesMatchWholeRun(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.jsonl")
	n := rollout.StreamChunk*2 + 9
	mustRun(t, "collect", "--agent", "scripted:careful,guesser", "-n", strconv.Itoa(n), "--seed", "4", "--out", logs)
	tk, _ := task.Lookup("mathchat")
	var agents []dialog.Agent
	names := []string{"scripted:careful", "scripted:guesser"}
	for _, name := range names {
		a, err := spec.Agent(tk, name)
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	u, _ := spec.User(tk, "human")
	all, err := rollout.Share(context.Background(), tk, agents, names, u, rollout.Config{Split: "train", Instances: n, Seed: 4, MaxTurns: rollout.DefaultMaxTurns, UserName: "human"})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := dialog.WriteEpisodes(&want, all); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(logs); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("collect wrote %d bytes, the whole-run writer %d: not the same file", len(got), want.Len())
	}

	eps := filepath.Join(dir, "eval.jsonl")
	js := mustRun(t, "eval", "-n", "200", "--seed", "5", "--json", "--episodes-out", eps)
	var got eval.Summary
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	played, err := dialog.LoadEpisodes(eps)
	if err != nil {
		t.Fatal(err)
	}
	w := eval.Summarize(played, 5)
	if got.Episodes != 200 || got.Success != w.Success || got.Reward != w.Reward || got.Turns != w.Turns || got.Tokens != w.Tokens {
		t.Errorf("eval printed %+v, Summarize of its episodes %+v", got, w)
	}
}

func TestNegativeOverridesRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--workers", "-1", "-n", "1"}, "--workers must not be negative"},
		{[]string{"collect", "--workers", "-3", "-n", "1", "--out", filepath.Join(dir, "x.jsonl")}, "--workers must not be negative"},
		{[]string{"eval", "--temperature", "-2", "-n", "1"}, "--temperature -2: want a value in [0, 100]"},
		{[]string{"train-policy", "--algo", "sft", "--steps", "-1", "--out", dir}, "--steps -1: want ≥ 0"},
		{[]string{"train-policy", "--lr", "-1", "--out", dir}, "--lr -1: want > 0"},
		{[]string{"train-policy", "--beta", "-0.5", "--out", dir}, "--beta -0.5: want ≥ 0"},
		{[]string{"train-policy", "--instances", "-2", "--out", dir}, "--instances -2: want > 0"},
		{[]string{"train-policy", "--temperature", "0", "--out", dir}, "--temperature 0: want > 0"},
		{[]string{"train-policy", "--group", "1", "--out", dir}, "--group 1: want > 1"},
		{[]string{"train-sim", "--steps", "-1", "--logs", "x.jsonl", "--out", dir}, "--steps -1: want ≥ 0"},
	} {
		_, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.args, err, c.want)
		}
	}
	// The help shows -1 as --temperature's default: given, it is taken.
	if _, err := run(t, "eval", "--temperature", "-1", "-n", "1"); err != nil {
		t.Errorf("eval --temperature -1 (the default): %v", err)
	}
}

// A size a flag sets that would exhaust the machine is refused before
// anything is allocated, with the limit in the error (before, reproduce
// --rl-seeds 100000000 grew to 20.9 GB and was killed for memory, and
// these ran out of memory at once).
func TestAbsurdSizesRefusedWithTheLimit(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reproduce", "--preset", "tiny", "--rl-seeds", "100000000", "--out", dir}, "--rl-seeds 100000000: want a value in [1, 100]"},
		{[]string{"reproduce", "--preset", "tiny", "--rl-iterations", "100000000", "--out", dir}, "--rl-iterations 100000000: want 1 to 3000"},
		{[]string{"reproduce", "--preset", "tiny", "--curves", "100000000", "--out", dir}, "--curves: 100000000 episodes on the validation slice: at most 15000"},
		{[]string{"reproduce", "--preset", "tiny", "--curves", "-1", "--out", dir}, "--curves -1: want 0 (off)"},
		{[]string{"reproduce", "--preset", "tiny", "--hacking-decoding", "mode", "--out", dir}, `--hacking-decoding "mode": want greedy or sampled`},
		{[]string{"horizon", "--preset", "tiny", "--rl-seeds", "100000000", "--out", dir}, "--rl-seeds 100000000: want a value in [1, 100]"},
		{[]string{"fidelity", "--sim", "naive", "--agents", "scripted:careful", "-n", "2000000000"}, "--episodes: 2000000000 episodes on the test slice: at most 15000"},
		{[]string{"fidelity", "--sim", "naive", "--agents", "scripted:careful", "-n", "2", "--turns", "2000000000"}, "fidelity: 2000000000 turn indexes, the limit is 1024"},
		{[]string{"bench", "--batch", "100000000"}, "batch 100000000, the limit is 1024"},
		{[]string{"bench", "--workers", "100000000"}, "workers 100000000, the limit is 1024"},
		{[]string{"bench", "--rl-instances", "100000000"}, "100000000 instances × group 8 conversations, the limit is 4096"},
		{[]string{"bench", "--rl-group", "100000000"}, "8 instances × group 100000000 conversations, the limit is 4096"},
		{[]string{"train-policy", "--instances", "100000000", "--init", dir, "--out", filepath.Join(dir, "out")}, "100000000 instances × group 8 samples, the limit is 4096"},
		{[]string{"bench", "--gemm-size", "1000000"}, "--gemm-size 1000000, want a value in [0, 8192]"},
	} {
		start := time.Now()
		_, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.args, err, c.want)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%v: took %v to refuse", c.args, took)
		}
	}
	if _, err := reproduce.Run(context.Background(), reproduce.Config{Preset: preset.Preset{RLSeeds: 101}, Out: dir}); err == nil ||
		!strings.Contains(err.Error(), "101 RL seeds, the limit is 100") {
		t.Errorf("reproduce.Run with 101 RL seeds: got %v", err)
	}
}

// A checkpoint with an absurd config.json or NaN weights gives one line
// naming the file, not an out-of-memory crash or a silent NaN model.
func TestLoadersRefuseAbsurdOrNaNModels(t *testing.T) {
	eps := chatlmtest.AddEpisodes(8, 3)
	m := chatlmtest.TinyModel(t, eps)
	for _, c := range []struct {
		name   string
		breaks func(dir string)
		want   string
	}{
		{"n_embd 65536", func(dir string) { editFile(t, filepath.Join(dir, lm.ConfigFile), `"n_embd": 32`, `"n_embd": 65536`) }, "config.json: lm config: n_embd 65536, want ≤ 16384"},
		{"n_layer 1e8", func(dir string) {
			editFile(t, filepath.Join(dir, lm.ConfigFile), `"n_layer": 2`, `"n_layer": 100000000`)
		}, "n_layer 100000000, want ≤ 1024"},
		{"NaN weights", func(dir string) {
			p := filepath.Join(dir, lm.WeightsFile)
			b, _ := os.ReadFile(p)
			start := 8 + int(binary.LittleEndian.Uint64(b))
			for i := start; i+4 <= len(b); i += 4 {
				binary.LittleEndian.PutUint32(b[i:], 0x7fc00000)
			}
			os.WriteFile(p, b, 0o644)
		}, "model.safetensors: tensor wte.weight holds"},
	} {
		dir := filepath.Join(t.TempDir(), "policy")
		if err := m.Save(dir, nil); err != nil {
			t.Fatal(err)
		}
		c.breaks(dir)
		// Every loader (eval, serve --sim, train-policy --init) goes
		// through lm.LoadCheckpoint; eval stands for them.
		_, err := run(t, "eval", "--agent", "lm:"+dir, "-n", "1")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line containing %q", c.name, err, c.want)
		}
	}
}

func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %s (%v)", path, old, err)
	}
	os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}

const collectChildEnv = "CALIBRL_COLLECT_CHILD" // the --out of a collect to run and be killed

// TestCollectChild is the collect that TestKilledCollectLeavesNoTemporary
// kills; it does nothing unless started by it.
func TestCollectChild(t *testing.T) {
	out := os.Getenv(collectChildEnv)
	if out == "" {
		t.Skip("run by TestKilledCollectLeavesNoTemporary")
	}
	runCtx(context.Background(), "collect", "-n", "1000000", "--out", out)
}

// A collect killed with SIGKILL leaves its temporary; the next collect
// into the same file removes it (before, it stayed for good).
func TestKilledCollectLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "logs.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCollectChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), collectChildEnv+"="+out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		entries, _ := os.ReadDir(dir)
		if len(entries) == 1 {
			if info, err := entries[0].Info(); err == nil && info.Size() > 0 {
				break // the temporary holds episodes
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("collect wrote no temporary in 20 s: %v", entries)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), ".logs.jsonl.tmp-") {
		t.Fatalf("after the kill: %v, want the temporary", entries)
	}
	if err := runCtx(context.Background(), "collect", "-n", "3", "--out", out); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != "logs.jsonl" {
		t.Errorf("after the next collect: %v, want logs.jsonl alone", entries)
	}
}
