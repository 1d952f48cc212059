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
//     checkpoints/ARM/seed-K; with Config.Recalibrate also recalibrated
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
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/progress"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/sft"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/tokenizer"
	"github.com/calibrl/calibrl/train"
)

// The arms, in report order.
const (
	ArmBase       = "base"
	ArmStatic     = "static"
	ArmNaive      = "naive-interactive"
	ArmCalibrated = "calibrated-interactive"
	ArmOracle     = "oracle-interactive"
)

// Arms lists every arm in report order.
var Arms = []string{ArmBase, ArmStatic, ArmNaive, ArmCalibrated, ArmOracle}

// rlArms are the arms trained with RL, once per RL seed.
var rlArms = Arms[1:]

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

// slice is the part of the test split the evaluations play.
func (r *run) slice() eval.Slice {
	if r.cfg.EvalSlice == (eval.Slice{}) {
		return eval.TestSlice
	}
	return r.cfg.EvalSlice
}

// seeds is how many RL seeds each arm gets: the preset's, at least one.
func (r *run) seeds() int { return max(1, r.cfg.Preset.RLSeeds) }

// rlConfig is the trainer's config of every RL arm's seed index k.
func (r *run) rlConfig(k int) train.RLConfig { return r.cfg.Preset.RLConfig(RLSeed(r.cfg.Seed, k)) }

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
	// StaticReward is how the static arm scores a candidate
	// (train.StaticConfig.Reward; default outcome), and StaticFill its
	// FillRounds (default 0): static context RL's own settings, so that it
	// can be run with as many informative groups as the interactive arms
	// train on, and with the continuation reward that trains asking turns.
	StaticReward string
	StaticFill   int
	// EvalSlice is the part of the test split every evaluation plays
	// (eval.Slice): the zero value and eval.TestSlice carry a verdict;
	// eval.ValidationSlice is for runs that choose settings.
	EvalSlice eval.Slice
	// Jobs is how many independent stages (the RL arms and seeds, the
	// evaluations, the gaps; the base policy beside the simulator) run
	// side by side, the cores divided between them; ≤ 0: DefaultJobs.
	// Results do not depend on it.
	Jobs int
}

// MaxRLSeeds bounds Preset.RLSeeds: the report holds every seed's
// evaluations of every arm at once (a hundred seeds of the paper preset's
// 500 held-out episodes, two decodings, four arms: 400,000 episodes), and
// each seed trains four arms.
const MaxRLSeeds = 100

// Run executes (or resumes) every stage and returns the summary rows.
func Run(ctx context.Context, cfg Config) ([]Row, error) {
	if cfg.Preset.RLSeeds > MaxRLSeeds {
		return nil, fmt.Errorf("reproduce: %d RL seeds, the limit is %d", cfg.Preset.RLSeeds, MaxRLSeeds)
	}
	r, err := openRun(cfg)
	if err != nil {
		return nil, err
	}
	defer r.f.Close()
	cfg, t, f := r.cfg, r.t, r.f
	if err := r.manifest(); err != nil {
		return nil, err
	}
	if cfg.Recalibrate {
		if err := cfg.Preset.Recalibration.Validate(cfg.Preset.RL.Iterations); err != nil {
			return nil, fmt.Errorf("reproduce: %w", err)
		}
	}
	// Stages in one group run side by side (runStages); the groups run in
	// order, each reading only what earlier ones wrote.
	var groups [][]stage
	if cfg.Shared == "" {
		p := &prep{f: f, preset: cfg.Preset, seed: cfg.Seed, log: cfg.Log, progress: cfg.Progress,
			tasks: []logSet{{t: t, name: cfg.Task, profiles: cfg.Profiles, maxTurns: cfg.Preset.MaxTurns,
				episodes: cfg.Preset.LogEpisodes, file: "logs.jsonl"}}}
		r.logsPath, r.shared = p.tasks[0].path(f), f.Path("checkpoints")
		groups = p.groups()
	} else {
		if _, err := os.Stat(filepath.Join(cfg.Shared, "stages", "sim")); err != nil {
			return nil, fmt.Errorf("reproduce: shared folder %s is not prepared (no stages/sim): %w", cfg.Shared, err)
		}
		// A dose of the naive simulator or the reward shares its task's logs.
		r.logsPath, r.shared = filepath.Join(cfg.Shared, sharedLogsFile(task.StripDoses(cfg.Task))), filepath.Join(cfg.Shared, "checkpoints")
		if _, err := os.Stat(r.logsPath); err != nil {
			return nil, fmt.Errorf("reproduce: shared folder %s has no logs for %s: %w", cfg.Shared, cfg.Task, err)
		}
	}
	// The RL arms are listed seed by seed, so that an interrupted run has
	// whole replicates; the recalibrated arm's rounds follow one another.
	var arms []stage
	for k := range r.seeds() {
		for _, arm := range r.trainedArms() {
			arms = append(arms, stage{seedName(arm, k), r.arm(arm, k)})
		}
	}
	groups = append(groups, arms)
	for k := range r.seeds() {
		for _, s := range r.recalibrationStages(k) {
			groups = append(groups, []stage{s})
		}
	}
	if err := checkTuneGrid(cfg.TuneGrid); err != nil {
		return nil, err
	}
	if err := r.staticConfig(r.rlConfig(0)).Validate(); err != nil {
		return nil, fmt.Errorf("reproduce: the static arm: %w", err)
	}
	if len(cfg.TuneGrid) > 0 && cfg.Recalibrate {
		return nil, errors.New("reproduce: the best-temperature decoding does not tune the recalibrated arm yet: run --recalibrate without it")
	}
	evals := r.tuneStages() // the best temperatures, beside the first evaluations
	var bestEvals []stage   // which read them
	for _, d := range r.decodings() {
		if d == best {
			bestEvals = append(bestEvals, stage{evalFile(d, ArmBase, 0), r.evaluate(d, ArmBase, 0)})
			for k := range r.seeds() {
				for _, arm := range r.trainedArms() {
					bestEvals = append(bestEvals, stage{evalFile(d, arm, k), r.evaluate(d, arm, k)})
				}
			}
			continue
		}
		evals = append(evals, stage{evalFile(d, ArmBase, 0), r.evaluate(d, ArmBase, 0)})
		if dialog.ToolOf(t) != nil {
			evals = append(evals, stage{evalFile(d, baseNoTool, 0), r.evaluate(d, baseNoTool, 0)})
		}
		for k := range r.seeds() {
			for _, arm := range r.trainedArms() {
				evals = append(evals, stage{evalFile(d, arm, k), r.evaluate(d, arm, k)})
			}
		}
		evals = append(evals, r.recalibratedEvals(d)...)
	}
	// The sim-to-real gap of every trained policy (fidelity.go), after the
	// evaluations whose human-proxy conversations it reuses.
	groups = append(groups, evals)
	if len(bestEvals) > 0 {
		groups = append(groups, bestEvals)
	}
	groups = append(groups, r.fidelityStages())
	// The report is the last stage: a run started again with every stage
	// done (the report's included) writes nothing and returns the rows it
	// wrote; any stage still to run makes the report due again.
	pending := false
	for _, g := range groups {
		for _, s := range g {
			pending = pending || !f.Done(s.name)
		}
	}
	if pending {
		if err := f.Undo(reportStage); err != nil {
			return nil, err
		}
	}
	if err := runStages(ctx, f, groups, cfg.Jobs, cfg.Log, cfg.Progress); err != nil {
		return nil, err
	}
	if f.Done(reportStage) {
		var rows []Row
		if err := f.ReadJSON("summary.json", &rows); err == nil {
			cfg.Log.Info("reproduce: finished earlier; nothing to do", "out", cfg.Out)
			return rows, nil
		}
	}
	rows, err := r.report()
	if err != nil {
		return nil, err
	}
	return rows, f.MarkDone(reportStage)
}

// reportStage marks the report written after every other stage.
const reportStage = "report"

type stage struct {
	name string
	do   func(context.Context) error
}

// runStages runs the stages not yet marked done in f, marking each, group
// after group. The stages of one group are independent (none reads what
// another writes), so up to jobs of them run side by side, in order of
// the list, with the engine's workers (lm.SetWorkers) divided between
// the ones running: small models use two cores better as two jobs than
// as one job split in two (measured: one GRPO iteration of the quick
// preset's shape took 2.2 s alone on 2 cores and 3.4 s each for two side
// by side on one core each). Every result is the same in any order and
// with any worker count, so jobs changes only the wall time. A failed
// stage stops the others of its group (they checkpoint, as on an
// interruption) and its error is returned.
func runStages(ctx context.Context, f *runfolder.Folder, groups [][]stage, jobs int, log *slog.Logger, prog progress.Func) error {
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	// Stages are counted as they start, side by side ones in the order
	// they happen to start.
	var mu sync.Mutex
	k := 0
	start := func(name string, skipped bool) {
		mu.Lock()
		defer mu.Unlock()
		k++
		msg := "reproduce: stage"
		if skipped {
			msg = "reproduce: stage already done"
		}
		log.Info(msg, "stage", name, "k", k, "of", n)
		prog.Emit(progress.Event{Stage: name, Index: k, Of: n, Skipped: skipped})
	}
	if jobs <= 0 {
		jobs = DefaultJobs()
	}
	for _, g := range groups {
		var todo []stage
		for _, s := range g {
			if f.Done(s.name) {
				start(s.name, true)
				continue
			}
			todo = append(todo, s)
		}
		if err := runGroup(ctx, f, todo, jobs, start); err != nil {
			return err
		}
	}
	return nil
}

// DefaultJobs is how many independent stages reproduce runs side by side
// unless told: two where there are two cores or more. Each holds its own
// models, KV caches and episodes: the quick mathchat run's RL,
// evaluation and gap stages peaked at 5.6 GB one at a time and 10.3 GB
// two at a time; the horizon study's gap stages at 1,024 tokens (H = 16)
// at 14.8 GB two at a time, mostly the simulator's KV caches.
func DefaultJobs() int { return min(2, runtime.GOMAXPROCS(0)) }

// runGroup runs independent stages, up to jobs at a time. A stage starts
// only while the run is wanted: stopped between stages, it returns the
// stop instead of letting the run go on to a report of stages that never
// ran.
func runGroup(ctx context.Context, f *runfolder.Folder, todo []stage, jobs int, start func(name string, skipped bool)) error {
	runOne := func(ctx context.Context, s stage) error {
		start(s.name, false)
		if err := s.do(ctx); err != nil {
			return fmt.Errorf("reproduce %s: %w", s.name, err)
		}
		if err := os.MkdirAll(filepath.Dir(f.Path("stages", s.name)), 0o755); err != nil {
			return err
		}
		return f.MarkDone(s.name)
	}
	jobs = min(jobs, len(todo))
	if jobs <= 1 {
		for _, s := range todo {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := runOne(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}
	procs := runtime.GOMAXPROCS(0)
	prev := lm.SetWorkers(max(1, procs/jobs))
	defer lm.SetWorkers(prev)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		next    int
		running int
		errs    = make([]error, len(todo))
		wg      sync.WaitGroup
	)
	// take hands out the next stage and re-divides the cores between the
	// stages running: a stage left alone at the group's end gets them all.
	take := func(finished bool) (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			running--
		}
		i, ok := next, next < len(todo) && ctx.Err() == nil
		if ok {
			next++
			running++
		}
		lm.SetWorkers(max(1, procs/max(1, running)))
		return i, ok
	}
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, ok := take(false); ok; i, ok = take(true) {
				if errs[i] = runOne(ctx, todo[i]); errs[i] != nil {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	// The first stage that failed by itself, not by the others' cancel.
	var first error
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		first = cmp.Or(first, err)
	}
	if first == nil && next < len(todo) {
		// Stopped from outside before every stage was handed out.
		return parent.Err()
	}
	return first
}

// openRun fills cfg's defaults (the logger, the preset's task level,
// the task's profiles), finds its task and opens its run folder; the
// caller closes r.f.
func openRun(cfg Config) (*run, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.Task = cfg.Preset.TaskName(cfg.Task)
	t, err := task.Lookup(cfg.Task)
	if err != nil {
		return nil, err
	}
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = t.Profiles()
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

// PrepareConfig sets the stages several runs can share: logs of each task
// level, one tokenizer, one base policy and one simulator trained on all
// of them.
type PrepareConfig struct {
	// Tasks are task names with their level ("mathchat:h4"); the preset's
	// LogEpisodes are shared out evenly between them, each task's logs
	// played with the turn limit of the same index in MaxTurns.
	Tasks    []string
	MaxTurns []int
	Preset   preset.Preset
	Out      string
	Seed     uint64
	Log      *slog.Logger
	// Progress is as Config.Progress.
	Progress progress.Func
	// Jobs is as Config.Jobs: the base policy and the simulator train
	// side by side.
	Jobs int
}

// Prepare collects the logs of every task and trains the tokenizer, the
// base policy and the simulator on their union, into a folder that
// Config.Shared can name. Like Run, it resumes where it stopped.
func Prepare(ctx context.Context, cfg PrepareConfig) error {
	if len(cfg.Tasks) == 0 || len(cfg.Tasks) != len(cfg.MaxTurns) {
		return fmt.Errorf("reproduce: prepare: %d tasks and %d turn limits", len(cfg.Tasks), len(cfg.MaxTurns))
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	f, err := runfolder.Open(cfg.Out)
	if err != nil {
		return err
	}
	defer f.Close()
	var old runfolder.Manifest
	config := map[string]any{"tasks": cfg.Tasks, "max_turns": cfg.MaxTurns, "preset": cfg.Preset.Name}
	if err := f.ReadJSON("manifest.json", &old); err == nil {
		if old.Seed != cfg.Seed || fmt.Sprint(old.Config) != fmt.Sprint(config) {
			return fmt.Errorf("reproduce: %s was prepared with other settings (seed %d, %v): use another folder", cfg.Out, old.Seed, old.Config)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	} else if err := f.WriteManifest(runfolder.Manifest{Command: os.Args, Seed: cfg.Seed, Config: config}); err != nil {
		return err
	}
	p := &prep{f: f, preset: cfg.Preset, seed: cfg.Seed, log: cfg.Log, progress: cfg.Progress}
	per := (cfg.Preset.LogEpisodes + len(cfg.Tasks) - 1) / len(cfg.Tasks)
	for i, name := range cfg.Tasks {
		t, err := task.Lookup(name)
		if err != nil {
			return err
		}
		p.tasks = append(p.tasks, logSet{t: t, name: name, profiles: t.Profiles(), maxTurns: cfg.MaxTurns[i],
			episodes: per, file: sharedLogsFile(name)})
	}
	return runStages(ctx, f, p.groups(), cfg.Jobs, cfg.Log, cfg.Progress)
}

// sharedLogsFile is where a prepared folder keeps one task's logs.
func sharedLogsFile(task string) string {
	return filepath.Join("logs", strings.ReplaceAll(task, ":", "_")+".jsonl")
}

// prep makes the logs, tokenizer, base policy and simulator in f.
type prep struct {
	f      *runfolder.Folder
	preset preset.Preset
	seed   uint64
	log    *slog.Logger
	// progress receives the stages' training figures.
	progress progress.Func
	tasks    []logSet
}

// logSet is one task's logs: episodes conversations of the profiles,
// shared out between them.
type logSet struct {
	t        task.Task
	name     string
	profiles []string
	maxTurns int
	episodes int
	file     string
}

func (l logSet) path(f *runfolder.Folder) string { return f.Path(l.file) }

// groups are the preparation's stages: the base policy and the
// simulator both train on the tokenizer's tokens, side by side.
func (p *prep) groups() [][]stage {
	return [][]stage{{{"collect", p.collect}}, {{"tokenizer", p.tokenizer}}, {{"base", p.base}, {"sim", p.sim}}}
}

func (r *run) manifest() error {
	var old runfolder.Manifest
	if err := r.f.ReadJSON("manifest.json", &old); err == nil {
		if old.Seed != r.cfg.Seed {
			return fmt.Errorf("reproduce: %s was started with seed %d, not %d: use another --out", r.cfg.Out, old.Seed, r.cfg.Seed)
		}
		c, ok := old.Config.(map[string]any)
		if ok && (c["task"] != r.cfg.Task || c["preset"] != r.cfg.Preset.Name) {
			return fmt.Errorf("reproduce: %s holds a %v/%v run, not %s/%s: use another --out", r.cfg.Out, c["task"], c["preset"], r.cfg.Task, r.cfg.Preset.Name)
		}
		if n, has := c["rl_seeds"]; ok && !has {
			return fmt.Errorf("reproduce: %s was made before arms had several RL seeds (checkpoints/ARM, not checkpoints/ARM/seed-K): use another --out", r.cfg.Out)
		} else if ok && n != float64(r.seeds()) {
			return fmt.Errorf("reproduce: %s was started with %v RL seeds, not %d: use another --out", r.cfg.Out, n, r.seeds())
		}
		if sl, _ := c["eval_slice"].(string); ok && cmp.Or(sl, eval.TestSlice.Name) != r.slice().Name {
			return fmt.Errorf("reproduce: %s was evaluated on the %s slice, not %s: use another --out", r.cfg.Out, cmp.Or(sl, eval.TestSlice.Name), r.slice().Name)
		}
		if g := fmt.Sprint(c["tune_grid"]); ok && g != fmt.Sprint(gridAsJSON(r.cfg.TuneGrid)) {
			return fmt.Errorf("reproduce: %s was started with the temperature grid %v, not %v: use another --out", r.cfg.Out, c["tune_grid"], r.cfg.TuneGrid)
		}
		if ok {
			oldReward, _ := c["static_reward"].(string)
			oldFill, _ := c["static_fill"].(float64)
			sc := r.staticConfig(train.RLConfig{})
			if cmp.Or(oldReward, train.StaticOutcome) != sc.Reward || int(oldFill) != sc.FillRounds {
				return fmt.Errorf("reproduce: %s was started with static reward %s and fill %d, not %s and %d: use another --out",
					r.cfg.Out, cmp.Or(oldReward, train.StaticOutcome), int(oldFill), sc.Reward, sc.FillRounds)
			}
		}
		if _, has := c["filtered_bc"]; ok && has != r.cfg.FilteredBC {
			return fmt.Errorf("reproduce: %s was started %s the filtered-BC arm: use another --out", r.cfg.Out, map[bool]string{true: "with", false: "without"}[has])
		}
		if _, has := c["eval_decodings"]; ok && !has {
			// Its eval/ holds greedy evaluations, which this version reads
			// as sampled ones.
			return fmt.Errorf("reproduce: %s was made before evaluations were sampled at the RL temperature (its eval/ is greedy): use another --out", r.cfg.Out)
		}
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	// The trainer configs as RL seed index 0 trains with them (other RL
	// seeds differ in Seed alone), and the base policy and the simulator
	// when the run fits its own.
	config := map[string]any{"task": r.cfg.Task, "preset": r.cfg.Preset.Name, "profiles": r.cfg.Profiles, "rl": r.rlConfig(0),
		"policy": r.cfg.Preset.Policy, "sim": r.cfg.Preset.Sim, "policy_sft": r.cfg.Preset.PolicySFT.Config(r.cfg.Seed), "sim_sft": r.cfg.Preset.SimSFT.Config(r.cfg.Seed),
		"log_episodes": r.cfg.Preset.LogEpisodes, "eval_episodes": r.cfg.Preset.EvalEpisodes, "max_turns": r.cfg.Preset.MaxTurns,
		"rl_seeds": r.seeds(), "eval_decodings": decodingNames()}
	if r.slice() != eval.TestSlice {
		config["eval_slice"] = r.slice().Name // the test slice, as before slices, goes unsaid
	}
	if sc := r.staticConfig(train.RLConfig{}); sc.Reward != train.StaticOutcome || sc.FillRounds != 0 {
		config["static_reward"], config["static_fill"] = sc.Reward, sc.FillRounds // the defaults, as before, go unsaid
	}
	if len(r.cfg.TuneGrid) > 0 {
		config["tune_grid"], config["tune_episodes"] = r.cfg.TuneGrid, r.tuneEpisodes()
	}
	if r.cfg.FilteredBC {
		config["filtered_bc"] = r.cfg.Preset.FilteredBC.Config(r.cfg.Seed)
	}
	return r.f.WriteManifest(runfolder.Manifest{Command: os.Args, Seed: r.cfg.Seed, Config: config})
}

func decodingNames() []string {
	names := make([]string, len(decodings))
	for i, d := range decodings {
		names[i] = d.name
	}
	return names
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

func (p *prep) ckpt(name string) string { return p.f.Path("checkpoints", name) }

// collect records each task's human-proxy logs, shared out between its
// profiles.
func (p *prep) collect(ctx context.Context) error {
	for i, l := range p.tasks {
		human, err := l.t.User("human")
		if err != nil {
			return err
		}
		agents := make([]dialog.Agent, len(l.profiles))
		names := make([]string, len(l.profiles))
		for j, prof := range l.profiles {
			if agents[j], err = l.t.Agent(prof); err != nil {
				return err
			}
			names[j] = "scripted:" + prof
		}
		// The first task keeps the run's seed, so a single-task run's logs
		// do not depend on whether it was prepared alone or with others.
		seed := p.seed + uint64(i)*0x9e3779b97f4a7c15
		all, err := rollout.Share(ctx, l.t, agents, names, human, rollout.Config{Split: "train", Instances: l.episodes,
			Seed: seed, MaxTurns: l.maxTurns, UserName: "human"})
		if err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
		if err := os.MkdirAll(filepath.Dir(l.path(p.f)), 0o755); err != nil {
			return err
		}
		if err := dialog.SaveEpisodes(l.path(p.f), all); err != nil {
			return err
		}
	}
	return nil
}

// logs is the union of every task's logs.
func (p *prep) logs() ([]dialog.Episode, error) {
	var all []dialog.Episode
	for _, l := range p.tasks {
		eps, err := dialog.LoadEpisodes(l.path(p.f))
		if err != nil {
			return nil, err
		}
		all = append(all, eps...)
	}
	return all, nil
}

func (r *run) logs() ([]dialog.Episode, error) { return dialog.LoadEpisodes(r.logsPath) }

func (p *prep) tokenizer(ctx context.Context) error {
	eps, err := p.logs()
	if err != nil {
		return err
	}
	tok, err := chatlm.TrainTokenizer(ctx, eps, p.preset.Vocab)
	if err != nil {
		return err
	}
	return tok.Save(p.f.Path("tokenizer.json"))
}

// sftConfig is a fit of a model sized model with budget b, seeded with
// the stage's seed, on the shared tokenizer.
func (p *prep) sftConfig(model lm.Config, b preset.SFTBudget, oracle bool) (sft.Config, error) {
	tok, err := tokenizer.Load(p.f.Path("tokenizer.json"))
	if err != nil {
		return sft.Config{}, err
	}
	return sft.Config{Model: model, SFT: b.Config(p.seed), Tokenizer: tok, Oracle: oracle, Tool: dialog.ToolOf(p.tasks[0].t)}, nil
}

func (r *run) metricsLog(stage string) func(map[string]any) {
	return metricsLog(r.f, r.cfg.Log, r.cfg.Progress, stage)
}

// metricsLog appends a stage's records to f's metrics.jsonl, logs the
// headline figures and emits them as progress.
func metricsLog(f *runfolder.Folder, log *slog.Logger, prog progress.Func, stage string) func(map[string]any) {
	return func(rec map[string]any) {
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

func (p *prep) base(ctx context.Context) error {
	eps, err := p.logs()
	if err != nil {
		return err
	}
	sc, err := p.sftConfig(p.preset.Policy, p.preset.PolicySFT, false)
	if err != nil {
		return err
	}
	_, err = sft.Policy(ctx, eps, sc, p.ckpt(ArmBase), metricsLog(p.f, p.log, p.progress, ArmBase))
	return err
}

func (p *prep) sim(ctx context.Context) error {
	eps, err := p.logs()
	if err != nil {
		return err
	}
	sc, err := p.simConfig(p.preset.SimSFT)
	if err != nil {
		return err
	}
	_, err = sft.Simulator(ctx, eps, sc, p.ckpt("sim"), metricsLog(p.f, p.log, p.progress, "sim"))
	return err
}

// simConfig is the simulator's SFT config with budget b: the shared
// tokenizer, the oracle context and the task's judge (the sim stage's, and
// the recalibrated arm's re-fits').
func (p *prep) simConfig(b preset.SFTBudget) (sft.Config, error) {
	c, err := p.sftConfig(p.preset.Sim, b, true)
	if err != nil {
		return sft.Config{}, err
	}
	// The levels of one task share its scoring rule.
	c.Judge = chatlm.TaskJudge(p.tasks[0].t)
	return c, nil
}

// arm trains one RL arm from the base policy with RL seed index k.
func (r *run) arm(name string, k int) func(context.Context) error {
	return func(ctx context.Context) error {
		policy, _, err := chatlm.Load(r.ckpt(ArmBase))
		if err != nil {
			return err
		}
		human, err := r.t.User("human")
		if err != nil {
			return err
		}
		cfg := r.rlConfig(k)
		out := r.armCkpt(name, k)
		log := r.metricsLog(seedName(name, k))
		switch name {
		case ArmFilteredBC:
			return r.filteredBC(k)(ctx)
		case ArmStatic:
			logs, err := r.logs()
			if err != nil {
				return err
			}
			sim, err := spec.LearnedUser(r.t, r.ckpt("sim"))
			if err != nil {
				return err
			}
			behaviour := func(agent string) (dialog.Agent, error) { return spec.Agent(r.t, agent) }
			res, err := train.Static(ctx, policy, r.t, logs, behaviour, sim, human, r.staticConfig(cfg), out, log)
			if err == nil {
				r.trained(out, res)
			}
			return err
		case ArmNaive, ArmCalibrated, ArmOracle:
			u, err := r.trainUser(name)
			if err != nil {
				return err
			}
			res, err := train.GRPO(ctx, policy, r.t, u, human, cfg, out, log)
			if err == nil {
				r.trained(out, res)
			}
			return err
		}
		return fmt.Errorf("unknown arm %q", name)
	}
}

// trainUser is the user an interactive arm trains against: the naive
// simulator, the calibrated one, or the human proxy itself.
func (r *run) trainUser(arm string) (dialog.User, error) {
	if arm == ArmCalibrated {
		sim, err := spec.LearnedUser(r.t, r.ckpt("sim"))
		if err != nil {
			return nil, err
		}
		return sim, nil
	}
	return spec.User(r.t, map[string]string{ArmNaive: "naive", ArmOracle: "human"}[arm])
}

// decoding is how the policies play in a held-out evaluation, and the
// folder its files go to.
type decoding struct{ name, dir string }

// The evaluation's two decodings. GRPO and static RL optimise the expected
// reward of the policy as it samples, at the rollouts' temperature; that
// policy is the one the verdict judges. Greedy decoding plays the
// policy's mode, a different policy that RL moves only indirectly: in the
// quick run with greedy evaluation (results/mathchat-quick-calculator)
// every RL arm lost to the base (oracle 0.669 vs 0.690) while the same
// checkpoints, sampled at temperature 1 on the same 500 problems, beat it
// (oracle 0.549 vs 0.450), so both are reported.
var (
	sampled   = decoding{"sampled", "eval"}
	greedy    = decoding{"greedy", "eval-greedy"}
	decodings = []decoding{sampled, greedy}
)

// gen is the generation config of a decoding: the RL rollouts' sampling
// (temperature, top-p) or greedy, with the evaluation's turn length.
func (r *run) gen(d decoding) chatlm.GenConfig {
	g := spec.EvalGen()
	if d == sampled {
		rl := r.rlConfig(0).Gen
		g.Temperature, g.TopP = rl.Temperature, rl.TopP
	}
	return g
}

// evalFile is where an arm's seed index k keeps its evaluation under a
// decoding, without the extension: eval/base, eval-greedy/static/seed-0.
// It is also the evaluation's stage name.
// baseNoTool is the base policy evaluated without the task's tool (the
// calculator): how much of its success the tool carries.
const baseNoTool = "base-without-tool"

func evalFile(d decoding, arm string, k int) string {
	if arm == ArmBase || arm == baseNoTool {
		return d.dir + "/" + arm
	}
	return d.dir + "/" + seedName(arm, k)
}

// evaluate plays an arm's seed index k against the human proxy on the
// held-out split under decoding d. Every arm and seed plays the same
// problems with the same user seeds (the run's seed), so their episodes
// pair up; sampled agents draw from the same per-episode streams.
func (r *run) evaluate(d decoding, arm string, k int) func(context.Context) error {
	return func(ctx context.Context) error {
		human, err := r.t.User("human")
		if err != nil {
			return err
		}
		tool, ckpt := dialog.ToolOf(r.t), arm
		if arm == baseNoTool {
			tool, ckpt = nil, ArmBase
		}
		policy, _, err := chatlm.Load(r.armCkpt(ckpt, k))
		if err != nil {
			return err
		}
		name := arm
		if arm != ArmBase && arm != baseNoTool {
			name = seedName(arm, k)
		}
		gen := r.gen(d)
		if d == best {
			temp, err := r.chosenTemperature(ckpt, k)
			if err != nil {
				return err
			}
			gen = tempGen(temp)
		}
		agent := &chatlm.Agent{Model: policy, Gen: gen, Tool: tool}
		eps, err := rollout.Run(ctx, r.t, agent, human, rollout.Config{Split: "test", Start: r.slice().Start, Instances: r.cfg.Preset.EvalEpisodes,
			Seed: r.slice().Seed(r.cfg.Seed), MaxTurns: r.cfg.Preset.MaxTurns, AgentName: name, UserName: "human",
			CountTokens: policy.CountTokens})
		if err != nil {
			return err
		}
		file := evalFile(d, arm, k)
		if err := os.MkdirAll(filepath.Dir(r.f.Path(file)), 0o755); err != nil {
			return err
		}
		// The episodes first: the summary's presence is what the report
		// reads, and the stage marker follows both.
		if err := dialog.SaveEpisodes(r.f.Path(file+".episodes.jsonl"), eps); err != nil {
			return err
		}
		sum := eval.Summarize(eps, r.cfg.Seed)
		if err := r.f.WriteJSON(file+".json", sum); err != nil {
			return err
		}
		r.cfg.Log.Info("reproduce: evaluated", "arm", name, "decoding", d.name, "reward", sum.Reward)
		return nil
	}
}

// staticConfig is the static arm's trainer config around the RL config.
func (r *run) staticConfig(cfg train.RLConfig) train.StaticConfig {
	return train.StaticConfig{RLConfig: cfg, Reward: cmp.Or(r.cfg.StaticReward, train.StaticOutcome), FillRounds: r.cfg.StaticFill}
}
