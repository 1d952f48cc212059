package reproduce

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/train"
)

// --optimizers refuses an unknown name listing the known ones, a name
// given twice and a list without GRPO; Run refuses before it writes
// anything.
func TestCheckOptimizers(t *testing.T) {
	if err := CheckOptimizers(nil); err != nil {
		t.Errorf("the default: %v", err)
	}
	if err := CheckOptimizers(crossingNames()); err != nil {
		t.Errorf("every known optimizer: %v", err)
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"grpo", "ppo"}, `optimizer "ppo", want one of ` + strings.Join(crossingNames(), ", ")},
		{[]string{"grpo", optGRPOTurns.name, optGRPOTurns.name}, "grpo-turn-credit given twice"},
		{[]string{optGRPOGreedy.name}, "leave out grpo"},
	} {
		if err := CheckOptimizers(c.names); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.names, err, c.want)
		}
	}
	cfg := tinyConfig(t)
	cfg.Out, cfg.Optimizers = filepath.Join(t.TempDir(), "run"), []string{"grpo", "ppo"}
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), `optimizer "ppo"`) {
		t.Errorf("Run with an unknown optimizer: %v", err)
	}
	if _, err := os.Stat(cfg.Out); err == nil {
		t.Errorf("Run with an unknown optimizer made %s", cfg.Out)
	}
}

// Each optimizer crossed with the partners adds its naive, calibrated and
// oracle arms after GRPO's, in crossings' order whatever the order asked
// in; a GRPO variant's arms train with GRPO and its RL config field set.
func TestCrossedArms(t *testing.T) {
	r := openTiny(t, func(c *Config) { c.Optimizers = []string{optGRPOTurns.name, "grpo", optGRPOGreedy.name} })
	want := append(slices.Clone(Arms),
		"naive-grpo-greedy-baseline", "calibrated-grpo-greedy-baseline", "oracle-grpo-greedy-baseline",
		"naive-grpo-turn-credit", "calibrated-grpo-turn-credit", "oracle-grpo-turn-credit")
	if got := r.arms(); !slices.Equal(got, want) {
		t.Fatalf("arms %v, want %v", got, want)
	}
	if got := r.rlArms(); !slices.Equal(got, want[1:]) {
		t.Errorf("rl arms %v, want %v", got, want[1:])
	}
	for name, check := range map[string]func(train.RLConfig) bool{
		"calibrated-grpo-greedy-baseline": func(c train.RLConfig) bool {
			return c.Baseline == train.BaselineGreedy && c.TurnContinuations == 0
		},
		"oracle-grpo-turn-credit": func(c train.RLConfig) bool {
			return c.TurnContinuations == turnCreditContinuations && c.Baseline == ""
		},
		ArmCalibrated: func(c train.RLConfig) bool { return c.TurnContinuations == 0 && c.Baseline == "" },
	} {
		a, _ := r.armNamed(name)
		cfg := r.rlConfig(0)
		if a.optimizer.rlConfig != nil {
			a.optimizer.rlConfig(&cfg)
		}
		if !check(cfg) || cfg.Validate() != nil {
			t.Errorf("%s trains with baseline %q, turn continuations %d (%v)", name, cfg.Baseline, cfg.TurnContinuations, cfg.Validate())
		}
	}
	if name := r.optimizersName(); name != "grpo,grpo-greedy-baseline,grpo-turn-credit" {
		t.Errorf("the manifest's optimizers %q", name)
	}
}

// A crossed optimizer's claims are the partner ordering under it, against
// the base, filtered BC and calibrated GRPO, each noted as not the
// paper's; a run with GRPO alone reports the paper's claims alone, so its
// verdict and its Bonferroni level are what they were.
func TestCrossedClaims(t *testing.T) {
	evals := map[string][]evaluation{}
	for _, arm := range append(slices.Clone(Arms), ArmFilteredBC) {
		evals[arm] = []evaluation{{}}
	}
	var paper [][2]string
	for _, c := range paperClaims {
		if len(evals[c[0]]) > 0 && len(evals[c[1]]) > 0 {
			paper = append(paper, c)
		}
	}
	if got := pooledClaims(evals); !slices.Equal(got, paper) || len(paper) != 9 {
		t.Fatalf("default arms' claims %v, want the paper's %v", got, paper)
	}
	for _, arm := range []string{"naive-grpo-greedy-baseline", "calibrated-grpo-greedy-baseline", "oracle-grpo-greedy-baseline"} {
		evals[arm] = []evaluation{{}}
	}
	got := pooledClaims(evals)
	want := append(paper,
		[2]string{"calibrated-grpo-greedy-baseline", ArmStatic}, [2]string{"calibrated-grpo-greedy-baseline", "naive-grpo-greedy-baseline"},
		[2]string{"calibrated-grpo-greedy-baseline", ArmBase}, [2]string{"naive-grpo-greedy-baseline", ArmStatic},
		[2]string{"calibrated-grpo-greedy-baseline", "oracle-grpo-greedy-baseline"}, [2]string{"oracle-grpo-greedy-baseline", ArmBase},
		[2]string{"calibrated-grpo-greedy-baseline", ArmCalibrated}, [2]string{"calibrated-grpo-greedy-baseline", ArmFilteredBC})
	if !slices.Equal(got, want) {
		t.Fatalf("claims with the greedy-baseline arms\n%v\nwant\n%v", got, want)
	}
	for _, c := range want[len(paper):] {
		if p := claimPaper("mathchat", c[0], c[1]); p != "not in the paper: its arms trained by grpo-greedy-baseline" {
			t.Errorf("%s > %s: paper cell %q", c[0], c[1], p)
		}
	}
	if p := claimPaper("mathchat", ArmCalibrated, ArmStatic); p != "91.5 > 85.0" {
		t.Errorf("calibrated > static: paper cell %q", p)
	}
}
