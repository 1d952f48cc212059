package reproduce

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The static arm's own settings (continuation reward, filled rounds, a
// budget in gradient tokens) reach its trainer, are recorded in the manifest, and a run cannot resume with
// others; a bad one is refused before anything trains.
func TestStaticArmSettings(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Out, cfg.StaticRewards, cfg.StaticFill, cfg.StaticPrompts, cfg.StaticTokens = t.TempDir(), []string{"continuation"}, 3, 3, 40
	cfg.Preset.RLSeeds = 1
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(cfg.Out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(manifest), `"static_reward": "continuation"`) || !strings.Contains(string(manifest), `"static_fill": 3`) ||
		!strings.Contains(string(manifest), `"static_prompts": 3`) || !strings.Contains(string(manifest), `"static_tokens": 40`) {
		t.Errorf("the manifest does not record the static arm's settings")
	}
	metrics, err := os.ReadFile(filepath.Join(cfg.Out, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(metrics), `"static/fill_rounds"`) {
		t.Error("the static arm did not fill its rounds")
	}
	// The tiny preset plays 2 problems an iteration: the static trainer's
	// state says 3.
	states, _ := filepath.Glob(filepath.Join(cfg.Out, "checkpoints", ArmStatic, "*", "last", "trainer_state.json"))
	if len(states) == 0 {
		t.Fatal("no static trainer state")
	}
	for _, st := range states {
		if b, err := os.ReadFile(st); err != nil || !strings.Contains(string(b), `"instances_per_step": 3`) {
			t.Errorf("%s (%v) has not 3 prompts per iteration: StaticPrompts did not reach the trainer", st, err)
		}
	}
	cfg.StaticPrompts = 0
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "started with static_prompts 3, not 0 (--static-prompts") {
		t.Errorf("resumed with other static prompts: %v", err)
	}
	cfg.StaticPrompts = 3
	cfg.StaticTokens = 0
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "started with static_tokens 40, not 0 (--static-tokens") {
		t.Errorf("resumed with another gradient-token budget: %v", err)
	}
	cfg.StaticFill = 0 // tokens 0 too: tokens without fill are refused up front
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "started with static_fill 3, not 0 (--static-fill)") {
		t.Errorf("resumed with other static settings: %v", err)
	}
	bad := tinyConfig(t)
	bad.Out, bad.StaticRewards = t.TempDir(), []string{"acceptance"}
	if _, err := Run(context.Background(), bad); err == nil || !strings.Contains(err.Error(), `static reward "acceptance"`) {
		t.Errorf("an unknown static reward: %v", err)
	}
	bad = tinyConfig(t)
	bad.Out, bad.StaticTokens = filepath.Join(t.TempDir(), "run"), 100
	if _, err := Run(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "static gradient tokens 100") {
		t.Errorf("gradient tokens without fill rounds: %v", err)
	}
	if _, err := os.Stat(bad.Out); !os.IsNotExist(err) {
		t.Errorf("a refused run left its folder behind (%v)", err)
	}
}

// The filtered-BC arm trains from the base on the solved logs, per seed,
// and stands in every table beside the others with its two claims; a run
// started without it does not resume with it.
func TestFilteredBCArm(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Out, cfg.FilteredBC = t.TempDir(), true
	rows, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var row *Row
	for i := range rows {
		if rows[i].Arm == ArmFilteredBC {
			row = &rows[i]
		}
	}
	if row == nil || len(row.Seeds) != cfg.Preset.RLSeeds {
		t.Fatalf("no filtered-bc row with %d seeds in %+v", cfg.Preset.RLSeeds, rows)
	}
	var claimed []string
	for _, r := range rows {
		for _, c := range r.Comparisons {
			if strings.Contains(c.Claim, ArmFilteredBC) {
				claimed = append(claimed, c.Claim+": "+c.Paper)
			}
		}
	}
	if len(claimed) != 2 || !strings.Contains(claimed[0]+claimed[1], "not in the paper: the cheap alternative to RL") {
		t.Errorf("filtered-bc claims: %q", claimed)
	}
	metrics, err := os.ReadFile(filepath.Join(cfg.Out, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(metrics), `"stage":"filtered-bc/seed-1"`) {
		t.Error("no SFT records of filtered-bc's second seed")
	}
	cfg.FilteredBC = false
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "started with filtered_bc true, not false (--filtered-bc: a run folder may gain it, never lose it)") {
		t.Errorf("resumed without the arm: %v", err)
	}
}
