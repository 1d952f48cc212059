package reproduce

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/train"
)

// A tiny run with --optimizers grpo,rft trains the rft arms (every
// iteration logs the filter's kept conversations; some are kept and
// trained on: gradient tokens > 0), evaluates them under both decodings
// and reports them: summary rows with their seeds and the rft claims.
func TestRFTArmsTrainAndReport(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Seed, cfg.Out = 1, t.TempDir()
	cfg.Optimizers = []string{"grpo", optRFT.name}
	// Tiny's 12-step base solves no problem, so the filter would keep
	// nothing: a 600-step base solves a few (0.06 held out), and groups of
	// 8 on 4 problems give the filter 64 conversations an iteration. One
	// RL seed keeps the run at seconds.
	cfg.Preset.RLSeeds = 1
	cfg.Preset.PolicySFT.Steps = 600
	cfg.Preset.RL.Group, cfg.Preset.RL.InstancesPerStep = 8, 4
	rows, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	arms := []string{ArmStatic + "-rft", "naive-rft", "calibrated-rft", "oracle-rft"}

	recs, err := (&runfolder.Folder{Dir: cfg.Out}).ReadMetrics()
	if err != nil {
		t.Fatal(err)
	}
	iterations := map[string]int{}
	var kept, tokens float64
	for _, rec := range recs {
		stage, _ := rec["stage"].(string)
		arm, ok := strings.CutSuffix(stage, "/seed-0")
		if _, it := rec[train.MetricReward]; !ok || !it || !slices.Contains(arms, arm) {
			continue
		}
		iterations[arm]++
		k, ok := rec[train.MetricRFTKept].(float64)
		g, ok2 := rec[train.MetricGradTokens].(float64)
		if !ok || !ok2 {
			t.Fatalf("%s: an iteration without %s or %s: %v", stage, train.MetricRFTKept, train.MetricGradTokens, rec)
		}
		if (k == 0) != (g == 0) {
			t.Errorf("%s: %v conversations kept, %v gradient tokens", stage, k, g)
		}
		kept, tokens = kept+k, tokens+g
	}
	for _, arm := range arms {
		if iterations[arm] != cfg.Preset.RL.Iterations {
			t.Errorf("%s logged %d iterations, want %d", arm, iterations[arm], cfg.Preset.RL.Iterations)
		}
	}
	if kept == 0 || tokens == 0 {
		t.Fatalf("the rft arms kept %v conversations, trained %v gradient tokens: want some", kept, tokens)
	}
	t.Logf("rft arms: %v conversations kept, %v gradient tokens", kept, tokens)

	for _, arm := range arms {
		for _, d := range []decoding{sampled, greedy} {
			if _, err := os.Stat((&runfolder.Folder{Dir: cfg.Out}).Path(evalFile(d, arm, 0) + ".episodes.jsonl")); err != nil {
				t.Errorf("%s not evaluated %s: %v", arm, d.name, err)
			}
		}
		i := slices.IndexFunc(rows, func(r Row) bool { return r.Arm == arm })
		if i < 0 || len(rows[i].Seeds) != 1 || rows[i].Success == nil || rows[i].Turns == 0 {
			t.Errorf("summary rows: %s missing or without its seed", arm)
		}
	}
	claims := map[string]bool{}
	for _, r := range rows {
		for _, c := range r.Comparisons {
			claims[c.Claim] = true
		}
	}
	for _, c := range []string{"calibrated-rft > static-rft", "calibrated-rft > naive-rft", "naive-rft > static-rft",
		"static-rft > base", "calibrated-rft > oracle-rft", "oracle-rft > base", "calibrated-rft > calibrated-interactive",
		"calibrated-interactive > static"} {
		if !claims[c] {
			t.Errorf("summary lacks the claim %s", c)
		}
	}
}
