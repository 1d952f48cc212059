package reproduce

import (
	"slices"
	"testing"

	"github.com/calibrl/calibrl/train"
)

// The table holds each arm's partner, optimizer and budget, in report
// order, for the settings that add arms; every arm but the base trains in
// exactly one way.
func TestArmTable(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
		arms []string
	}{
		{"default", nil, Arms},
		{"every arm", func(c *Config) {
			c.FilteredBC, c.Recalibrate = true, true
			c.StaticRewards = []string{train.StaticContinuation, train.StaticOutcome}
		}, []string{ArmBase, ArmStatic, ArmStaticContinuation, ArmNaive, ArmCalibrated, ArmOracle, ArmFilteredBC, ArmRecalibrated, ArmRefitControl}},
	} {
		r := openTiny(t, c.edit)
		table := r.armTable()
		var names []string
		for _, a := range table {
			names = append(names, a.name)
			trains, staged := a.optimizer.train != nil, a.optimizer.stages != nil
			if a.name == ArmBase {
				if trains || staged {
					t.Errorf("%s: the base trains", c.name)
				}
				continue
			}
			if trains == staged {
				t.Errorf("%s: %s has train %v and stages %v, want exactly one", c.name, a.name, trains, staged)
			}
		}
		if !slices.Equal(names, c.arms) || !slices.Equal(r.arms(), c.arms) {
			t.Errorf("%s: arms %v, want %v", c.name, names, c.arms)
		}
		if want := slices.DeleteFunc(slices.Clone(c.arms[1:]), func(a string) bool { return a == ArmRecalibrated || a == ArmRefitControl }); !slices.Equal(r.trainedArms(), want) {
			t.Errorf("%s: one-stage arms %v, want %v", c.name, r.trainedArms(), want)
		}
	}

	r := openTiny(t, func(c *Config) {
		c.FilteredBC, c.RLIterations, c.StaticPrompts, c.StaticFill, c.StaticTokens = true, 7, 5, 2, 300
		c.StaticRewards = []string{train.StaticOutcome, train.StaticBehaviour}
	})
	want := map[string]struct {
		partner, optimizer string
		reward             string
		budget             budget
	}{
		ArmStatic:                               {"static", "static-context-rl", train.StaticOutcome, budget{7, 5, 300}},
		ArmStatic + "-" + train.StaticBehaviour: {"static", "static-context-rl", train.StaticBehaviour, budget{7, 5, 300}},
		ArmNaive:                                {"naive", "grpo", "", budget{iterations: 7}},
		ArmCalibrated:                           {"calibrated", "grpo", "", budget{iterations: 7}},
		ArmOracle:                               {"oracle", "grpo", "", budget{iterations: 7}},
		ArmFilteredBC:                           {"logs", "filtered-bc", "", budget{iterations: r.cfg.Preset.FilteredBC.Steps}},
	}
	for _, a := range r.armTable()[1:] {
		w, ok := want[a.name]
		if !ok || a.partner.name != w.partner || a.optimizer.name != w.optimizer || a.partner.staticReward != w.reward || a.budget != w.budget {
			t.Errorf("%s: partner %s (reward %q), optimizer %s, budget %+v; want %+v", a.name, a.partner.name, a.partner.staticReward, a.optimizer.name, a.budget, w)
		}
		if (a.optimizer.name == "grpo") != (a.partner.user != nil && a.optimizer.rl && a.partner.staticReward == "") {
			t.Errorf("%s: a GRPO arm needs a partner that plays the user", a.name)
		}
	}
	if got := r.rlArms(); !slices.Equal(got, []string{ArmStatic, ArmStatic + "-" + train.StaticBehaviour, ArmNaive, ArmCalibrated, ArmOracle}) {
		t.Errorf("RL arms %v", got)
	}
	// The static arms' trainer config is their budget's.
	for _, name := range r.staticArms() {
		a, _ := r.armNamed(name)
		sc := r.staticConfig(r.rlConfig(0), a)
		if sc.InstancesPerStep != 5 || sc.GradTokens != 300 || sc.FillRounds != 2 || sc.Reward != a.partner.staticReward || sc.Iterations != 7 {
			t.Errorf("%s: static config %+v", name, sc)
		}
	}
}
