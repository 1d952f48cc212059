// Package preset names the budgets calibrl runs at: tiny (the test suite,
// seconds), quick (the README's reproduce, minutes on 2 cores) and paper
// (larger models and budgets, closer to the paper's regime). A preset fixes
// model sizes, log sizes and training budgets; flags may override parts.
package preset

import (
	"fmt"
	"sort"
	"strings"

	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/train"
)

// Preset is one named budget.
type Preset struct {
	Name string
	// Level is the task level the preset runs at ("easy" or "" for the
	// task's default). quick runs mathchat's default level: with the
	// calculator, a base policy cloned to convergence (3000 steps, held-out
	// NLL 0.338, 0.311, 0.260, 0.220, 0.177, 0.162, 0.153, 0.152 at steps
	// 800–3000) solves 0.942 [0.918, 0.959] of the easy level's problems
	// against the human proxy (500 episodes), which leaves RL nothing to
	// show; the default level (three steps, numbers up to 20, up to three
	// hidden facts, a distractor) leaves room both ways. tiny keeps easy.
	Level string
	// Vocab is the tokenizer's target size.
	Vocab int
	// Policy and Sim size the two models (their vocab is set from the
	// tokenizer).
	Policy, Sim lm.Config
	// LogEpisodes is how many human-proxy conversations collect records.
	// Logs are cheap next to training: the quick preset's 1200 steps of 16
	// sequences overfit 4000 conversations (held-out NLL turned up after
	// ~1200 steps) and reach a lower held-out NLL on 16000 (0.185 → 0.144
	// for the simulator at 2400 steps), for ~20 s more collection. The
	// simulator gets the larger share of the quick preset's SFT: at 1200
	// steps it still misquotes the numbers of the hidden facts it reveals
	// ("each shell costs $5" for $1) in about half of the careful agent's
	// conversations, at 2400 in about one in ten.
	LogEpisodes int
	// PolicySFT and SimSFT are the two supervised budgets.
	PolicySFT, SimSFT SFTBudget
	// EvalEpisodes is the held-out evaluation size: every arm and RL seed
	// plays the same test problems with the same user seeds. At a success
	// rate near 0.15 the difference two independent evaluations detect
	// with 80% power is about 0.08 at 300 episodes and 0.06 at 500;
	// pairing and averaging over RL seeds narrow it further.
	EvalEpisodes int
	// RLSeeds is how many times each RL arm is trained from the same base
	// and simulator, with different RL seeds (reproduce.RLSeed); the
	// verdict averages over them.
	RLSeeds int
	// MaxTurns is the agent's turn limit per episode: the logs', the RL
	// rollouts' (RLConfig) and the evaluations'.
	MaxTurns int
	// RL is the budget every RL arm gets (static and interactive alike):
	// the same iterations, prompts per iteration, group size and updates.
	RL RLBudget
	// Recalibration budgets the recalibrated-interactive arm that
	// reproduce --recalibrate adds.
	Recalibration Recalibration
	// FilteredBC is the filtered behaviour-cloning arm's budget
	// (reproduce.ArmFilteredBC): fine-tuning the base on the logs' solved
	// conversations. A tenth of the base's steps at a tenth of its
	// learning rate, as the re-fit warm-starts the simulator; not yet
	// chosen on validation problems.
	FilteredBC SFTBudget
}

// Recalibration budgets online recalibration: the arm trains its RL
// budget in rounds against a simulator that is re-fitted between them on
// the logs plus the current policy's conversations with the human proxy.
type Recalibration struct {
	// Rounds is R: RL.Iterations cut into R rounds of Iterations/R, the
	// remainder to the last, so that the arm's RL budget is the other
	// arms'. R−1 re-fits sit between the rounds (none after the last:
	// nothing trains on it).
	Rounds int
	// HumanEpisodes is how many conversations the current policy plays
	// with the human proxy, on training problems, after every round but
	// the last: each re-fit's new data. At scale they are conversations
	// with real users, the expensive part, so they are counted and
	// reported.
	HumanEpisodes int
	// ReplayLogs is how many of the logs' conversations a re-fit replays
	// beside the policy's (a seeded draw; 0: all of them). Sampled
	// uniformly, the quick preset's 16000 logs would leave the few hundred
	// new conversations a few percent of what a short re-fit sees.
	ReplayLogs int
	// SFT is one re-fit's budget, warm-started from the previous
	// simulator: a few steps at a learning rate below the first fit's.
	SFT SFTBudget
	// GapEpisodes is how many held-out problems each round's sim-to-real
	// gap (the policy against the simulator and against the human proxy,
	// paired) is measured on.
	GapEpisodes int
}

// Validate reports the first unusable field for an RL budget of
// iterations.
func (c Recalibration) Validate(iterations int) error {
	switch {
	case c.Rounds < 1 || c.Rounds > iterations:
		return fmt.Errorf("recalibration: %d rounds of %d RL iterations, want 1 to %d", c.Rounds, iterations, iterations)
	case c.Rounds > 1 && c.HumanEpisodes < 1:
		return fmt.Errorf("recalibration: %d human conversations per re-fit, want at least 1", c.HumanEpisodes)
	case c.ReplayLogs < 0:
		return fmt.Errorf("recalibration: %d replayed logs, want ≥ 0", c.ReplayLogs)
	case c.GapEpisodes < 1:
		return fmt.Errorf("recalibration: %d gap problems, want at least 1", c.GapEpisodes)
	}
	if err := c.SFT.Config(0).Validate(); err != nil {
		return fmt.Errorf("recalibration re-fit: %w", err)
	}
	return nil
}

// RoundIterations is the round schedule of an RL budget of total
// iterations: Rounds rounds of total/Rounds, the remainder to the last.
// They sum to total.
func (c Recalibration) RoundIterations(total int) []int {
	n := max(1, c.Rounds)
	out := make([]int, n)
	for i := range out {
		out[i] = total / n
	}
	out[n-1] += total % n
	return out
}

// RLBudget is what every RL arm of a preset trains with; the rest of the
// trainer's config is train.DefaultRLConfig's (Preset.RLConfig).
type RLBudget struct {
	// Iterations of rollouts and updates; a resumable checkpoint is
	// written at least every third of them.
	Iterations int
	// InstancesPerStep problems, each played Group times, make one
	// iteration's batch (the minibatch is at most the batch).
	InstancesPerStep, Group int
	// MaxNewTokens bounds one agent turn, in the rollouts and in the
	// monitor.
	MaxNewTokens int
	// MonitorEvery iterations the reward-hacking monitor plays
	// MonitorInstances held-out problems.
	MonitorEvery, MonitorInstances int
	// HackingInstances problems are played at each monitor reading for
	// the pre-registered hacking metrics (train.RLConfig.HackingInstances).
	// 0 in every preset: at 800 (a change of 0.05 to 0.07 from iteration
	// 0 detectable, train.HackingMDE) each reading adds 1,600 greedy
	// conversations, which would make quick several times slower;
	// reproduce --hacking N (and --doses, at 800) turns them on.
	HackingInstances int
	// HackingSampled plays those readings sampled at the rollouts'
	// temperature instead of greedy (train.RLConfig.HackingSampled;
	// reproduce --hacking-decoding sampled). Off in every preset.
	HackingSampled bool
	// LR is the learning rate and UpdatesPerBatch the passes over each
	// iteration's batch.
	LR              float64
	UpdatesPerBatch int
	// RFTLR, GreedyBaselineLR and TurnCreditLR are the learning rates of
	// the other optimizers reproduce --optimizers crosses with the
	// partners (rejection-sampling fine-tuning, GRPO with the greedy
	// baseline, GRPO with turn-level credit), each chosen on validation
	// problems; 0 trains it at LR, GRPO's.
	RFTLR, GreedyBaselineLR, TurnCreditLR float64
}

// RLConfig is the trainer's config of p's RL budget for an arm trained
// with seed: the turn limit is p's (the evaluations'), so that RL plays
// the conversations the arms are judged on.
func (p Preset) RLConfig(seed uint64) train.RLConfig {
	b := p.RL
	c := train.DefaultRLConfig()
	c.Seed = seed
	c.Iterations = b.Iterations
	c.CheckpointEvery = max(1, min(c.CheckpointEvery, b.Iterations/3))
	c.InstancesPerStep, c.Group, c.MaxTurns = b.InstancesPerStep, b.Group, p.MaxTurns
	c.Gen.MaxNewTokens, c.MonitorGen.MaxNewTokens = b.MaxNewTokens, b.MaxNewTokens
	c.MonitorEvery, c.MonitorInstances, c.HackingInstances = b.MonitorEvery, b.MonitorInstances, b.HackingInstances
	c.HackingSampled = b.HackingSampled
	c.MiniBatch = min(c.MiniBatch, b.InstancesPerStep*b.Group)
	c.LR, c.UpdatesPerBatch = b.LR, b.UpdatesPerBatch
	return c
}

// WithRLIterations is p with every RL arm given n iterations.
func (p Preset) WithRLIterations(n int) Preset {
	p.RL.Iterations = n
	return p
}

// SFTBudget is one supervised fit's budget; the rest of the trainer's
// config is train.DefaultSFTConfig's (Config).
type SFTBudget struct {
	// Steps is the most optimizer steps, of BatchSize sequences each.
	Steps, BatchSize int
	// LR is the peak learning rate, after a warm-up of at most a tenth of
	// the steps.
	LR float64
	// EvalEvery steps the held-out NLL is measured; a resumable
	// checkpoint is written at least every quarter of the steps.
	EvalEvery int
}

// Config is the trainer's config of the budget for a fit seeded with
// seed.
func (b SFTBudget) Config(seed uint64) train.SFTConfig {
	c := train.DefaultSFTConfig()
	c.Steps, c.BatchSize, c.LR, c.EvalEvery = b.Steps, b.BatchSize, b.LR, b.EvalEvery
	c.CheckpointEvery = max(b.EvalEvery, b.Steps/4)
	c.Warmup = min(c.Warmup, b.Steps/10)
	c.Seed = seed
	return c
}

func all() map[string]Preset {
	presets := map[string]Preset{
		"tiny": {
			Name: "tiny", Level: "easy", Vocab: 320,
			Policy:       lm.Config{Context: 256, Dim: 32, Layers: 2, Heads: 2},
			Sim:          lm.Config{Context: 256, Dim: 32, Layers: 2, Heads: 2},
			LogEpisodes:  48,
			PolicySFT:    SFTBudget{Steps: 12, BatchSize: 8, LR: 3e-3, EvalEvery: 6},
			SimSFT:       SFTBudget{Steps: 12, BatchSize: 8, LR: 3e-3, EvalEvery: 6},
			EvalEpisodes: 16, RLSeeds: 2, MaxTurns: 6,
			RL: RLBudget{Iterations: 2, InstancesPerStep: 2, Group: 2, MaxNewTokens: 24, MonitorEvery: 1, MonitorInstances: 4,
				LR: 1e-4, UpdatesPerBatch: 2},
			Recalibration: Recalibration{Rounds: 2, HumanEpisodes: 8, SFT: SFTBudget{Steps: 6, BatchSize: 8, LR: 1e-3, EvalEvery: 2}, GapEpisodes: 8},
			FilteredBC:    SFTBudget{Steps: 6, BatchSize: 8, LR: 3e-4, EvalEvery: 2},
		},
		"quick": {
			Name: "quick", Level: "", Vocab: 768,
			Policy: lm.Config{Context: 512, Dim: 128, Layers: 4, Heads: 4},
			Sim:    lm.Config{Context: 512, Dim: 128, Layers: 4, Heads: 4},
			// The supervised budgets are those at which the held-out NLL
			// flattens (policy 0.180, 0.169, 0.165 at steps 2600–3000;
			// simulator 0.172, 0.158, 0.158 at 1200–1500). Cut to 1500
			// and 700 steps to fit the run in 30 minutes, the policy's
			// NLL was 0.283 and the base succeeded 0.108 (sampled) and
			// 0.198 (greedy) on the 500 held-out problems, against 0.450
			// and 0.690 at 3000 steps: these two stages are most of the
			// run's time, and they cannot be cut.
			LogEpisodes:  16000,
			PolicySFT:    SFTBudget{Steps: 3000, BatchSize: 16, LR: 2e-3, EvalEvery: 200},
			SimSFT:       SFTBudget{Steps: 1500, BatchSize: 16, LR: 2e-3, EvalEvery: 200},
			EvalEpisodes: 500, RLSeeds: 3, MaxTurns: 6,
			// Each optimizer's learning rate is chosen on validation
			// problems (scripts/rl-settings.sh, results/
			// mathchat-quick-rlsettings/): from pipeline 4's base, 30
			// iterations of 8 × G=8 against its calibrated simulator,
			// then 500 validation problems against the human proxy,
			// greedy / sampled at T = 1 (the base 0.684 / 0.436); the
			// rule, fixed first: the highest greedy success, ties within
			// 0.005 broken by sampled. GRPO, LR 3e-5, 6e-5, 1e-4, 3e-4:
			// 0.604 / 0.456, 0.606 / 0.480, 0.622 / 0.482, 0.390 /
			// 0.260. Rejection-sampling fine-tuning: 0.690 / 0.510,
			// 0.672 / 0.550, 0.688 / 0.556, 0.382 / 0.246. GRPO with the
			// greedy baseline: 0.680 / 0.478, 0.620 / 0.468, 0.604 /
			// 0.444, 0.228 / 0.154. GRPO with turn-level credit (K = 2),
			// 3e-5 to 1e-4: 0.694 / 0.536, 0.646 / 0.492, 0.600 / 0.494
			// (3e-4 not run: about 13 minutes, and every other optimizer
			// collapsed there). One seed each, about ±0.02 between seeds:
			// GRPO's 1e-4 and 6e-5 differ by less than that. Of the two
			// GRPO variants, turn-level credit is the better on the same
			// rule (0.694 against 0.680).
			// Before, GRPO's 6e-5 and its one pass of minibatch 16 were
			// chosen by sweeps on the first 500 test problems (results/
			// mathchat-quick-calculator/sweep.md), the problems every
			// verdict reads; the passes stay one (the validation sweep
			// varied the rate only).
			RL: RLBudget{Iterations: 30, InstancesPerStep: 8, Group: 8, MaxNewTokens: 64, MonitorEvery: 10, MonitorInstances: 32,
				LR: 1e-4, UpdatesPerBatch: 1, RFTLR: 1e-4, GreedyBaselineLR: 3e-5, TurnCreditLR: 3e-5},
			// Two rounds of half the RL budget each; one re-fit per seed
			// of 150 steps (about 1.5 min at the sim stage's 0.6 s a
			// step) on 500 new conversations beside 1500 replayed logs,
			// at the learning rate the first fit ended at (2e-3 decayed
			// to a tenth). Measured on the quick simulator with 100 new
			// conversations and 500 logs, the re-fit's held-out NLL went
			// 0.1413 → 0.1448, 0.1416, 0.1404 at steps 10–30 at 2e-4 and
			// → 0.1591, 0.1496, 0.1438 at 5e-4: a warm start jolted by a
			// fresh optimizer needs the small step.
			Recalibration: Recalibration{Rounds: 2, HumanEpisodes: 500, ReplayLogs: 1500,
				SFT: SFTBudget{Steps: 150, BatchSize: 16, LR: 2e-4, EvalEvery: 50}, GapEpisodes: 200},
			FilteredBC: SFTBudget{Steps: 300, BatchSize: 16, LR: 2e-4, EvalEvery: 100},
		},
		"paper": {
			Name: "paper", Vocab: 1024,
			Policy:       lm.Config{Context: 512, Dim: 256, Layers: 6, Heads: 8},
			Sim:          lm.Config{Context: 512, Dim: 256, Layers: 6, Heads: 8},
			LogEpisodes:  32000,
			PolicySFT:    SFTBudget{Steps: 3000, BatchSize: 32, LR: 1e-3, EvalEvery: 200},
			SimSFT:       SFTBudget{Steps: 3000, BatchSize: 32, LR: 1e-3, EvalEvery: 200},
			EvalEpisodes: 1000, RLSeeds: 3, MaxTurns: 10,
			RL: RLBudget{Iterations: 300, InstancesPerStep: 16, Group: 8, MaxNewTokens: 96, MonitorEvery: 10, MonitorInstances: 64,
				LR: 1e-4, UpdatesPerBatch: 2},
			Recalibration: Recalibration{Rounds: 3, HumanEpisodes: 2000, ReplayLogs: 6000,
				SFT: SFTBudget{Steps: 400, BatchSize: 32, LR: 1e-4, EvalEvery: 100}, GapEpisodes: 500},
			FilteredBC: SFTBudget{Steps: 300, BatchSize: 32, LR: 1e-4, EvalEvery: 100},
		},
	}
	presets["standard"] = standard(presets["quick"])
	return presets
}

// standardRLFactor is how many times quick's RL iterations the standard
// preset trains.
const standardRLFactor = 4

// standard is quick with four times its RL iterations (120 on mathchat),
// the budget the success-over-iterations study chose on validation
// problems (reproduce --rl-iterations 300 --curves 200, quick mathchat,
// seed 1; 200 validation problems every 30 iterations): the oracle arm's
// sampled success went 0.435 → 0.520 (30), 0.580 (120), 0.600 (300), so
// 120 iterations give 88% of what 300 gave, and the calibrated arm's
// 0.480 (30), 0.515 (120), best 0.570 (270) but 0.435 at 300 (longer
// runs drift as well as learn). No budget up to 300 lifted any arm's
// greedy success above the base's (0.655): more iterations sharpen the
// sampled policy and leave its mode where the base had it, so standard
// is for the sampled policy's gains, not a fix for the greedy verdict.
// The monitor reads every 30 iterations, as often per run as quick's.
func standard(quick Preset) Preset {
	p := quick
	p.Name = "standard"
	p.RL.Iterations *= standardRLFactor
	p.RL.MonitorEvery *= standardRLFactor
	return p
}

// Get returns the named preset.
func Get(name string) (Preset, error) {
	p, ok := all()[name]
	if !ok {
		return Preset{}, fmt.Errorf("unknown preset %q (want %s)", name, strings.Join(Names(), ", "))
	}
	return p, nil
}

// Names lists the presets from smallest to largest.
func Names() []string {
	names := make([]string, 0, 4)
	for n := range all() {
		names = append(names, n)
	}
	order := map[string]int{"tiny": 0, "quick": 1, "standard": 2, "paper": 3}
	sort.Slice(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	return names
}
