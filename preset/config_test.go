package preset

import (
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/train"
)

// oldConfig is what a preset gave a task before presets held budgets:
// whole trainer configs, with a seed of 0 that every caller overwrote.
type oldConfig struct {
	preset, task           string
	rl                     train.RLConfig
	policy, sim, refit     train.SFTConfig
	level                  string
	maxTurns, evalEpisodes int
}

// oldConfigs are those configs as the presets built them, printed from
// the code of the time, with the seed set.
func oldConfigs(seed uint64) []oldConfig {
	rl := func(iterations, checkpointEvery, instances, group, maxTurns, maxNew, updates, miniBatch int, lr float64, monitorEvery, monitorInstances int) train.RLConfig {
		return train.RLConfig{Iterations: iterations, Seed: seed, CheckpointEvery: checkpointEvery, Split: "train", InstancesPerStep: instances, Group: group,
			MaxTurns: maxTurns, Gen: chatlm.GenConfig{MaxNewTokens: maxNew, Temperature: 1, TopP: 1}, ClipEps: 0.2, Beta: 0.001, AdvEps: 0.0001,
			UpdatesPerBatch: updates, MiniBatch: miniBatch, LossMean: "token", LR: lr, Warmup: 10, ClipNorm: 1, MonitorEvery: monitorEvery,
			MonitorInstances: monitorInstances, MonitorSplit: "test", MonitorStart: 5000, MonitorGen: chatlm.GenConfig{MaxNewTokens: maxNew, Temperature: 0, TopP: 1}}
	}
	sft := func(steps, batch int, lr float64, warmup, evalEvery, checkpointEvery int) train.SFTConfig {
		return train.SFTConfig{Steps: steps, BatchSize: batch, LR: lr, Warmup: warmup, WeightDecay: 0.1, ClipNorm: 1, ValFraction: 0.1,
			EvalEvery: evalEvery, Patience: 4, CheckpointEvery: checkpointEvery, Seed: seed}
	}
	return []oldConfig{
		{preset: "tiny", task: "mathchat", rl: rl(2, 1, 2, 2, 6, 24, 2, 4, 0.0001, 1, 4),
			policy: sft(12, 8, 0.003, 1, 6, 6), sim: sft(12, 8, 0.003, 1, 6, 6), refit: sft(6, 8, 0.001, 0, 2, 2),
			level: "easy", maxTurns: 6, evalEpisodes: 16},
		// quick mathchat's RL rate, 6e-5 before, chosen again on validation
		// problems (preset.go); docedit keeps 6e-5.
		{preset: "quick", task: "mathchat", rl: rl(30, 10, 8, 8, 6, 64, 1, 16, 1e-04, 10, 32),
			policy: sft(3000, 16, 0.002, 20, 200, 750), sim: sft(1500, 16, 0.002, 20, 200, 375), refit: sft(150, 16, 0.0002, 15, 50, 50),
			level: "", maxTurns: 6, evalEpisodes: 500},
		{preset: "quick", task: "docedit", rl: rl(16, 5, 8, 8, 6, 64, 1, 16, 6e-05, 10, 32),
			policy: sft(1200, 16, 0.002, 20, 200, 300), sim: sft(700, 16, 0.002, 20, 200, 200), refit: sft(150, 16, 0.0002, 15, 50, 50),
			level: "easy", maxTurns: 6, evalEpisodes: 300},
		{preset: "paper", task: "mathchat", rl: rl(300, 10, 16, 8, 10, 96, 2, 16, 0.0001, 10, 64),
			policy: sft(3000, 32, 0.001, 20, 200, 750), sim: sft(3000, 32, 0.001, 20, 200, 750), refit: sft(400, 32, 0.0001, 20, 100, 100),
			level: "", maxTurns: 10, evalEpisodes: 1000},
	}
}

// The budgets build exactly the trainer configs the presets held before,
// seed included: otherwise every run of a preset changes.
func TestBudgetsBuildTheOldTrainerConfigs(t *testing.T) {
	for _, seed := range []uint64{0, 7} {
		for _, want := range oldConfigs(seed) {
			p, err := Get(want.preset)
			if err != nil {
				t.Fatal(err)
			}
			p = p.For(want.task)
			name := want.preset + " " + want.task
			if got := p.RLConfig(seed); !reflect.DeepEqual(got, want.rl) {
				t.Errorf("%s seed %d: RL config\n got %+v\nwant %+v", name, seed, got, want.rl)
			}
			for _, c := range []struct {
				what      string
				got, want train.SFTConfig
			}{{"policy", p.PolicySFT.Config(seed), want.policy}, {"sim", p.SimSFT.Config(seed), want.sim}, {"re-fit", p.Recalibration.SFT.Config(seed), want.refit}} {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s seed %d: %s SFT config\n got %+v\nwant %+v", name, seed, c.what, c.got, c.want)
				}
			}
			if p.Level != want.level || p.MaxTurns != want.maxTurns || p.EvalEpisodes != want.evalEpisodes {
				t.Errorf("%s: level %q, %d turns, %d eval episodes; want %q, %d, %d", name, p.Level, p.MaxTurns, p.EvalEpisodes, want.level, want.maxTurns, want.evalEpisodes)
			}
		}
	}
}

// The level goes on a name without one: a bare family name, or one with
// options only (before them); a name with its own level or data keeps
// it.
func TestTaskNameAddsTheLevel(t *testing.T) {
	tiny, _ := Get("tiny")
	quick, _ := Get("quick")
	for _, c := range []struct {
		p          Preset
		name, want string
	}{
		{tiny, "mathchat", "mathchat:easy"},
		{tiny, "mathchat:h4", "mathchat:h4"},
		{tiny, "mathchat:data=sha256:" + strings.Repeat("0", 64), "mathchat:data=sha256:" + strings.Repeat("0", 64)},
		{quick, "mathchat", "mathchat"},
		{quick.For("docedit"), "docedit", "docedit:easy"},
		{quick.For("docedit"), "docedit:quote:leak=2x", "docedit:easy:quote:leak=2x"},
		{quick.For("docedit"), "docedit:h4:quote", "docedit:h4:quote"},
		{tiny, "mathchat:nocalc", "mathchat:easy:nocalc"},
	} {
		if got := c.p.TaskName(c.name); got != c.want {
			t.Errorf("%s preset, level %q: TaskName(%q) = %q, want %q", c.p.Name, c.p.Level, c.name, got, c.want)
		}
	}
}
