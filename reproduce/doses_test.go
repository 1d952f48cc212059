package reproduce

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A dose-response study runs the task at its own rates and at each dose
// on one shared base: the base policy's weights are the same file in
// both runs, and doses.md has a
// row for every setting. A dose that changes more than the naive user or
// the reward is refused.
func TestDosesShareTheBase(t *testing.T) {
	if testing.Short() {
		t.Skip("two tiny pipelines")
	}
	cfg := tinyConfig(t)
	cfg.Task, cfg.Out = "docedit:easy:quote", t.TempDir()
	if err := Doses(t.Context(), cfg, []string{"leak=0x:syc=2x"}); err != nil {
		t.Fatal(err)
	}
	for _, arm := range []string{ArmNaive, ArmOracle} {
		a, errA := os.ReadFile(filepath.Join(cfg.Out, "1x", "checkpoints", arm, "seed-0", "ref", "model.safetensors"))
		b, errB := os.ReadFile(filepath.Join(cfg.Out, "leak-0x_syc-2x", "checkpoints", arm, "seed-0", "ref", "model.safetensors"))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s: the runs started RL from different bases (%v, %v)", arm, errA, errB)
		}
	}
	md, err := os.ReadFile(filepath.Join(cfg.Out, "doses.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 1x (the task's rates) |", "| leak=0x:syc=2x |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("doses.md lacks %q:\n%s", want, md)
		}
	}
	if err := Doses(t.Context(), cfg, []string{"quote"}); err == nil || !strings.Contains(err.Error(), "change only the naive simulator") {
		t.Errorf("a dose that is not a dose: got %v", err)
	}
}
