package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/lm"
)

func shortSFT() SFTConfig {
	c := smallSFT()
	c.Steps, c.CheckpointEvery = 20, 10
	return c
}

// A resume under settings that change the weights is refused, naming them.
func TestSFTResumeRefusesOtherSettings(t *testing.T) {
	out := t.TempDir()
	m, seqs := toySFT(t)
	ctx, cancel := context.WithCancel(context.Background())
	SFT(ctx, m, seqs, shortSFT(), out, func(rec map[string]any) {
		if rec["step"] == 12 {
			cancel()
		}
	})
	other := shortSFT()
	other.LR *= 2
	m2, _ := toySFT(t)
	_, err := SFT(context.Background(), m2, seqs, other, out, nil)
	if err == nil || !strings.Contains(err.Error(), "other settings (lr 0.003 → 0.006)") {
		t.Fatalf("resume with another lr: got %v", err)
	}
	// CheckpointEvery does not change the weights: the resume goes on.
	same := shortSFT()
	same.CheckpointEvery = 5
	if _, err := SFT(context.Background(), m2, seqs, same, out, nil); err != nil {
		t.Fatalf("resume with another checkpoint interval: %v", err)
	}
}

// A finished run started again reports the figures of the run, not zeros.
func TestSFTRerunKeepsResult(t *testing.T) {
	out := t.TempDir()
	m, seqs := toySFT(t)
	first, err := SFT(context.Background(), m, seqs, shortSFT(), out, nil)
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := toySFT(t)
	again, err := SFT(context.Background(), m2, seqs, shortSFT(), out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.TrainNLL != first.TrainNLL || !(again.TokensPerS > 0) || again.ValNLL != first.ValNLL || again.Steps != first.Steps {
		t.Errorf("re-run: %+v, first run: %+v", again, first)
	}
	var onDisk SFTResult
	data, _ := os.ReadFile(filepath.Join(out, "sft_result.json"))
	if err := json.Unmarshal(data, &onDisk); err != nil || onDisk.TrainNLL != first.TrainNLL || onDisk.TokensPerS == 0 {
		t.Errorf("sft_result.json after the re-run: %s (%v)", data, err)
	}
}

// A diverging run stops with ErrNonFinite and leaves its last checkpoint
// loadable and finite.
func TestSFTStopsOnNonFiniteLoss(t *testing.T) {
	out := t.TempDir()
	m, seqs := toySFT(t)
	cfg := shortSFT()
	cfg.LR, cfg.Warmup, cfg.CheckpointEvery, cfg.ClipNorm = 1e30, 0, 1, 0
	_, err := SFT(context.Background(), m, seqs, cfg, out, nil)
	if !errors.Is(err, lm.ErrNonFinite) {
		t.Fatalf("got %v, want lm.ErrNonFinite", err)
	}
	last, _, lerr := chatlm.Load(filepath.Join(out, "last"))
	if lerr != nil {
		t.Fatalf("the last checkpoint after the stop: %v", lerr)
	}
	for _, v := range last.LM.Params.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatal("the last checkpoint holds non-finite weights")
		}
	}
}

// A checkpoint folder of an older calibrl (parts written one by one, no
// checkpoint.json) may mix two saves; it is refused, not trusted.
func TestResumeRefusesUnverifiableCheckpoint(t *testing.T) {
	out := t.TempDir()
	m, seqs := toySFT(t)
	if _, err := SFT(context.Background(), m, seqs, shortSFT(), out, nil); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(out, "last", lm.ManifestFile))
	m2, _ := toySFT(t)
	_, err := SFT(context.Background(), m2, seqs, shortSFT(), out, nil)
	if err == nil || !strings.Contains(err.Error(), "no checkpoint.json") {
		t.Fatalf("got %v", err)
	}
}

// The mixed checkpoint of the issue: the trainer state of one save beside
// the weights of a later one. GRPO refuses it instead of resuming from a
// step count that does not belong to its weights.
func TestGRPOResumeRefusesMixedCheckpoint(t *testing.T) {
	cfg := smallGRPO()
	cfg.MonitorEvery, cfg.Iterations = 0, 2
	out := filepath.Join(t.TempDir(), "run")
	if _, err := grpoWeights(t, cfg, out, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	early, _ := os.ReadFile(filepath.Join(out, "last", trainerStateFile))
	cfg.Iterations = 3
	if _, err := grpoWeights(t, cfg, out, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "last", trainerStateFile), early, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Iterations = 4
	_, err := grpoWeights(t, cfg, out, context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "trainer_state.json does not match checkpoint.json") {
		t.Fatalf("got %v", err)
	}
}

func TestGRPOResumeRefusesOtherUserOrLR(t *testing.T) {
	cfg := smallGRPO()
	cfg.MonitorEvery, cfg.Iterations = 0, 1
	out := filepath.Join(t.TempDir(), "run")
	if _, err := grpoWeights(t, cfg, out, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	cfg.Iterations = 2
	lr := cfg
	lr.LR *= 10
	if _, err := grpoWeights(t, lr, out, context.Background(), nil); err == nil || !strings.Contains(err.Error(), "other settings (lr 0.001 → 0.01)") {
		t.Errorf("another lr: got %v", err)
	}
	m := toyPolicy(t, 80)
	user := &chatlm.User{Model: m, Oracle: true, Gen: chatlm.DefaultGenConfig()}
	if _, err := GRPO(context.Background(), m, addTask{}, user, nil, cfg, out, nil); err == nil || !strings.Contains(err.Error(), "trained against another user") {
		t.Errorf("another user: got %v", err)
	}
	// More iterations with the same settings and user is a resume.
	if _, err := grpoWeights(t, cfg, out, context.Background(), nil); err != nil {
		t.Errorf("same settings, more iterations: %v", err)
	}
}

// A finished run started again is a no-op, early stopping included: the
// same result, the same weights, no step trained (before, each rerun of
// a run stopped early trained on to its next evaluation and stopped
// again, steps 246 → 252 → 294).
func TestSFTRerunOfAFinishedRunTrainsNothing(t *testing.T) {
	cfg := shortSFT()
	cfg.Steps, cfg.EvalEvery, cfg.Patience, cfg.LR = 400, 5, 1, 2e-2 // a high rate overshoots: stops early
	out := t.TempDir()
	m, seqs := toySFT(t)
	first, err := SFT(context.Background(), m, seqs, cfg, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !first.EarlyStop || first.Steps >= cfg.Steps {
		t.Fatalf("first run: %+v, want an early stop", first)
	}
	weights := func() []byte {
		data, err := os.ReadFile(filepath.Join(out, lm.WeightsFile))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	w0 := weights()
	for rerun := 1; rerun <= 2; rerun++ {
		m2, _ := toySFT(t)
		var trained []any
		again, err := SFT(context.Background(), m2, seqs, cfg, out, func(rec map[string]any) {
			if _, ok := rec[MetricSFTLoss]; ok {
				trained = append(trained, rec[MetricStep])
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if again != first || len(trained) > 0 {
			t.Errorf("rerun %d: %+v, steps trained %v; want %+v and none", rerun, again, trained, first)
		}
		if !bytes.Equal(weights(), w0) {
			t.Errorf("rerun %d changed the weights", rerun)
		}
	}
}

// The cosine schedule acts on the updates (a run with it ends elsewhere
// than one at a constant rate, and its later iterations log a smaller
// scale) and ties the run to its length: resuming with more iterations
// would change every later update, so it is refused.
func TestGRPOCosineLRActsAndFixesTheLength(t *testing.T) {
	if f := (RLConfig{Iterations: 5, LRCosine: true}); f.lrFactor(0) != 1 || math.Abs(f.lrFactor(4)-0.1) > 1e-12 || math.Abs(f.lrFactor(2)-0.55) > 1e-12 {
		t.Errorf("cosine factors %v %v %v, want 1, 0.55, 0.1", f.lrFactor(0), f.lrFactor(2), f.lrFactor(4))
	}
	if f := (RLConfig{Iterations: 5}); f.lrFactor(4) != 1 {
		t.Errorf("constant rate: factor %v at the last iteration, want 1", f.lrFactor(4))
	}
	cfg := smallGRPO()
	cfg.MonitorEvery, cfg.Iterations, cfg.Warmup = 0, 3, 0
	flat, err := grpoWeights(t, cfg, filepath.Join(t.TempDir(), "constant"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cos := cfg
	cos.LRCosine = true
	out := filepath.Join(t.TempDir(), "cosine")
	var scales []float64
	log := func(rec map[string]any) {
		if s, ok := rec[MetricLRScale].(float64); ok {
			scales = append(scales, s)
		}
	}
	decayed, err := grpoWeights(t, cos, out, context.Background(), log)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(flat, decayed) {
		t.Error("the cosine schedule left the weights those of a constant rate")
	}
	if len(scales) == 0 || scales[len(scales)-1] > 0.1+1e-12 {
		t.Errorf("logged lr scales %v, want the last at 0.1", scales)
	}
	cos.Iterations = 4
	if _, err := grpoWeights(t, cos, out, context.Background(), nil); err == nil || !strings.Contains(err.Error(), "cosine_iterations 3 → 4") {
		t.Errorf("a longer cosine resume: got %v, want it refused naming cosine_iterations", err)
	}
}
