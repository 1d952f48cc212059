package train

import (
	"context"
	"testing"
)

func TestProgressOfRecords(t *testing.T) {
	e, ok := Progress("base", map[string]any{MetricStep: 12, MetricSFTValNLL: 1.25, MetricSFTLoss: 2.0})
	if !ok || e.Stage != "base" || e.Step != 12 || len(e.Figures) != 1 || e.Figures[0].Name != "val_nll" || e.Figures[0].Value != 1.25 {
		t.Errorf("SFT record: %+v, %v", e, ok)
	}
	e, ok = Progress("naive/seed-0", map[string]any{MetricStep: 3, MetricReward: 0.5, MetricMonitorTrainReward: 0.6, MetricMonitorHumanReward: 0.4})
	if !ok || e.Step != 3 || len(e.Figures) != 3 || e.Figures[2].Name != "human" || e.Unit != "iter" {
		t.Errorf("RL record: %+v, %v", e, ok)
	}
	if _, ok := Progress("x", map[string]any{MetricStep: 1, "perf/tokens_per_s": 9.0}); ok {
		t.Error("a record without headline figures made an event")
	}
	// An SFT step without an evaluation moves the bar: its step, no figure.
	e, ok = Progress("base", map[string]any{MetricStep: 13, MetricSFTLoss: 2.0})
	if !ok || e.Step != 13 || len(e.Figures) != 0 || e.Unit != "step" {
		t.Errorf("SFT step record: %+v, %v", e, ok)
	}
	// An RL run's config record: its length, counted in iterations.
	e, ok = Progress("naive/seed-0", map[string]any{"event": "config", "grpo/config": struct{}{}, MetricStep: 0, MetricTotalSteps: 20})
	if !ok || e.Steps != 20 || e.Unit != "iter" {
		t.Errorf("RL config record: %+v, %v", e, ok)
	}
	// The record opening a run carries its length: a display's 100%.
	e, ok = Progress("base", map[string]any{"event": "start", MetricStep: 0, MetricTotalSteps: 400})
	if !ok || e.Steps != 400 || len(e.Figures) != 0 {
		t.Errorf("start record: %+v, %v", e, ok)
	}
}

// Each trainer's first record says how many steps it will make, so that
// a display knows its 100% before the first step.
func TestTrainersLogTheirLength(t *testing.T) {
	first := func(t *testing.T, recs []map[string]any) map[string]any {
		t.Helper()
		if len(recs) == 0 {
			t.Fatal("no record")
		}
		return recs[0]
	}
	t.Run("sft", func(t *testing.T) {
		m, seqs := toySFT(t)
		cfg := smallSFT()
		cfg.Steps = 10
		var recs []map[string]any
		if _, err := SFT(context.Background(), m, seqs, cfg, t.TempDir(), func(r map[string]any) { recs = append(recs, r) }); err != nil {
			t.Fatal(err)
		}
		if got := first(t, recs)[MetricTotalSteps]; got != cfg.Steps {
			t.Errorf("first record %v: %s %v, want %d", recs[0], MetricTotalSteps, got, cfg.Steps)
		}
	})
	t.Run("grpo", func(t *testing.T) {
		cfg := smallGRPO()
		var recs []map[string]any
		if _, err := GRPO(context.Background(), toyPolicy(t, 80), addTask{}, addUser{}, nil, cfg, t.TempDir(), func(r map[string]any) { recs = append(recs, r) }); err != nil {
			t.Fatal(err)
		}
		if got := first(t, recs)[MetricTotalSteps]; got != cfg.Iterations {
			t.Errorf("first record %v: %s %v, want %d", recs[0], MetricTotalSteps, got, cfg.Iterations)
		}
	})
}
