// Package reproduce runs the paper's comparison end to end on one task:
//
//  1. collect: scripted agents talk with the human proxy; the logs stand in
//     for real human interaction data;
//  2. tokenizer: one byte-level BPE for both models, trained on the logs;
//  3. base: the base policy, cloned from the logs' agent turns (SFT);
//  4. sim: the calibrated simulator, fitted to the logs' user turns while
//     conditioned on the oracle context (Phase I);
//  5. arms, each from the same base with the same RL budget: static
//     context RL (logged histories, completions by the behaviour agent
//     against the calibrated simulator), naive interactive (GRPO against
//     the naive simulator), calibrated interactive (GRPO against the
//     calibrated simulator, Phase II) and oracle interactive (GRPO against
//     the human proxy itself: the privileged upper reference); each arm is
//     trained once per RL seed (Preset.RLSeeds, seed k from RLSeed), into
//     checkpoints/ARM/seed-K; with Config.StaticRewards outcome and
//     continuation, static context RL once per reward (static and
//     static-continuation, arms.go); with Config.Recalibrate also recalibrated
//     interactive (recalibrate.go: the calibrated arm's budget in rounds,
//     the simulator re-fitted between them on the policy's conversations
//     with the human proxy);
//  6. eval: the base and every arm and seed against the human proxy on
//     the held-out test split (personas and problems never used in
//     training), all on the same problems with the same user seeds, so
//     that arms are compared problem by problem (paired); twice: sampled
//     at the RL rollouts' temperature (the policy RL optimises; the
//     verdict) and greedy (its mode; a second table);
//  7. report: report.md (opening with the verdict on the paper's claims),
//     summary.json, plots and report.html (the same as one page for a
//     browser, package runreport).
//
// Every stage (one per arm and seed, in training and in evaluation) writes
// into the run folder and marks itself done, so an interrupted run started
// again resumes at the stage (and, inside a training stage, at the
// checkpoint) where it stopped.
//
// Run folder:
//
//	logs.jsonl, tokenizer.json          the logs and the shared tokenizer
//	checkpoints/base, checkpoints/sim   the base policy and the simulator
//	checkpoints/ARM/seed-K              arm ARM trained with RL seed index K
//	eval/base.json, eval/base.episodes.jsonl
//	eval/ARM/seed-K.json, eval/ARM/seed-K.episodes.jsonl
//	eval-greedy/…                       the same, decoded greedily
//	stages/ARM/seed-K, stages/eval/…    done markers
//	metrics.jsonl                       records tagged "stage": "ARM/seed-K"
//	summary.json, summary-greedy.json, report.md, report.html, plots/
package reproduce

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/progress"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

// The arms, in report order.
const (
	ArmBase       = "base"
	ArmStatic     = "static"
	ArmNaive      = "naive-interactive"
	ArmCalibrated = "calibrated-interactive"
	ArmOracle     = "oracle-interactive"
	// With Config.Recalibrate: the online-recalibration arm
	// (recalibrate.go) and its control (refitcontrol.go), the calibrated
	// simulator re-fitted once before RL on as many human conversations
	// played by the base policy.
	ArmRecalibrated = "recalibrated-interactive"
	ArmRefitControl = "refit-control-interactive"
)

// Arms lists the arms of a run with the default settings, in report
// order (the run's own are its armTable's).
var Arms = []string{ArmBase, ArmStatic, ArmNaive, ArmCalibrated, ArmOracle}

// RLSeed is the RL seed of seed index k in a run seeded with seed. Index 0
// trains with the run's seed itself, so a one-seed run trains exactly as
// runs did before there were several; index k > 0 uses
// SplitMix64(seed XOR k·0xd1b54a32d192ed03), far from the seeds the run's
// other stages derive by adding multiples of 0x9e3779b97f4a7c15.
func RLSeed(seed uint64, k int) uint64 {
	if k == 0 {
		return seed
	}
	x := seed ^ uint64(k)*0xd1b54a32d192ed03
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// seedName is the folder, stage and metrics name of an RL arm's seed
// index k: "static/seed-0".
func seedName(arm string, k int) string { return fmt.Sprintf("%s/seed-%d", arm, k) }

// policyName is the name of arm's seed index k in folders, stages and
// records: the seedName of a trained arm; the arm's own name for the base
// (and the base without its tool), which no RL seed trains.
func policyName(arm string, k int) string {
	if arm == ArmBase || arm == baseNoTool {
		return arm
	}
	return seedName(arm, k)
}

// seedsOf is how many seeds arm has: one for the base, r.seeds() for a
// trained arm.
func (r *run) seedsOf(arm string) int {
	if arm == ArmBase {
		return 1
	}
	return r.seeds()
}

// slice is the part of the test split the evaluations play.
func (r *run) slice() eval.Slice {
	if r.cfg.EvalSlice == (eval.Slice{}) {
		return eval.TestSlice
	}
	return r.cfg.EvalSlice
}

// seeds is how many RL seeds each arm gets: the preset's, at least one.
func (r *run) seeds() int { return max(1, r.cfg.Preset.RLSeeds) }

// rlConfig is the trainer's config of every RL arm's seed index k, its
// monitor the curves' when the run has them.
func (r *run) rlConfig(k int) train.RLConfig {
	c := r.cfg.Preset.RLConfig(RLSeed(r.cfg.Seed, k))
	r.curvesOn(&c)
	return c
}

// Config sets a reproduction.
type Config struct {
	Task   string
	Preset preset.Preset
	// Out is the run folder.
	Out string
	// Seed seeds every stage; RL seed index k trains with RLSeed(Seed, k).
	// Preset.RLSeeds sets how many.
	Seed uint64
	// Profiles are the scripted agents whose conversations make the logs;
	// default every profile of the task.
	Profiles []string
	// Log receives the run's log lines; default slog.Default().
	Log *slog.Logger
	// Progress, when set, receives the stages as they start and the
	// training figures inside them, for a display.
	Progress progress.Func
	// Shared, when set, is a folder written by Prepare: the run takes its
	// logs (those of its task), the base policy and the simulator from
	// there instead of making its own, so that several runs (the horizon
	// study's, one per H) differ only in what comes after.
	Shared string
	// PooledIn is the folder whose pooled.md pools this run with other
	// pipelines (RunPipelines); "" for a run alone, whose report says that
	// one pipeline's verdict is not the method's.
	PooledIn string
	// Recalibrate adds the recalibrated-interactive arm (recalibrate.go;
	// budget Preset.Recalibration): RL in rounds against a simulator
	// re-fitted between them on the policy's conversations with the human
	// proxy. Off by default: its human conversations are the expensive
	// part at scale.
	Recalibrate bool
	// TuneGrid, when set, adds the best-temperature decoding (besttemp.go):
	// each policy plays TuneEpisodes validation problems (default
	// min(200, EvalEpisodes)) at each of these ascending temperatures (0:
	// greedy), and is evaluated on the test problems at the best.
	TuneGrid     []float64
	TuneEpisodes int
	// FilteredBC adds the filtered behaviour-cloning arm (filteredbc.go):
	// the base fine-tuned on the logs' solved conversations, the cheap
	// alternative to RL a user would try first.
	FilteredBC bool
	// StaticRewards are how static context RL scores a candidate
	// (train.StaticConfig.Reward; default outcome alone), one static arm
	// each (staticArms: ArmStatic for the first in the order outcome,
	// continuation, behaviour, ArmStatic-REWARD for each other, so
	// outcome and continuation train ArmStatic and
	// ArmStaticContinuation), and StaticFill their FillRounds (default 0):
	// static context RL's own settings, so that it can be run with as many
	// informative groups as the interactive arms train on, and with the
	// continuation reward that trains asking turns beside the outcome one.
	StaticRewards []string
	StaticFill    int
	// Optimizers are the optimizers crossed with the partners (crossings
	// in armtable.go): "grpo" (the paper's arms, always trained) and any
	// of "rft", "grpo-greedy-baseline", "grpo-turn-credit", each adding its
	// PARTNER-OPTIMIZER arms and claims. Default GRPO alone.
	Optimizers []string
	// StaticPrompts, when positive, is the static arm's prompts (groups)
	// per iteration in place of the preset's InstancesPerStep. Filling
	// alone cannot match the interactive arms' gradient: it stops at
	// InstancesPerStep informative groups, and a static candidate is one
	// turn (about 30 trained tokens on quick mathchat) where an
	// interactive sample is a conversation (about 100). Measured on quick
	// mathchat (train/grad_tokens, 8 iterations from the quick run's base,
	// seed 1): calibrated GRPO 4828 ± 813 an iteration; static outcome
	// 494 ± 322 at fill 0, 1103 ± 227 at fill 2, 1824 ± 248 at fill 4,
	// 5037 ± 426 at 21 prompts with fill 6 (+4%).
	StaticPrompts int
	// StaticTokens, when positive, is each static arm's budget in gradient
	// tokens per iteration (train.StaticConfig.GradTokens; it needs
	// StaticFill): rounds are drawn until the informative groups hold
	// that many, whatever their number. A count of groups cannot match
	// both rewards at once: at 21 groups with fill 6 the outcome arm
	// trained 5,189–5,257 tokens an iteration on the three quick
	// pipelines and the continuation arm 3,424–3,454, against the
	// interactive arms' 3,790–4,374 (their mean in each pipeline).
	StaticTokens int
	// EvalSlice is the part of the test split every evaluation plays
	// (eval.Slice): the zero value and eval.TestSlice carry a verdict;
	// eval.ValidationSlice is for runs that choose settings.
	EvalSlice eval.Slice
	// RLIterations, when positive, replaces the preset's RL iterations for
	// every arm (the budget study: 300 is ten times quick's).
	RLIterations int
	// Curves, when positive, is the success-vs-iterations study
	// (itercurves.go): at each of about ten monitor readings every RL arm
	// plays Curves validation problems against the human proxy, greedy
	// and sampled; report.md gains the curves and their table.
	Curves int
	// Jobs is how many independent stages (the RL arms and seeds, the
	// evaluations, the gaps; the base policy beside the simulator) run
	// side by side, the cores divided between them; ≤ 0: DefaultJobs.
	// Results do not depend on it.
	Jobs int
	// SimCopy holds the calibrated simulator to what its problem holds,
	// as the task copies it (chatlm.CopyOf: mathchat's numbers, support's
	// whole values; the user spec learned+copy:DIR), wherever the run
	// plays it: the gate, the calibrated arms' training and monitor, the
	// sim-to-real gaps. The fit is the same.
	SimCopy bool
	// SimLedger gives the calibrated simulator its own ledger where the
	// task offers one (task.WithSimLedger adds task.WithUserLedger to
	// Task): after each agent turn that asks about a fact the user holds,
	// a note to the simulator alone stating it. Unlike SimCopy it changes
	// the fit: the simulator is trained with the notes.
	SimLedger bool
	// SimGate checks the simulator before RL (fidelity.go); the zero
	// value measures it and flags one outside DefaultSimGateBound.
	SimGate SimGate
}

// MaxRLSeeds bounds Preset.RLSeeds: the report holds every seed's
// evaluations of every arm at once (a hundred seeds of the paper preset's
// 500 held-out episodes, two decodings, four arms: 400,000 episodes), and
// each seed trains four arms.
const MaxRLSeeds = 100

// Run executes (or resumes) every stage and returns the summary rows: it
// checks the config, opens the run folder (refusing one started with
// other settings), plans the stages, runs those not done and writes the
// report.
func Run(ctx context.Context, cfg Config) ([]Row, error) {
	if err := check(cfg); err != nil {
		return nil, err
	}
	r, err := openRun(cfg)
	if err != nil {
		return nil, err
	}
	defer r.f.Close()
	if err := r.manifest(); err != nil {
		return nil, err
	}
	groups, err := r.plan()
	if err != nil {
		return nil, err
	}
	if err := r.runPlan(ctx, groups); err != nil {
		return nil, err
	}
	return r.finish()
}

// check refuses an unusable config before the run folder opens.
func check(cfg Config) error {
	if cfg.Preset.RLSeeds > MaxRLSeeds {
		return fmt.Errorf("reproduce: %d RL seeds, the limit is %d", cfg.Preset.RLSeeds, MaxRLSeeds)
	}
	if err := CheckStaticRewards(cfg.StaticRewards); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	if err := CheckOptimizers(cfg.Optimizers); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	if err := checkCurves(cfg); err != nil {
		return err
	}
	if cfg.StaticTokens < 0 || cfg.StaticTokens > 0 && cfg.StaticFill == 0 {
		return fmt.Errorf("reproduce: static gradient tokens %d: want 0, or a positive budget with fill rounds (StaticFill) to draw it", cfg.StaticTokens)
	}
	if err := cfg.SimGate.Check(); err != nil {
		return err
	}
	return checkRecalibration(cfg)
}

// plan lists the run's stages in groups: the stages in one group run side
// by side (runStages); the groups run in order, each reading only what
// earlier ones wrote.
func (r *run) plan() ([][]stage, error) {
	groups, err := r.prepStages()
	if err != nil {
		return nil, err
	}
	// The simulator is checked before any arm trains against it.
	if gate := r.simGateStages(); len(gate) > 0 {
		groups = append(groups, gate)
	}
	// The one-stage arms are listed seed by seed, so that an interrupted
	// run has whole replicates; the stages of an arm trained in several
	// (the recalibrated arm's rounds) follow one another, each alone.
	var arms []stage
	for k := range r.seeds() {
		for _, a := range r.armTable() {
			if a.optimizer.train != nil {
				arms = append(arms, stage{seedName(a.name, k), r.trainArm(a, k), r.armCost(a)})
			}
		}
	}
	groups = append(groups, arms)
	for k := range r.seeds() {
		for _, a := range r.stagedArms() {
			for _, s := range a.optimizer.stages(r, k) {
				groups = append(groups, []stage{s})
			}
		}
	}
	if err := checkTuneGrid(r.cfg.TuneGrid); err != nil {
		return nil, err
	}
	for _, a := range r.armTable() {
		if a.partner.staticReward == "" {
			continue
		}
		if err := r.staticConfig(r.rlConfig(0), a).Validate(); err != nil {
			return nil, fmt.Errorf("reproduce: the %s arm: %w", a.name, err)
		}
	}
	if len(r.cfg.TuneGrid) > 0 && r.cfg.Recalibrate {
		return nil, errors.New("reproduce: the best-temperature decoding does not tune the recalibrated arm yet: run --recalibrate without it")
	}
	evals, bestEvals := r.evalStages()
	// The sim-to-real gap of every trained policy (fidelity.go), after the
	// evaluations whose human-proxy conversations it reuses.
	groups = append(groups, evals)
	if len(bestEvals) > 0 {
		groups = append(groups, bestEvals)
	}
	return append(groups, r.fidelityStages()), nil
}

// prepStages are the stages that make the logs, the tokenizer, the base
// and the simulator, none when the run takes them from a shared folder;
// they set where the run reads them.
func (r *run) prepStages() ([][]stage, error) {
	cfg := r.cfg
	if cfg.Shared == "" {
		p := &prep{f: r.f, preset: cfg.Preset, seed: cfg.Seed, log: cfg.Log, progress: cfg.Progress,
			tasks: []logSet{{t: r.t, name: cfg.Task, profiles: cfg.Profiles, maxTurns: cfg.Preset.MaxTurns,
				episodes: cfg.Preset.LogEpisodes, file: "logs.jsonl"}}}
		r.logsPath, r.shared = p.tasks[0].path(r.f), r.f.Path("checkpoints")
		return p.groups(), nil
	}
	if _, err := os.Stat(filepath.Join(cfg.Shared, "stages", "sim")); err != nil {
		return nil, fmt.Errorf("reproduce: shared folder %s is not prepared (no stages/sim): %w", cfg.Shared, err)
	}
	// A dose of the naive simulator or the reward shares its task's logs.
	r.logsPath, r.shared = filepath.Join(cfg.Shared, sharedLogsFile(task.StripDoses(cfg.Task))), filepath.Join(cfg.Shared, "checkpoints")
	if _, err := os.Stat(r.logsPath); err != nil {
		return nil, fmt.Errorf("reproduce: shared folder %s has no logs for %s: %w", cfg.Shared, cfg.Task, err)
	}
	return nil, nil
}

// evalStages are the evaluations of the base and every arm and seed under
// each decoding, with the best temperatures' sweeps beside the first; the
// best-temperature evaluations, which read those sweeps, come apart.
func (r *run) evalStages() (evals, bestEvals []stage) {
	evals = r.tuneStages()
	c := conversationsCost(kindEval, r.cfg.Preset, r.cfg.Preset.EvalEpisodes)
	for _, d := range r.decodings() {
		var list []stage
		list = append(list, stage{evalFile(d, ArmBase, 0), r.evaluate(d, ArmBase, 0), c})
		if d != best && dialog.ToolOf(r.t) != nil {
			list = append(list, stage{evalFile(d, baseNoTool, 0), r.evaluate(d, baseNoTool, 0), c})
		}
		for k := range r.seeds() {
			for _, arm := range r.trainedArms() {
				list = append(list, stage{evalFile(d, arm, k), r.evaluate(d, arm, k), c})
			}
		}
		if d == best {
			bestEvals = append(bestEvals, list...)
			continue
		}
		for _, a := range r.stagedArms() {
			for k := range r.seeds() {
				list = append(list, stage{evalFile(d, a.name, k), r.evaluate(d, a.name, k), c})
			}
		}
		evals = append(evals, list...)
	}
	return evals, bestEvals
}

// runPlan runs the stages not yet done. The report is the last stage: a
// run started again with every stage done (the report's included) writes
// nothing; any stage still to run makes the report due again.
func (r *run) runPlan(ctx context.Context, groups [][]stage) error {
	pending := false
	for _, g := range groups {
		for _, s := range g {
			pending = pending || !r.f.Done(s.name)
		}
	}
	if pending {
		if err := r.f.Undo(reportStage); err != nil {
			return err
		}
	}
	return runStages(ctx, r.f, groups, r.cfg.Jobs, r.cfg.Log, r.cfg.Progress)
}

// finish writes the report, or returns the rows of the report an earlier
// run wrote when nothing was left to do.
func (r *run) finish() ([]Row, error) {
	if r.f.Done(reportStage) {
		var rows []Row
		if err := r.f.ReadJSON("summary.json", &rows); err == nil {
			r.cfg.Log.Info("reproduce: finished earlier; nothing to do", "out", r.cfg.Out)
			return rows, nil
		}
	}
	prof := openProfile(r.f)
	prof.begin(reportStage)
	rows, err := r.report()
	if err != nil {
		return nil, err
	}
	if err := prof.end(reportStage); err != nil {
		return nil, err
	}
	return rows, r.f.MarkDone(reportStage)
}

// taskName is the task the run plays: Task at the preset's level, with
// the simulator's ledger where SimLedger asks for it.
func (c Config) taskName() string {
	name := c.Preset.TaskName(c.Task)
	if c.SimLedger {
		name = task.WithSimLedger(name)
	}
	return name
}

// recipeFlags are the flags that give this run's task and simulator as a
// user types them: the task without the ledger option SimLedger adds
// (the flag's auto puts it back), and --sim-ledger or --sim-copy where
// the run set them apart from the task's auto choice.
func (c Config) recipeFlags() string {
	flags := "--task " + task.WithoutSimLedger(c.Task)
	auto := task.SimMendsOf(c.Task)
	if c.SimLedger != auto {
		flags += fmt.Sprintf(" --sim-ledger=%t", c.SimLedger)
	}
	if c.SimCopy != auto {
		flags += fmt.Sprintf(" --sim-copy=%t", c.SimCopy)
	}
	return flags
}

// openRun fills cfg's defaults (the logger, the preset's task level,
// the task's profiles), finds its task and opens its run folder; the
// caller closes r.f.
func openRun(cfg Config) (*run, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.Task = cfg.taskName()
	t, err := task.Lookup(cfg.Task)
	if err != nil {
		return nil, err
	}
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = t.Profiles()
	}
	if cfg.RLIterations < 0 {
		return nil, fmt.Errorf("reproduce: %d RL iterations, want > 0 (or 0: the preset's)", cfg.RLIterations)
	} else if cfg.RLIterations > 0 {
		cfg.Preset = cfg.Preset.WithRLIterations(cfg.RLIterations)
	}
	f, err := runfolder.Open(cfg.Out)
	if err != nil {
		return nil, err
	}
	return &run{cfg: cfg, t: t, f: f}, nil
}

type run struct {
	cfg Config
	t   task.Task
	f   *runfolder.Folder
	// logsPath holds the logs of the run's task; shared is the folder of
	// the base policy's and the simulator's checkpoints (this run's own,
	// or a prepared folder's).
	logsPath, shared string
	// rlResults holds the results of the RL runs this process trained, by
	// checkpoint folder; the report reads those of stages done before a
	// resume from their folders. RL stages run side by side write it
	// under mu.
	mu        sync.Mutex
	rlResults map[string]train.RLResult
}

// trained keeps the result of the RL run that wrote the checkpoint out.
func (r *run) trained(out string, res train.RLResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rlResults == nil {
		r.rlResults = map[string]train.RLResult{}
	}
	r.rlResults[out] = res
}

// checkRecalibration refuses an unusable recalibration budget before the
// run folder opens (Config.Recalibrate; the RL iterations are
// Config.RLIterations where set).
func checkRecalibration(cfg Config) error {
	if !cfg.Recalibrate {
		return nil
	}
	iterations := cfg.Preset.RL.Iterations
	if cfg.RLIterations > 0 {
		iterations = cfg.RLIterations
	}
	if err := cfg.Preset.Recalibration.Validate(iterations); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	if n := cfg.Preset.Recalibration.Rounds; n < 2 {
		return fmt.Errorf("reproduce: recalibration in %d round has no re-fit, so its control (%s) has nothing to match: want at least 2 rounds", n, ArmRefitControl)
	}
	return nil
}

// ckpt is the base policy's or the simulator's checkpoint folder, which
// may live in a shared folder.
func (r *run) ckpt(name string) string { return filepath.Join(r.shared, name) }

// armCkpt is the checkpoint folder of an arm's seed index k; the base's
// own for the base, which has no RL seed.
func (r *run) armCkpt(arm string, k int) string {
	if arm == ArmBase {
		return r.ckpt(ArmBase)
	}
	return r.f.Path("checkpoints", seedName(arm, k))
}

func (r *run) logs() ([]dialog.Episode, error) { return dialog.LoadEpisodes(r.logsPath) }

func (r *run) metricsLog(stage string) func(map[string]any) {
	return metricsLog(r.f, r.cfg.Log, r.cfg.Progress, stage)
}

// metricsLog appends a stage's records to f's metrics.jsonl, logs the
// headline figures and emits them as progress. Its first record says
// where the stage's trainer starts: a resume from a checkpoint that had
// logged n records (train.MetricRecords) keeps the stage's first n
// records in the file and drops the rest, redone since; a fresh start
// drops every record an interrupted earlier try left. So metrics.jsonl
// holds each record once however often the run was killed and resumed.
func metricsLog(f *runfolder.Folder, log *slog.Logger, prog progress.Func, stage string) func(map[string]any) {
	first := true
	return func(rec map[string]any) {
		if first {
			first = false
			keep := 0
			if n, ok := rec[train.MetricRecords].(int); ok {
				keep = n
			} else if ev := rec["event"]; ev == "resume" || ev == "finished" {
				keep = -1 // a checkpoint that did not count: keep what is there
			}
			if keep >= 0 {
				if err := f.Rewind(stage, keep); err != nil {
					log.Warn("metrics", "err", err)
				}
			}
		}
		out := make(map[string]any, len(rec)+1)
		for k, v := range rec {
			if strings.HasSuffix(k, "/config") {
				continue // the manifest holds the configuration
			}
			out[k] = v
		}
		out["stage"] = stage
		if err := f.Log(out); err != nil {
			log.Warn("metrics", "err", err)
		}
		train.LogHeadline(log, stage, rec)
		if e, ok := train.Progress(stage, rec); ok {
			prog.Emit(e)
		}
	}
}
