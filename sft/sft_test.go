package sft

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/chatlm/chatlmtest"
	"github.com/calibrl/calibrl/checkpoint"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

// A warm-started fit begins where the checkpoint it names ended: its first
// held-out NLL is that checkpoint's, far below a fresh model's.
func TestWarmStartBeginsFromTheCheckpoint(t *testing.T) {
	eps := chatlmtest.AddEpisodes(64, 1)
	tok, err := chatlm.TrainTokenizer(context.Background(), eps, 300)
	if err != nil {
		t.Fatal(err)
	}
	sc := train.DefaultSFTConfig()
	sc.Steps, sc.BatchSize, sc.LR, sc.EvalEvery, sc.CheckpointEvery, sc.Warmup, sc.Seed = 40, 8, 3e-3, 10, 20, 0, 2
	cfg := Config{Model: lm.Config{Context: 128, Dim: 32, Layers: 2, Heads: 2}, SFT: sc, Tokenizer: tok, Oracle: true}
	dir := t.TempDir()
	first, err := Simulator(context.Background(), eps, cfg, filepath.Join(dir, "first"), nil)
	if err != nil {
		t.Fatal(err)
	}
	warm := cfg
	warm.SFT.Steps, warm.SFT.EvalEvery, warm.SFT.CheckpointEvery = 2, 1, 1
	warm.From = filepath.Join(dir, "first")
	again, err := Simulator(context.Background(), eps, warm, filepath.Join(dir, "warm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(again.Result.FirstVal-first.Result.ValNLL) > 1e-9 {
		t.Errorf("warm start's first held-out NLL %v, want the checkpoint's %v", again.Result.FirstVal, first.Result.ValNLL)
	}
	if !(first.Result.FirstVal > again.Result.FirstVal+0.5) {
		t.Errorf("fresh model's first held-out NLL %v is not well above the warm start's %v", first.Result.FirstVal, again.Result.FirstVal)
	}
	if again.From != warm.From || first.From != "" {
		t.Errorf("meta records from %q and %q, want %q and nothing", again.From, first.From, warm.From)
	}
	checkMetaFile(t, filepath.Join(dir, "warm"), again)

	// A re-fit that only does harm returns the checkpoint it started from.
	harm := warm
	harm.SFT.LR, harm.SFT.Steps, harm.SFT.EvalEvery, harm.SFT.CheckpointEvery = 0.5, 4, 2, 2
	hurt, err := Simulator(context.Background(), eps, harm, filepath.Join(dir, "harm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if hurt.Result.BestStep != 0 || hurt.Result.ValNLL != hurt.Result.FirstVal || math.Abs(hurt.Result.ValNLL-first.Result.ValNLL) > 1e-9 {
		t.Errorf("a harmful re-fit: best step %d, held-out NLL %v (first %v, the checkpoint's %v): want the starting weights back",
			hurt.Result.BestStep, hurt.Result.ValNLL, hurt.Result.FirstVal, first.Result.ValNLL)
	}

	other, err := chatlm.TrainTokenizer(context.Background(), chatlmtest.AddEpisodes(64, 9), 280)
	if err != nil {
		t.Fatal(err)
	}
	bad := warm
	bad.Tokenizer = other
	if _, err := Simulator(context.Background(), eps, bad, filepath.Join(dir, "bad"), nil); err == nil || !strings.Contains(err.Error(), "tokenizer") {
		t.Errorf("warm start with another tokenizer: %v, want a tokenizer error", err)
	}
}

// checkMetaFile checks the calibrl.json a fit wrote in dir: ReadMeta gives
// back the meta the fit returned, checkpoint.Read its players' part, and
// the file keeps the layout checkpoints have always had (the players'
// fields first, then the fit's budget, result and model).
func checkMetaFile(t *testing.T, dir string, want Meta) {
	t.Helper()
	got, err := ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadMeta = %+v, want the fit's %+v", got, want)
	}
	if m, err := checkpoint.Read(dir); err != nil || m != want.Meta {
		t.Errorf("checkpoint.Read = %+v, %v; want %+v", m, err, want.Meta)
	}
	data, err := os.ReadFile(filepath.Join(dir, checkpoint.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, line := range strings.Split(string(data), "\n") {
		if k, ok := strings.CutPrefix(line, `  "`); ok { // a top-level key of the indented file
			keys = append(keys, k[:strings.Index(k, `"`)])
		}
	}
	// judged is left out when false, as the test's fits are.
	if got, want := strings.Join(keys, ","), "role,task,oracle,seed,logs,from,sft,result,model"; got != want {
		t.Errorf("%s's keys: %s, want %s", checkpoint.MetaFile, got, want)
	}
}

// A fit stopped before it trains (while it trains its tokenizer or encodes
// the logs, which take seconds on large logs) returns the stop at once and
// writes nothing; before, it trained the tokenizer, encoded every episode
// and wrote a checkpoint first.
func TestStoppedFitReturnsBeforeTraining(t *testing.T) {
	eps := chatlmtest.AddEpisodes(64, 1)
	sc := train.DefaultSFTConfig()
	sc.Steps, sc.BatchSize = 10, 8
	cfg := Config{Model: lm.Config{Context: 128, Dim: 32, Layers: 2, Heads: 2}, SFT: sc, Vocab: 300, Oracle: true}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "sim")
	_, err := Simulator(ctx, eps, cfg, out, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("a fit stopped before training wrote %v", entries)
	}
}

// Filtered BC fine-tunes the base it names on the solved conversations
// alone, and refuses logs without one or a missing base.
func TestFilteredBCClonesTheSolvedConversations(t *testing.T) {
	eps := chatlmtest.AddEpisodes(48, 3)
	solved := 0
	for i := range eps {
		eps[i].Success = i%3 == 0
		if eps[i].Success {
			solved++
		}
	}
	tok, err := chatlm.TrainTokenizer(context.Background(), eps, 300)
	if err != nil {
		t.Fatal(err)
	}
	sc := train.DefaultSFTConfig()
	sc.Steps, sc.BatchSize, sc.LR, sc.EvalEvery, sc.CheckpointEvery, sc.Warmup, sc.Seed = 4, 4, 3e-3, 2, 2, 0, 2
	cfg := Config{Model: lm.Config{Context: 128, Dim: 32, Layers: 2, Heads: 2}, SFT: sc, Tokenizer: tok}
	dir := t.TempDir()
	if _, err := Policy(context.Background(), eps, cfg, filepath.Join(dir, "base"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := FilteredBC(context.Background(), eps, cfg, filepath.Join(dir, "nobase"), nil); err == nil || !strings.Contains(err.Error(), "no base policy") {
		t.Errorf("no base: %v, want an error naming it", err)
	}
	cfg.From = filepath.Join(dir, "base")
	meta, err := FilteredBC(context.Background(), eps, cfg, filepath.Join(dir, "fbc"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Logs != solved || meta.From != cfg.From {
		t.Errorf("filtered BC trained on %d conversations from %q, want the %d solved of %d from %q", meta.Logs, meta.From, solved, len(eps), cfg.From)
	}
	for i := range eps {
		eps[i].Success = false
	}
	if _, err := FilteredBC(context.Background(), eps, cfg, filepath.Join(dir, "none"), nil); err == nil || !strings.Contains(err.Error(), "none of 48") {
		t.Errorf("no solved conversation: %v, want an error", err)
	}
}

// A simulator is fitted on the view it will play with: with the task's
// notes (mathchat's :userledger) each sequence is the user's view with the
// check and the notes joined (what spec's LearnedUser then shows it), and
// the notes change what it reads; without them, the check's alone.
func TestSimulatorSequencesCarryTheNotes(t *testing.T) {
	tk, err := task.Lookup("mathchat:h2:userledger")
	if err != nil {
		t.Fatal(err)
	}
	careful, _ := tk.Agent("careful")
	human, _ := tk.User("human")
	eps, err := rollout.Run(context.Background(), tk, careful, human, rollout.Config{Split: "train", Instances: 6, Seed: 1, MaxTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := chatlm.TrainTokenizer(context.Background(), eps, 300)
	if err != nil {
		t.Fatal(err)
	}
	m, err := chatlm.NewModel(tok, lm.Config{Context: 256, Dim: 16, Layers: 1, Heads: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	check, notes := chatlm.TaskJudge(tk), chatlm.UserNotesOf(tk)
	differ := 0
	for _, c := range []struct {
		notes, want chatlm.Judge
	}{{notes, chatlm.JoinJudges(check, notes)}, {nil, check}} {
		cfg := Config{Oracle: true, Judge: check, UserNotes: c.notes}
		seqs, err := sequences(context.Background(), m, eps, cfg, checkpoint.RoleSimulator)
		if err != nil {
			t.Fatal(err)
		}
		if len(seqs) != len(eps) {
			t.Fatalf("%d sequences of %d episodes", len(seqs), len(eps))
		}
		for i := range eps {
			want, err := m.UserSequence(&eps[i], true, c.want)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(seqs[i], want) {
				t.Errorf("%s (notes %v): the fit's sequence is not the view it plays with", eps[i].ID, c.notes != nil)
			}
			if plain, _ := m.UserSequence(&eps[i], true, check); c.notes != nil && !reflect.DeepEqual(seqs[i], plain) {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Error("the notes change none of the simulator's sequences")
	}
}
