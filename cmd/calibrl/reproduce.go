package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/reproduce"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
)

func newReproduceCmd() *cobra.Command {
	var (
		cfg                   reproduce.Config
		presetName, profiles  string
		data                  string
		rlSeeds               int
		recalRounds, recalGap int
		asJSON                bool
		doses                 []string
		hacking               int
		hackingDecoding       string
		pipelines             seedList
		simCopy, simLedger    autoSwitch
		sliceName             string
	)
	cmd := &cobra.Command{
		Use:   "reproduce",
		Short: "Run the paper's comparison end to end: logs, base policy, calibrated simulator, four RL arms, evaluation, report",
		Long: `reproduce runs calibrated interactive RL and its baselines on one task, from
nothing to a report, in a run folder:

  collect    scripted agents talk with the human proxy (the "real users")
  tokenizer  one BPE for both models, trained on the logs
  base       the base policy, cloned from the logs' agent turns (SFT)
  sim        the calibrated user simulator, fitted to the logs' user turns
             with the oracle context (Phase I)
  static     static context RL: GRPO on single turns of logged histories,
             each candidate scored by --static-reward (outcome: the task's
             verdict on the turn; continuation: the turn continued by the
             base against the calibrated simulator)
  static-continuation  with --static-reward outcome,continuation: the same
             with the continuation reward, beside static (outcome) in every
             table, with the claim calibrated > static-continuation
  naive-interactive       GRPO over whole conversations with the naive simulator
  calibrated-interactive  the same with the calibrated simulator (Phase II)
  oracle-interactive      the same with the human proxy itself (upper reference)
  recalibrated-interactive  with --recalibrate: the calibrated arm's RL budget
             in rounds (quick 2, tiny 2); between them the policy plays
             conversations with the human proxy on training problems and
             the simulator is re-fitted on the logs plus them (warm start);
             recalibration.json and a report section hold each round's
             sim-to-real gap before and after its re-fit, δ̄, NLL and the
             human conversations used
  refit-control-interactive  with --recalibrate, its control: the base
             policy plays as many human-proxy conversations as all the
             re-fits get (same training problems and seeds), the simulator
             is re-fitted once on them before RL (the re-fits' logs and
             steps in total), then the full RL budget; the report pairs
             recalibrated − control and puts each round's gap beside the
             control's
  naive-OPT, calibrated-OPT, oracle-OPT (static-OPT)  with --optimizers
             grpo,OPT: the same partners trained by another optimizer (rft:
             rejection-sampling fine-tuning, with static-rft on the logged
             contexts; grpo-greedy-baseline; grpo-turn-credit), from the
             same base with the same budget, with their claims
  eval       the base and every arm and RL seed against the human proxy,
             held-out split, twice: sampled at the RL rollouts' temperature
             (the policy RL optimises: eval/, summary.json, the verdict)
             and greedy (eval-greedy/, summary-greedy.json, a second
             verdict table); at the quick preset RL lifts the sampled
             policy above the base but not its greedy mode
  fidelity   each policy's sim-to-real gap: its success against the
             calibrated simulator minus against the human proxy, same
             problems (fidelity/)
  report     report.md, summary.json, plots/training.png, plots/comparison.png,
             report.html (one self-contained page: verdict, seeds, curves,
             fidelity, transcripts; calibrl report RUNDIR re-renders it)

Every arm starts from the same base with the same RL budget, and is trained
once per RL seed (--rl-seeds, default the preset's: tiny 2, quick,
standard and paper 3) into checkpoints/ARM/seed-K. Seed index 0 trains
with --seed itself, index K > 0 with SplitMix64(seed XOR K·0xd1b54a32d192ed03)
(reproduce.RLSeed). Every arm and seed plays the same held-out problems
with the same user seeds, so arms are compared problem by problem.

report.md opens with the verdict on every ordering the paper states
(calibrated > static, calibrated > naive, calibrated > base, naive >
static, static > base, calibrated > oracle) and on oracle > base (that RL
works at all), each beside the paper's figure where its summary gives one
("not reported" where not): each difference averaged over seeds, with a
paired bootstrap 95% interval over problems (2000 resamples, fixed seed),
and whether it holds.
summary.json has one object per arm: the mean over its seeds (success or
bleu, ci95, ...), "seeds" (each seed's figures) and "comparisons" (the
claims that favour the arm).

The quick mathchat run took 68 minutes on 2 shared cores one stage at a
time (base SFT 23, simulator SFT 14, RL 21, evaluations and gaps 10;
results/ in the repository has its report); with two jobs its RL,
evaluations and gaps took 23 minutes instead of 31, same files.

Independent stages run side by side (--jobs, default min(2, cores)): the
base policy beside the simulator, then the RL arms and seeds, the
evaluations and the gaps, the cores divided between the stages running.
Models this small use two cores better as two jobs of one core than as one
job split over two. Results do not depend on --jobs: the stages read only
what earlier groups wrote, and the engine's figures are the same for any
worker count.

The calibrated simulator of mathchat and support is held to the facts its
problem holds in two ways by default: its own ledger (--sim-ledger, the
task's :userledger option: told each fact it was asked for, fitted and
played with the notes) and copying (--sim-copy: it states only the numbers,
or for support the whole ids, dates and emails, its problem holds).
Without them the simulators of some pipelines misstated what they held and
were 0.15 to 0.30 off the human proxy in the base's success; with them
every mathchat and support pipeline measured came within 0.05
(results/mathchat-quick-ledgercopy/, results/support-quick-values/).
Docedit's are off by default: there each widened the base's BLEU gap
(results/docedit-quick-ledgercopy/). --sim-ledger and --sim-copy take
true, false or auto (the task's choice). The gate (--sim-gate) checks the
simulator before RL either way. Runs before 2026-12-07 had neither:
--sim-ledger=false --sim-copy=false plays as they did and resumes their
folders.

Stages (one per arm and seed) and training checkpoints are resumable:
after an interruption (Ctrl-C) run the same command again.

Progress: on a terminal, one live line per running stage (its bar, step,
figures and time left at its own rate) under a line per finished stage,
and a footer with the run's ETA; in a file or CI, plain lines at each
stage's start and end and every 30 s inside it. The ETA adds every stage
still to run at its kind's rate (SFT, RL, evaluation, ...) as measured in
this run, from a reference profile until a stage of the kind has finished,
so it settles once the first arm and evaluation are done.

--best-temperature 0,0.25,0.5,0.75,1 adds a third decoding: each policy
(the base, every arm and seed) plays 200 validation problems (test split
from problem 20000, users seeded apart) at each temperature, and is
evaluated on the test problems at its best (eval-best/, summary-best.json,
a third verdict table): the base at its best decoding is what RL must beat
for a user who deploys it.

One run is one pipeline: its intervals cover the problems, not the
training of its logs, base and simulator. --pipelines 1,2,3 runs one whole
pipeline per seed (each in its own folder, OUT/seed-S, one after another,
each resumable) and pools them into OUT/pooled.md and pooled.json: every
claim's mean over pipelines with a random-effects interval whose unit is
the pipeline (Student's t on pipelines − 1 degrees of freedom, plus the
covariance of the test problems all pipelines share), Bonferroni-corrected
over every claim of every decoding, beside the former two-level bootstrap,
each pipeline's own verdict, and how many pipelines would carry each claim
with 80% power. Three pipelines give wide intervals (t = 4.30 at 95%, 23
at the 27-claim Bonferroni level): with a between-pipeline spread of 0.04,
a difference of 0.10 needs about 10 pipelines and one of 0.25 about 5.

Success over RL iterations: --curves K makes every RL arm's monitor play K
validation problems (test split from problem 20000, users seeded apart: the
problems settings are chosen on, never the verdict's) against the human
proxy at about ten readings spread over the budget (every ceil(N/10)
iterations, and at 0 and the end), greedy and sampled at the rollouts'
temperature; report.md gains a section with plots/curves.png and a table of
each arm's success (mean over RL seeds, Wilson 95% interval) at every
reading beside the base's (iteration 0). --rl-iterations N replaces the
preset's RL budget (quick: 30). The study of whether a longer budget lets
an arm's greedy or sampled policy pass the base's best decoding:

  calibrl reproduce --task mathchat --preset quick --rl-seeds 1 \
    --rl-iterations 300 --curves 200 --out runs/curves

Its cost, as a multiple of the quick preset's stages (3 RL seeds): collect,
base and simulator as quick's; RL 10× quick's iterations per arm and seed,
with one seed instead of three about 3.3× quick's RL stage, plus the
readings (11 × 3 × 200 conversations per arm, greedy against the training
user and the human proxy, sampled against the human proxy: as many as
about 100 training iterations play, with no update), so about 4× quick's
RL stage in conversations played; the evaluations a third of quick's.`,
		Example: `  calibrl reproduce --task mathchat --preset quick --out runs/quick
  calibrl reproduce --task mathchat --preset tiny --out /tmp/tiny --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			name, tag := cfg.Task, dataTag(data)
			p, err := presetTask(presetName, &cfg.Task, &data) // docedit sizes its own level and budgets
			if err != nil {
				return err
			}
			if cfg.Out == "" {
				cfg.Out = filepath.Join("runs", fmt.Sprintf("%s%s-%s-seed%d", name, tag, p.Name, cfg.Seed))
			}
			if _, err := task.Lookup(cfg.Task); err != nil {
				return err
			}
			setSimMends(&cfg, simCopy, simLedger)
			if err := cfg.SimGate.Check(); err != nil {
				return err
			}
			if err := checkJobs(cfg.Jobs); err != nil {
				return err
			}
			if err := setRLSeeds(cmd, rlSeeds, &p); err != nil {
				return err
			}
			for _, c := range []struct {
				flag string
				v    int
				set  *int
			}{{"recal-rounds", recalRounds, &p.Recalibration.Rounds}, {"recal-gap", recalGap, &p.Recalibration.GapEpisodes}} {
				if !cmd.Flags().Changed(c.flag) {
					continue
				}
				if !cfg.Recalibrate {
					return fmt.Errorf("--%s sets the recalibrated arm's budget: it needs --recalibrate", c.flag)
				}
				*c.set = c.v // reproduce.Run validates the budget
			}
			cfg.Preset = p
			cfg.Profiles = spec.Agents(profiles)
			if err := reproduce.CheckStaticRewards(cfg.StaticRewards); err != nil {
				return fmt.Errorf("--static-reward: %w", err)
			}
			if err := reproduce.CheckOptimizers(cfg.Optimizers); err != nil {
				return fmt.Errorf("--optimizers: %w", err)
			}
			if cfg.EvalSlice, err = eval.SliceNamed(sliceName); err != nil {
				return fmt.Errorf("--eval-slice: %w", err)
			}
			if err := cfg.EvalSlice.Check(p.EvalEpisodes); err != nil {
				return fmt.Errorf("--eval-slice: %w", err)
			}
			if cfg.RLIterations < 0 || cfg.RLIterations > maxRLIterations {
				return fmt.Errorf("--rl-iterations %d: want 1 to %d (0: the preset's)", cfg.RLIterations, maxRLIterations)
			}
			if cfg.Curves < 0 {
				return fmt.Errorf("--curves %d: want 0 (off) or a number of validation problems", cfg.Curves)
			}
			if err := eval.ValidationSlice.Check(cfg.Curves); err != nil {
				return fmt.Errorf("--curves: %w", err)
			}
			if hacking < 0 || hacking > maxHacking {
				return fmt.Errorf("--hacking %d: want 0 to %d", hacking, maxHacking)
			}
			if !cmd.Flags().Changed("hacking") && len(doses) > 0 {
				hacking = preregisteredHacking // the dose study reads them
			}
			cfg.Preset.RL.HackingInstances = hacking
			switch hackingDecoding {
			case "greedy":
			case "sampled":
				cfg.Preset.RL.HackingSampled = true
			default:
				return fmt.Errorf("--hacking-decoding %q: want greedy or sampled", hackingDecoding)
			}
			if len(pipelines) > 0 {
				return runPipelines(cmd, cfg, pipelines, cmd.Flags().Changed("out"), name+tag)
			}
			if len(doses) > 0 {
				var done func()
				cfg.Log, cfg.Progress, done = newStageProgress()
				err := reproduce.Doses(cmd.Context(), cfg, doses)
				done()
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "dose-response: %s\n", filepath.Join(cfg.Out, "doses.md"))
				return nil
			}
			var done func()
			cfg.Log, cfg.Progress, done = newStageProgress() // stage k of n: a bar on a terminal, log lines otherwise
			rows, err := reproduce.Run(cmd.Context(), cfg)
			done()
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(cfg.Out, "report.md"))
			width := 24 // the paper's arms' column; a crossed optimizer's names are longer
			for _, r := range rows {
				width = max(width, len(r.Arm))
			}
			for _, r := range rows {
				fmt.Fprintf(cmd.OutOrStdout(), "%-*s %s %.3f [%.3f, %.3f]  turns %.2f\n", width, r.Arm, task.MeasureOf(cfg.Task).Name, r.Value(), r.CI95[0], r.CI95[1], r.Turns)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Task, "task", "mathchat", "task: "+joinNames(task.Names()))
	addDataFlag(f, &data)
	f.StringVar(&presetName, "preset", "quick", "budget: tiny (seconds, for tests), quick (23 to 31 minutes on 2 quiet cores, about an hour beside other work), standard (quick with 4× the RL iterations; about twice quick's time, estimated from its measured iteration times), paper (hours)")
	f.StringVar(&cfg.Out, "out", "", "run folder (default runs/TASK-PRESET-seedS); an existing one is resumed")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of every stage")
	f.BoolVar(&cfg.FilteredBC, "filtered-bc", false, "also train the filtered behaviour-cloning arm: the base fine-tuned on the logs' solved conversations (the cheap alternative to RL), per RL seed, beside the others in every table")
	f.StringSliceVar(&cfg.Optimizers, "optimizers", []string{"grpo"}, "the optimizers crossed with the partners, comma separated, grpo always among them; each other adds the arms naive-OPT, calibrated-OPT, oracle-OPT (and static-OPT where it has a static form), trained from the same base with the same RL budget, and their claims (the partner ordering under OPT, against the base, filtered BC and calibrated GRPO), e.g. --optimizers grpo,grpo-greedy-baseline (a finished run folder given more optimizers, or --filtered-bc, trains only the arms it lacks and ends as a run started with them would; it never drops one it holds):\n"+reproduce.OptimizersHelp())
	f.StringSliceVar(&cfg.StaticRewards, "static-reward", []string{"outcome"}, "how static context RL scores a candidate, one static arm per reward: outcome (the task's verdict on the turn) or continuation (the turn continued by the base against the simulator, which also trains asking turns); outcome,continuation trains both, static (outcome) and static-continuation, side by side in every table (a run folder keeps the rewards it was started with)")
	f.IntVar(&cfg.StaticFill, "static-fill", 0, "each static arm draws up to this many rounds of prompts per iteration until it holds as many informative groups (rewards not all equal) as prompts, and trains on those (0: one round); with --static-prompts it can match the interactive arms' gradient tokens (train/grad_tokens)")
	f.IntVar(&cfg.StaticPrompts, "static-prompts", 0, "each static arm's prompts (groups) per iteration (0: the preset's problems per iteration); a static candidate is one turn, an interactive sample a whole conversation, so matching gradient tokens takes about twice the prompts with --static-fill")
	f.IntVar(&cfg.StaticTokens, "static-tokens", 0, "each static arm's budget in gradient tokens per iteration (train/grad_tokens; needs --static-fill): rounds of --static-prompts prompts are drawn until the informative groups hold this many tokens, so both rewards train as much as the interactive arms whatever a group holds (0: fill by a count of groups)")
	f.Float64SliceVar(&cfg.TuneGrid, "best-temperature", nil, "also evaluate each policy at its best temperature from this ascending grid (0: greedy), chosen on validation problems no verdict uses, e.g. 0,0.25,0.5,0.75,1 (a third verdict: summary-best.json)")
	f.StringVar(&sliceName, "eval-slice", "test", "part of the test split every evaluation plays: test (the verdict's) or validation (for runs that choose settings; from problem 20000, users seeded apart)")
	f.Var(&pipelines, "pipelines", "comma-separated seeds, one whole pipeline each (at least 2), pooled into OUT/pooled.md; replaces --seed")
	f.IntVar(&recalRounds, "recal-rounds", 0, "with --recalibrate: the RL rounds, a re-fit between each two (default the preset's: quick 2, one re-fit)")
	f.IntVar(&recalGap, "recal-gap", 0, "with --recalibrate: held-out problems each round's sim-to-real gap is measured on (default the preset's: quick 200; about 800 detect a change of 0.05)")
	f.BoolVar(&cfg.Recalibrate, "recalibrate", false, "also train the recalibrated-interactive arm (online recalibration; budget: the preset's Recalibration) and its control, refit-control-interactive (one re-fit before RL on as many base-policy human conversations)")
	f.IntVar(&cfg.RLIterations, "rl-iterations", 0, "RL iterations of every arm (default 0: the preset's; tiny 2, quick 30, standard 120, paper 300); a run folder keeps the count it was started with")
	f.IntVar(&cfg.Curves, "curves", 0, fmt.Sprintf("the success-vs-iterations study: at about %d readings over the RL budget every arm plays this many validation problems against the human proxy, greedy and sampled (report.md's curves and table; default 0: off; at most %d)", 11, eval.MaxSliceEpisodes))
	f.IntVar(&rlSeeds, "rl-seeds", 0, "RL seeds per arm (default: the preset's; a run folder keeps the count it was started with)")
	f.StringVar(&profiles, "profiles", "", "comma-separated scripted profiles whose conversations make the logs (default: all of the task's)")
	f.StringVar(&cfg.SimGate.Mode, "sim-gate", reproduce.SimGateWarn, "check of the calibrated simulator before RL, on validation only (fidelity/sim.json, the report): its per-history fidelity to the human proxy, the share of false facts it states, and the base's success gap with it against the proxy; warn (log and report one outside the bounds), refuse (also stop before RL) or off")
	f.Float64Var(&cfg.SimGate.Bound, "sim-gate-bound", reproduce.DefaultSimGateBound, "largest per-history excess distance (TV to the proxy minus the proxy's own floor), and largest share of false stated facts, the sim gate passes")
	addSimMendFlags(f, &simCopy, &simLedger)
	f.Float64Var(&cfg.SimGate.GapBound, "sim-gate-gap", reproduce.DefaultSimGateGapBound, "largest |gap| of the base's success (with the simulator minus with the human proxy, sampled) on validation problems the sim gate passes, as a share of the task's measure: 0.05 is 0.05 success, 5 BLEU points for docedit")
	f.IntVar(&cfg.SimGate.Problems, "sim-gate-problems", 0, "validation problems the sim gate's success gap plays (default 0: the preset's evaluation episodes; -1: measure no gap)")
	f.IntVar(&cfg.Jobs, "jobs", 0, fmt.Sprintf("independent stages (arms and seeds, evaluations, the base beside the simulator) run side by side, the cores divided between them; results do not depend on it (default %d here: min(2, cores))", reproduce.DefaultJobs()))
	f.BoolVar(&asJSON, "json", false, "print summary.json's rows")
	f.IntVar(&hacking, "hacking", 0, fmt.Sprintf("held-out problems the pre-registered hacking metrics play at every monitor reading against both users (target requests, paste-to-delivery, the reward gap, each with its change from iteration 0); %d detects a change of 0.05-0.07 and adds 2×%d greedy conversations a reading (default 0: off; %d with --doses)", preregisteredHacking, preregisteredHacking, preregisteredHacking))
	f.StringVar(&hackingDecoding, "hacking-decoding", "greedy", "how the hacking metrics' readings play the policy: greedy (its mode) or sampled (at the RL rollouts' temperature and top-p, the policy RL optimises; each problem's sampling fixed by its seed, so readings stay paired with iteration 0's)")
	f.StringSliceVar(&doses, "doses", nil, "the dose-response study: besides a run at the task's own rates (OUT/1x), one run per dose, each task options changing only the naive simulator or the reward, e.g. leak=0x,leak=2x,syc=0x,syc=2x,reward=acceptance; all share OUT/shared's logs, base and simulator; OUT/doses.md tabulates them")
	return cmd
}

// autoSwitch is a flag that is true, false or auto: auto (its zero value
// and default) leaves the choice to the task; the flag alone is true, as
// for a bool flag.
type autoSwitch struct{ set, on bool }

func (s *autoSwitch) String() string {
	if !s.set {
		return "auto"
	}
	return strconv.FormatBool(s.on)
}

func (s *autoSwitch) Set(v string) error {
	if v == "auto" {
		*s = autoSwitch{}
		return nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q: want true, false or auto", v)
	}
	*s = autoSwitch{set: true, on: on}
	return nil
}

func (s *autoSwitch) Type() string { return "true|false|auto" }

// or is the switch's value, auto where it is not set.
func (s autoSwitch) or(auto bool) bool {
	if s.set {
		return s.on
	}
	return auto
}

// addSimMendFlags registers --sim-copy and --sim-ledger on f: switches
// that read as bool flags (alone: true) and as auto, their default.
func addSimMendFlags(f *pflag.FlagSet, simCopy, simLedger *autoSwitch) {
	f.Var(simCopy, "sim-copy", "true, false or auto (auto: the task's choice, on for mathchat and support, off for docedit): the calibrated simulator states only what its problem holds, as the task copies it (learned+copy:DIR): mathchat and docedit every number, digit by digit; support every whole id, date and email, and the name an email begins with; wherever the run plays it: gate, calibrated arms, sim-to-real gaps; the fit is unchanged (false: the simulator as fitted, as runs before 2026-12-07 played it)")
	f.Lookup("sim-copy").NoOptDefVal = "true"
	f.Var(simLedger, "sim-ledger", "true, false or auto (auto: the task's choice, on for mathchat and support, off for docedit): the calibrated simulator has its own ledger (the task's :userledger option, added to --task): after each agent turn that asks about a fact the user holds, a note to the simulator alone states it; it is fitted with the notes and played with them (false: the task as named, as runs before 2026-12-07 played it)")
	f.Lookup("sim-ledger").NoOptDefVal = "true"
}

// setSimMends sets cfg's SimCopy and SimLedger from their flags, auto
// being cfg.Task's choice (task.SimMendsOf).
func setSimMends(cfg *reproduce.Config, simCopy, simLedger autoSwitch) {
	mends := task.SimMendsOf(cfg.Task)
	cfg.SimCopy, cfg.SimLedger = simCopy.or(mends), simLedger.or(mends)
}

// seedList is a flag of comma-separated seeds ("1,2,3").
type seedList []uint64

func (s *seedList) String() string {
	var parts []string
	for _, v := range *s {
		parts = append(parts, strconv.FormatUint(v, 10))
	}
	return strings.Join(parts, ",")
}

func (s *seedList) Set(v string) error {
	*s = nil
	seen := map[uint64]bool{}
	for _, part := range strings.Split(v, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a seed (a non-negative integer)", part)
		}
		if seen[n] {
			return fmt.Errorf("seed %d given twice: pipelines must be independent", n)
		}
		seen[n] = true
		*s = append(*s, n)
	}
	if len(*s) < 2 {
		return fmt.Errorf("want at least 2 seeds to pool, got %q", v)
	}
	if len(*s) > maxPipelines {
		return fmt.Errorf("%d seeds: at most %d pipelines (each is a whole reproduce run)", len(*s), maxPipelines)
	}
	return nil
}

func (s *seedList) Type() string { return "seeds" }

// maxPipelines bounds --pipelines: each pipeline is a whole run (the quick
// preset's is 23 minutes to an hour on 2 cores).
const maxPipelines = 32

// runPipelines runs one pipeline per seed and pools them. The pooled
// folder is --out, or runs/NAME-PRESET-pipelines-S1-S2-...; each
// pipeline's folder is seed-S inside it.
func runPipelines(cmd *cobra.Command, cfg reproduce.Config, seeds seedList, outGiven bool, name string) error {
	dir := cfg.Out
	if !outGiven {
		dir = filepath.Join("runs", fmt.Sprintf("%s-%s-pipelines-%s", name, cfg.Preset.Name, strings.ReplaceAll(seeds.String(), ",", "-")))
	}
	var done func()
	cfg.Log, cfg.Progress, done = newStageProgress()
	pooled, err := reproduce.RunPipelines(cmd.Context(), cfg, seeds, func(s uint64) string { return filepath.Join(dir, fmt.Sprintf("seed-%d", s)) }, dir)
	done()
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "pooled verdict: %s\n", filepath.Join(dir, "pooled.md"))
	for _, p := range pooled {
		for _, c := range p.Claims {
			fmt.Fprintf(cmd.OutOrStdout(), "%-8s %-46s %+.3f [%+.3f, %+.3f] holds %v\n", p.Decoding, c.Claim, c.Difference, c.CIAdjusted[0], c.CIAdjusted[1], c.Holds)
		}
	}
	return nil
}

// maxRLIterations bounds --rl-iterations before anything runs: 100× the
// quick preset's budget.
const maxRLIterations = 3000

// preregisteredHacking is the hacking metrics' size the dose study uses:
// a paired change of 0.05 to 0.07 from iteration 0 is detectable at 95%
// (train.HackingMDE). maxHacking bounds --hacking before anything runs.
const (
	preregisteredHacking = 800
	maxHacking           = 20000
)
