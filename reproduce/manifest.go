package reproduce

// The run's manifest: what manifest.json records under "config", and the
// refusal to resume a folder started with other settings.

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

// manifestFormat is the version of runConfig this program writes.
// Format 0 (no "format" key) is the map-shaped config runs wrote before
// the struct: the same keys, so that it reads into runConfig as it is.
const manifestFormat = 1

// runConfig is a run's configuration as manifest.json records it. The
// trainer configs are those RL seed index 0 trains with (other RL seeds
// differ in Seed alone), and the base policy's and the simulator's those
// the run fits when it fits its own. Settings at their defaults go
// unsaid (omitempty), as they did before they existed, so that a folder
// from before a setting reads as the default.
type runConfig struct {
	Format       int             `json:"format,omitempty"`
	Task         string          `json:"task"`
	Preset       string          `json:"preset"`
	Profiles     []string        `json:"profiles"`
	RL           train.RLConfig  `json:"rl"`
	Policy       lm.Config       `json:"policy"`
	Sim          lm.Config       `json:"sim"`
	PolicySFT    train.SFTConfig `json:"policy_sft"`
	SimSFT       train.SFTConfig `json:"sim_sft"`
	LogEpisodes  int             `json:"log_episodes"`
	EvalEpisodes int             `json:"eval_episodes"`
	MaxTurns     int             `json:"max_turns"`
	// RLSeeds is nil in a folder from before arms had several RL seeds
	// (checkpoints/ARM, not checkpoints/ARM/seed-K).
	RLSeeds *int `json:"rl_seeds"`
	// EvalDecodings is nil in a folder from before sampled evaluations
	// (its eval/ is greedy).
	EvalDecodings []string `json:"eval_decodings"`
	// EvalSlice is "" for the test slice.
	EvalSlice string `json:"eval_slice,omitempty"`
	// StaticReward is the static rewards comma separated in
	// staticRewardOrder, "" for the outcome alone (staticRewardsName).
	StaticReward  string `json:"static_reward,omitempty"`
	StaticFill    int    `json:"static_fill,omitempty"`
	StaticPrompts int    `json:"static_prompts,omitempty"`
	StaticTokens  int    `json:"static_tokens,omitempty"`
	// Optimizers is the optimizers crossed with the partners comma
	// separated in crossings' order (optimizersName), "" for GRPO alone,
	// as folders from before the field hold.
	Optimizers string `json:"optimizers,omitempty"`
	// OptimizerLRs are the learning rates of the optimizers but GRPO
	// (whose is RL's), by name; nil in a folder from before them, whose
	// optimizers trained at GRPO's.
	OptimizerLRs map[string]float64 `json:"optimizer_lrs,omitempty"`
	// Recalibration is nil in a run without the recalibrated arm, and in
	// a folder from before this record (its rounds were the preset's).
	Recalibration *recalibrationRecord `json:"recalibration,omitempty"`
	// RLIterations is Config.RLIterations; RL holds them too.
	RLIterations int `json:"rl_iterations,omitempty"`
	Curves       int `json:"curves,omitempty"`
	// SimCopy is Config.SimCopy; SimCopyKind the copy it held the
	// simulator to (run.simCopy), "" in a folder from before the field
	// (numbers, then every task's); SimCopyWords its value words
	// (chatlm.User.ValueWords), nil in a folder from before them.
	SimCopy      bool      `json:"sim_copy,omitempty"`
	SimCopyKind  string    `json:"sim_copy_kind,omitempty"`
	SimCopyWords []string  `json:"sim_copy_words,omitempty"`
	TuneGrid     []float64 `json:"tune_grid,omitempty"`
	TuneEpisodes int       `json:"tune_episodes,omitempty"`
	// FilteredBC is the filtered-BC arm's trainer config, nil without it.
	FilteredBC *train.SFTConfig `json:"filtered_bc,omitempty"`
	// Precision is the models' arithmetic as it ran (lm.ActivePrecision),
	// "" for fp32, as folders from before the field hold; SamplePrecision
	// the sampler's where it differs (--sample-precision), else "".
	Precision       string `json:"precision,omitempty"`
	SamplePrecision string `json:"sample_precision,omitempty"`
}

// recalibrationRecord is the recalibration budget (preset.Recalibration)
// as the manifest holds it.
type recalibrationRecord struct {
	Rounds        int `json:"rounds"`
	GapEpisodes   int `json:"gap_episodes"`
	HumanEpisodes int `json:"human_episodes"`
	ReplayLogs    int `json:"replay_logs"`
	RefitSteps    int `json:"refit_steps"`
}

func recalibrationOf(c preset.Recalibration) *recalibrationRecord {
	return &recalibrationRecord{c.Rounds, c.GapEpisodes, c.HumanEpisodes, c.ReplayLogs, c.SFT.Steps}
}

// runConfig is this run's configuration as the manifest records it.
func (r *run) runConfig() runConfig {
	p, seeds := r.cfg.Preset, r.seeds()
	c := runConfig{Format: manifestFormat, Task: r.cfg.Task, Preset: p.Name, Profiles: r.cfg.Profiles, RL: r.rlConfig(0),
		Policy: p.Policy, Sim: p.Sim, PolicySFT: p.PolicySFT.Config(r.cfg.Seed), SimSFT: p.SimSFT.Config(r.cfg.Seed),
		LogEpisodes: p.LogEpisodes, EvalEpisodes: p.EvalEpisodes, MaxTurns: p.MaxTurns, RLSeeds: &seeds, EvalDecodings: decodingNames(),
		StaticPrompts: r.cfg.StaticPrompts, StaticTokens: r.cfg.StaticTokens, RLIterations: r.cfg.RLIterations, Curves: r.cfg.Curves,
		SimCopy: r.cfg.SimCopy}
	if r.cfg.SimCopy {
		c.SimCopyKind, c.SimCopyWords = r.simCopy().String(), chatlm.CopyWords(r.t, r.simCopy())
	}
	if r.slice() != eval.TestSlice {
		c.EvalSlice = r.slice().Name
	}
	if rewards := r.staticRewardsName(); rewards != train.StaticOutcome || r.cfg.StaticFill != 0 {
		c.StaticReward, c.StaticFill = rewards, r.cfg.StaticFill
	}
	if name := r.optimizersName(); name != optGRPO.name {
		c.Optimizers = name
		c.OptimizerLRs = map[string]float64{}
		for _, o := range r.crossings()[1:] {
			c.OptimizerLRs[o.name] = o.interactive.learningRate(p.RL)
		}
	}
	if r.cfg.Recalibrate {
		c.Recalibration = recalibrationOf(p.Recalibration)
	}
	if len(r.cfg.TuneGrid) > 0 {
		c.TuneGrid, c.TuneEpisodes = r.cfg.TuneGrid, r.tuneEpisodes()
	}
	if r.cfg.FilteredBC {
		fc := p.FilteredBC.Config(r.cfg.Seed)
		c.FilteredBC = &fc
	}
	if pr := lm.ActivePrecision(); pr != lm.FP32 {
		c.Precision = pr.String()
	}
	if sp := lm.ActiveSamplePrecision(); sp != lm.ActivePrecision() {
		c.SamplePrecision = sp.String()
	}
	return c
}

// manifest writes manifest.json in a new run folder; in one started
// before, it refuses to resume when a setting that decides what the
// folder holds differs, naming the field.
func (r *run) manifest() error {
	var old runfolder.Manifest
	var oldConfig struct {
		Config json.RawMessage `json:"config"`
	}
	err := r.f.ReadJSON("manifest.json", &old)
	if errors.Is(err, os.ErrNotExist) {
		return r.f.WriteManifest(runfolder.Manifest{Command: os.Args, Seed: r.cfg.Seed, Config: r.runConfig()})
	} else if err != nil {
		return err
	}
	if err := r.f.ReadJSON("manifest.json", &oldConfig); err != nil {
		return err
	}
	if old.Seed != r.cfg.Seed {
		return fmt.Errorf("reproduce: %s was started with seed %d, not %d: use another --out", r.cfg.Out, old.Seed, r.cfg.Seed)
	}
	if len(oldConfig.Config) == 0 || string(oldConfig.Config) == "null" {
		return nil // a manifest with no config: nothing to compare
	}
	var c runConfig
	if err := json.Unmarshal(oldConfig.Config, &c); err != nil {
		return fmt.Errorf("reproduce: %s: manifest.json's config does not read as a run's: %w: use another --out", r.cfg.Out, err)
	}
	added, err := r.resumable(c)
	if err != nil || len(added) == 0 {
		return err
	}
	// The folder grows by arms: every stage it holds is one this run
	// would make (an arm trains and is evaluated from the base alone, with
	// its own seeds), so the grown folder is the one a run started with
	// this command makes, and its manifest says so; the report is due
	// again (runPlan) with the new arms' claims.
	r.cfg.Log.Info("reproduce: extending the run folder", "out", r.cfg.Out, "adding", strings.Join(added, "; "))
	return r.f.WriteManifest(runfolder.Manifest{Command: os.Args, Seed: r.cfg.Seed, Config: r.runConfig(),
		Started: old.Started, Earlier: append(old.Earlier, old.Command)})
}

// resumable refuses a run folder whose manifest records settings, old,
// that differ from this run's in what the folder holds; the refusal names
// the field, its old and its new value. A run may add arms the folder
// lacks (an optimizer crossed with the partners, filtered BC) and keep
// every one it holds: added says what it adds, nil when nothing.
func (r *run) resumable(old runConfig) (added []string, err error) {
	now := r.runConfig()
	if old.Format > manifestFormat {
		return nil, fmt.Errorf("reproduce: %s was written by a newer calibrl (manifest format %d; this one reads up to %d): use another --out", r.cfg.Out, old.Format, manifestFormat)
	}
	if old.Task != now.Task && task.WithSimLedger(old.Task) == now.Task {
		return nil, fmt.Errorf("reproduce: %s holds a run of %s, whose simulator has no ledger, not %s: resume it with --sim-ledger=false (and --sim-copy=false if it was made without copying), or use another --out", r.cfg.Out, old.Task, now.Task)
	}
	if old.Task != now.Task || old.Preset != now.Preset {
		return nil, fmt.Errorf("reproduce: %s holds a %s/%s run, not %s/%s (task, preset): use another --out", r.cfg.Out, old.Task, old.Preset, now.Task, now.Preset)
	}
	if old.RLSeeds == nil {
		return nil, fmt.Errorf("reproduce: %s was made before arms had several RL seeds (checkpoints/ARM, not checkpoints/ARM/seed-K): use another --out", r.cfg.Out)
	}
	if old.EvalDecodings == nil {
		// Its eval/ holds greedy evaluations, which this version reads as
		// sampled ones.
		return nil, fmt.Errorf("reproduce: %s was made before evaluations were sampled at the RL temperature (its eval/ is greedy): use another --out", r.cfg.Out)
	}
	oldSeeds := 0
	if old.RLSeeds != nil {
		oldSeeds = *old.RLSeeds
	}
	// A folder from before a setting holds its default; the recalibration
	// budget, from before its record, is the preset's.
	oldRecal := old.Recalibration
	if oldRecal == nil || !r.cfg.Recalibrate {
		oldRecal = now.Recalibration
	}
	// Arms a run adds: optimizers the folder lacks (when it keeps every
	// one it holds), filtered BC.
	oldOpts, nowOpts := cmp.Or(old.Optimizers, optGRPO.name), r.optimizersName()
	oldSet, nowSet := strings.Split(oldOpts, ","), strings.Split(nowOpts, ",")
	if !slices.ContainsFunc(oldSet, func(o string) bool { return !slices.Contains(nowSet, o) }) {
		for _, o := range nowSet {
			if !slices.Contains(oldSet, o) {
				added = append(added, "optimizer "+o)
			}
		}
		oldOpts = nowOpts
	}
	oldBC := old.FilteredBC != nil
	if !oldBC && now.FilteredBC != nil {
		added, oldBC = append(added, "filtered BC"), true
	}
	for _, f := range []struct {
		field    string
		old, now any
		flag     string
	}{
		{"rl_seeds", oldSeeds, *now.RLSeeds, "--rl-seeds"},
		{"eval_slice", cmp.Or(old.EvalSlice, eval.TestSlice.Name), r.slice().Name, "--eval-slice"},
		{"rl.Iterations", old.RL.Iterations, now.RL.Iterations, "--rl-iterations"},
		{"rl.LR", old.RL.LR, now.RL.LR, "the preset's RL learning rate, which another calibrl version may set otherwise"},
		{"optimizer_lrs", heldLRs(old, now), heldLRs(now, old), "the preset's learning rates of the other optimizers"},
		{"curves", old.Curves, now.Curves, "--curves; 0: none"},
		{"sim_copy", old.SimCopy, now.SimCopy, "--sim-copy: true, false or auto, the task's choice"},
		{"sim_copy_kind", cmp.Or(old.SimCopyKind, now.SimCopyKind), now.SimCopyKind, "the copy the task holds its simulator to, which another calibrl version may set otherwise"},
		{"sim_copy_words", heldWords(old, now), strings.Join(now.SimCopyWords, ","), "the words the task's values begin with, which another calibrl version may set otherwise"},
		{"tune_grid", old.TuneGrid, now.TuneGrid, "--tune-grid"},
		{"static_reward", cmp.Or(old.StaticReward, train.StaticOutcome), r.staticRewardsName(), "--static-reward"},
		{"static_fill", old.StaticFill, r.cfg.StaticFill, "--static-fill"},
		{"static_prompts", old.StaticPrompts, now.StaticPrompts, "--static-prompts; 0: the preset's"},
		{"static_tokens", old.StaticTokens, now.StaticTokens, "--static-tokens; 0: a count of groups"},
		{"optimizers", oldOpts, nowOpts, "--optimizers: a run folder may gain optimizers, never lose one"},
		{"recalibration", oldRecal, now.Recalibration, "--recalibrate and its budget"},
		{"filtered_bc", oldBC, now.FilteredBC != nil, "--filtered-bc: a run folder may gain it, never lose it"},
		{"precision", cmp.Or(old.Precision, lm.FP32.String()), cmp.Or(now.Precision, lm.FP32.String()), "--precision, bf16 running as fp32 on a CPU without bf16 instructions"},
		{"sample_precision", cmp.Or(old.SamplePrecision, "--precision's"), cmp.Or(now.SamplePrecision, "--precision's"), "--sample-precision"},
	} {
		if fmt.Sprint(f.old) != fmt.Sprint(f.now) {
			return nil, fmt.Errorf("reproduce: %s was started with %s %s, not %s (%s): use another --out", r.cfg.Out, f.field, show(f.old), show(f.now), f.flag)
		}
	}
	return added, nil
}

// heldWords is the value words old's simulator copied with, as a list;
// now's where old records a copy kind but no words from before them.
func heldWords(old, now runConfig) string {
	if old.SimCopyKind == "" {
		return strings.Join(now.SimCopyWords, ",")
	}
	return strings.Join(old.SimCopyWords, ",")
}

// heldLRs is c's learning rate of each optimizer but GRPO that other
// holds too, as "name=lr" in c's order: an optimizer a run adds has no old
// rate to differ from, and one a folder from before the record trained at
// GRPO's.
func heldLRs(c, other runConfig) string {
	var out []string
	for _, o := range strings.Split(c.Optimizers, ",") {
		if o == "" || o == optGRPO.name || !slices.Contains(strings.Split(other.Optimizers, ","), o) {
			continue
		}
		lr, ok := c.OptimizerLRs[o]
		if !ok {
			lr = c.RL.LR
		}
		out = append(out, fmt.Sprintf("%s=%g", o, lr))
	}
	return strings.Join(out, ",")
}

// show is a manifest value as a refusal prints it: a record's fields by
// name, nil as "none".
func show(v any) string {
	switch v := v.(type) {
	case *recalibrationRecord:
		if v == nil {
			return "none"
		}
		return fmt.Sprintf("%+v", *v)
	case []float64:
		if v == nil {
			return "none"
		}
	}
	return fmt.Sprint(v)
}

func decodingNames() []string {
	names := make([]string, len(decodings))
	for i, d := range decodings {
		names[i] = d.name
	}
	return names
}
