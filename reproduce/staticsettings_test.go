package reproduce

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The static arm's own settings (continuation reward, filled rounds) reach
// its trainer, are recorded in the manifest, and a run cannot resume with
// others; a bad one is refused before anything trains.
func TestStaticArmSettings(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Out, cfg.StaticReward, cfg.StaticFill = t.TempDir(), "continuation", 3
	cfg.Preset.RLSeeds = 1
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(cfg.Out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(manifest), `"static_reward": "continuation"`) || !strings.Contains(string(manifest), `"static_fill": 3`) {
		t.Errorf("the manifest does not record the static arm's settings")
	}
	metrics, err := os.ReadFile(filepath.Join(cfg.Out, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(metrics), `"static/fill_rounds"`) {
		t.Error("the static arm did not fill its rounds")
	}
	cfg.StaticFill = 0
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "static reward continuation and fill 3") {
		t.Errorf("resumed with other static settings: %v", err)
	}
	bad := tinyConfig(t)
	bad.Out, bad.StaticReward = t.TempDir(), "acceptance"
	if _, err := Run(context.Background(), bad); err == nil || !strings.Contains(err.Error(), `static reward "acceptance"`) {
		t.Errorf("an unknown static reward: %v", err)
	}
}
