package reproduce

import (
	"context"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/runfolder"
)

// A finished run folder given another optimizer and filtered BC trains only
// the arms it lacks, and ends holding what a run started with them makes:
// the same checkpoints, episodes, summaries and report. Its manifest
// records the grown settings and the command it grew from; dropping an
// optimizer it holds is refused.
func TestExtendingARunEqualsStartingWithTheArms(t *testing.T) {
	small := func(out string, opts []string, bc bool) Config {
		cfg := tinyConfig(t)
		cfg.Out, cfg.Optimizers, cfg.FilteredBC = out, opts, bc
		cfg.Preset.RLSeeds = 1
		cfg.Preset.RL.RFTLR = 2e-4 // rft's own rate (GRPO's is tiny's 1e-4)
		return cfg
	}
	grown, fresh := t.TempDir(), t.TempDir()
	if _, err := Run(context.Background(), small(grown, nil, false)); err != nil {
		t.Fatal(err)
	}
	f := &runfolder.Folder{Dir: grown}
	if !f.Done("calibrated-interactive/seed-0") || f.Done("calibrated-rft/seed-0") {
		t.Fatal("the first run: want the GRPO arms trained and no rft arm")
	}
	all := []string{"grpo", optRFT.name}
	if _, err := Run(context.Background(), small(grown, all, true)); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), small(fresh, all, true)); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, fresh, grown)

	var m struct {
		runfolder.Manifest
		Config runConfig `json:"config"`
	}
	if err := f.ReadJSON("manifest.json", &m); err != nil {
		t.Fatal(err)
	}
	if m.Config.Optimizers != "grpo,rft" || m.Config.FilteredBC == nil || len(m.Earlier) != 1 || m.Config.OptimizerLRs["rft"] != 2e-4 {
		t.Errorf("the grown manifest: optimizers %q (rates %v), filtered BC %v, %d earlier commands; want grpo,rft (rft 2e-4), set, 1", m.Config.Optimizers, m.Config.OptimizerLRs, m.Config.FilteredBC != nil, len(m.Earlier))
	}
	// Each arm trained at its optimizer's rate.
	for arm, want := range map[string]float64{"calibrated-interactive": 1e-4, "calibrated-rft": 2e-4, ArmStatic + "-rft": 2e-4} {
		var st struct {
			Settings struct {
				LR float64 `json:"lr"`
			} `json:"settings"`
		}
		if err := (&runfolder.Folder{Dir: f.Path("checkpoints/" + arm + "/seed-0/last")}).ReadJSON("trainer_state.json", &st); err != nil {
			t.Fatal(err)
		}
		if st.Settings.LR != want {
			t.Errorf("%s trained at %g, want %g", arm, st.Settings.LR, want)
		}
	}
	for _, c := range []struct {
		opts []string
		bc   bool
		want string
	}{
		{nil, true, "optimizers grpo,rft, not grpo (--optimizers: a run folder may gain optimizers, never lose one)"},
		{all, false, "filtered_bc true, not false"},
		{all, true, "optimizer_lrs rft=0.0002, not rft=0.0003"},
	} {
		cfg := small(grown, c.opts, c.bc)
		if strings.HasPrefix(c.want, "optimizer_lrs") {
			cfg.Preset.RL.RFTLR = 3e-4
		}
		if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("optimizers %v, filtered BC %v: %v, want a refusal naming %q", c.opts, c.bc, err, c.want)
		}
	}
}
