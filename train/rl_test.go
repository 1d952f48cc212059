package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
)

// A batch must name the sample of every sequence and carry a sampled
// log-prob row (nil or not) for each; the rewards come in whole groups.
func TestRLBatchCheck(t *testing.T) {
	seqs := make([]chatlm.Sequence, 3)
	good := func() rlBatch {
		return rlBatch{rewards: []float64{1, 0, 0, 1}, seqs: seqs, owner: []int{0, 0, 3}, sampled: make([][]float32, 3)}
	}
	if err := good().check(2); err != nil {
		t.Fatalf("good batch: %v", err)
	}
	for name, edit := range map[string]func(*rlBatch){
		"no owners":         func(b *rlBatch) { b.owner = nil },
		"owner too far":     func(b *rlBatch) { b.owner[2] = 4 },
		"negative owner":    func(b *rlBatch) { b.owner[0] = -1 },
		"no sampled rows":   func(b *rlBatch) { b.sampled = nil },
		"a partial group":   func(b *rlBatch) { b.rewards = b.rewards[:3] },
		"no samples at all": func(b *rlBatch) { *b = rlBatch{} },
	} {
		b := good()
		edit(&b)
		if err := b.check(2); err == nil {
			t.Errorf("%s: got nil, want an error", name)
		}
	}
}

// Every sequence gets its sample's advantage.
func TestRLBatchSeqAdvantages(t *testing.T) {
	b := rlBatch{seqs: make([]chatlm.Sequence, 4), owner: []int{0, 0, 1, 2}}
	if got, want := b.seqAdvantages([]float64{0.5, -1, 2}), []float64{0.5, 0.5, -1, 2}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// resumesFrom checks that out/last holds iteration it, and that GRPO run
// again on out ends with want, the uninterrupted run's weights.
func resumesFrom(t *testing.T, cfg RLConfig, out string, it int, want []float32) {
	t.Helper()
	if got := lastIteration(t, out); got != it {
		t.Fatalf("out/last holds iteration %d, want %d", got, it)
	}
	got, err := grpoWeights(t, cfg, out, context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("resumed run's weights differ from the uninterrupted run's")
	}
}

// lastIteration reads the iterations completed that out/last records (-1:
// no checkpoint).
func lastIteration(t *testing.T, out string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "last", trainerStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	var st rlState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return st.Iter
}

// The loop's one error path wraps every error with the algorithm and the
// iteration; on a cancellation it checkpoints the last whole iteration,
// except part of the way through an update, when the weights belong to no
// iteration.
func TestRLStopCheckpointsWholeIterations(t *testing.T) {
	boom := errors.New("boom")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name       string
		ctx        context.Context
		midUpdate  bool
		saved      bool
		isCanceled bool
	}{
		{"error", context.Background(), false, false, false},
		{"error mid-update", context.Background(), true, false, false},
		{"cancelled", cancelled, false, true, true},
		{"cancelled mid-update", cancelled, true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			r, err := newRLRun(toyPolicy(t, 0), addTask{}, addUser{}, nil, smallGRPO(), "grpo", out, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.resume(); err != nil {
				t.Fatal(err)
			}
			r.st.Iter, r.midUpdate = 4, c.midUpdate
			_, err = r.stop(c.ctx, 4, boom)
			if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "grpo iteration 4: ") || errors.Is(err, context.Canceled) != c.isCanceled {
				t.Fatalf("got %v, want boom wrapped as grpo iteration 4 (a cancellation: %v)", err, c.isCanceled)
			}
			want := -1
			if c.saved {
				want = 4
			}
			if got := lastIteration(t, out); got != want {
				t.Fatalf("out/last holds iteration %d, want %d (-1: none)", got, want)
			}
		})
	}
}

// A cancellation while an iteration's update runs lets the update finish,
// and the run stops with a checkpoint of that iteration (none is due
// otherwise) from which it resumes to the uninterrupted run's weights.
func TestRLCancelDuringUpdateResumes(t *testing.T) {
	cfg := smallGRPO()
	cfg.MonitorEvery, cfg.CheckpointEvery = 0, 1000
	want, err := grpoWeights(t, cfg, filepath.Join(t.TempDir(), "a"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "b")
	r, err := newRLRun(toyPolicy(t, 80), addTask{}, addUser{}, nil, cfg, "grpo", out, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = r.loop(ctx, func(ctx context.Context, it int) (rlBatch, error) {
		b, err := r.interactiveBatch(ctx, it)
		if it == 1 {
			cancel() // the update of iteration 1 comes next
		}
		return b, err
	})
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "grpo iteration 2: ") {
		t.Fatalf("got %v, want context.Canceled at iteration 2", err)
	}
	resumesFrom(t, cfg, out, 2, want)
}

// An update that fails (here on a sequence longer than the context) stops
// the run with the error wrapped with the iteration; out/last keeps the
// last checkpoint, from which the run resumes to the uninterrupted
// weights.
func TestRLUpdateErrorStops(t *testing.T) {
	cfg := smallGRPO()
	cfg.MonitorEvery = 0
	want, err := grpoWeights(t, cfg, filepath.Join(t.TempDir(), "a"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "b")
	m := toyPolicy(t, 80)
	r, err := newRLRun(m, addTask{}, addUser{}, nil, cfg, "grpo", out, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.loop(context.Background(), func(ctx context.Context, it int) (rlBatch, error) {
		b, err := r.interactiveBatch(ctx, it)
		if it == 1 && err == nil {
			for k := range b.seqs {
				n := m.LM.Config.Context + 1
				b.seqs[k] = chatlm.Sequence{IDs: make([]int, n), Mask: make([]float32, n)}
				b.seqs[k].Mask[0] = 1
				b.sampled[k] = nil
			}
		}
		return b, err
	})
	if err == nil || !strings.HasPrefix(err.Error(), "grpo iteration 1: ") || !strings.Contains(err.Error(), "exceeds context") {
		t.Fatalf("got %v, want the update's error at iteration 1", err)
	}
	resumesFrom(t, cfg, out, 1, want)
}

// monitorReadings are the monitor records of a run's log, by step.
type monitorReadings map[any]float64

func (m monitorReadings) log(rec map[string]any) {
	if v, ok := rec[MetricMonitorTrainReward]; ok {
		m[rec[MetricStep]] = v.(float64)
	}
}

// An interruption while the monitor plays (its iteration counted and
// checkpointed, its reading not yet logged) does not lose the reading: the
// resumed run takes it first, and the run logs every reading an
// uninterrupted one does, with the same values and weights. Before, the
// reading of iteration 2 was missing and the training plot differed.
func TestRLCancelDuringMonitorKeepsTheReading(t *testing.T) {
	cfg := smallGRPO()
	cfg.Iterations, cfg.MonitorEvery, cfg.CheckpointEvery = 4, 2, 1000
	want := monitorReadings{}
	a, err := grpoWeights(t, cfg, filepath.Join(t.TempDir(), "a"), context.Background(), want.log)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "cut")
	ctx, cancel := context.WithCancel(context.Background())
	got := monitorReadings{}
	_, err = grpoWeights(t, cfg, out, ctx, func(rec map[string]any) {
		got.log(rec)
		if rec[MetricStep] == 2 && rec[MetricReward] != nil {
			cancel() // iteration 2 is counted; its monitor is next
		}
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "monitor") {
		t.Fatalf("interrupted run: got %v, want the monitor cancelled", err)
	}
	b, err := grpoWeights(t, cfg, out, context.Background(), got.log)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("monitor readings of the interrupted and resumed run %v, of one run %v", got, want)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("resumed run's weights differ from the uninterrupted run's")
	}
}

// A finished RL run started again is a no-op: the result it wrote, the
// same weights, no iteration, no monitor, nothing written.
func TestRLRerunOfAFinishedRunIsANoOp(t *testing.T) {
	cfg := smallGRPO()
	out := t.TempDir()
	m := toyPolicy(t, 80)
	first, err := GRPO(context.Background(), m, addTask{}, addUser{}, nil, cfg, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, out)
	m2 := toyPolicy(t, 80)
	var logged []map[string]any
	again, err := GRPO(context.Background(), m2, addTask{}, addUser{}, nil, cfg, out, func(rec map[string]any) { logged = append(logged, rec) })
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Errorf("rerun's result %+v, the run's %+v", again, first)
	}
	for _, rec := range logged {
		if rec["event"] != "resume" && rec["event"] != "finished" {
			t.Errorf("rerun logged %v, want only the resume and finished events", rec)
		}
	}
	for path, stamp := range snapshot(t, out) {
		if before[path] != stamp {
			t.Errorf("rerun rewrote %s", path)
		}
	}
}

// snapshot is every file under dir with its modification time and size.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fmt.Sprintf("%d %v", info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
