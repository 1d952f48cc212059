package train

import "testing"

func TestProgressOfRecords(t *testing.T) {
	e, ok := Progress("base", map[string]any{MetricStep: 12, MetricSFTValNLL: 1.25, MetricSFTLoss: 2.0})
	if !ok || e.Stage != "base" || e.Step != 12 || len(e.Figures) != 1 || e.Figures[0].Name != "val_nll" || e.Figures[0].Value != 1.25 {
		t.Errorf("SFT record: %+v, %v", e, ok)
	}
	e, ok = Progress("naive/seed-0", map[string]any{MetricStep: 3, MetricReward: 0.5, MetricMonitorTrainReward: 0.6, MetricMonitorHumanReward: 0.4})
	if !ok || e.Step != 3 || len(e.Figures) != 3 || e.Figures[2].Name != "human_reward" {
		t.Errorf("RL record: %+v, %v", e, ok)
	}
	if _, ok := Progress("x", map[string]any{MetricStep: 1, "perf/tokens_per_s": 9.0}); ok {
		t.Error("a record without headline figures made an event")
	}
}
