package reproduce

// The arms as one table. An arm is a partner (who the policy trains
// against) × an optimizer (how it learns from those conversations) × a
// budget (what it may spend), trained from the base once per RL seed.
// Every list of arms (the training stages, the evaluations, the sim-to-real
// gaps, the report's rows and curves) reads the run's table (armTable)
// rather than switching on an arm's name, so a new optimizer or partner is
// one entry here plus the file that trains it:
//
//	arm                        partner        optimizer           budget
//	base                       –              – (the SFT base)    –
//	static[-REWARD]            static(REWARD) static context RL   RL iterations, prompts, gradient tokens
//	naive-interactive          naive          GRPO                RL iterations
//	calibrated-interactive     calibrated     GRPO                RL iterations
//	oracle-interactive         oracle         GRPO                RL iterations
//	filtered-bc                logs           filtered BC         SFT steps
//	recalibrated-interactive   recalibrated   GRPO in rounds      RL iterations
//	refit-control-interactive  refit control  GRPO after a refit  RL iterations
//
// Config.Optimizers crosses more optimizers with the partners (the
// crossings below): each adds PARTNER-OPTIMIZER arms after the GRPO ones
// ("calibrated-grpo-greedy-baseline"; its static arms where it has a
// static form), and its claims (crossedClaims).

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/train"
)

// arm is one row of the table.
type arm struct {
	// name is the arm's folder, stage and report name
	// ("calibrated-interactive").
	name      string
	partner   partner
	optimizer optimizer
	budget    budget
}

// partner is who an arm's policy converses with while it trains.
type partner struct {
	// name is how the table names the partner ("calibrated").
	name string
	// user builds the user the policy trains against: for the static
	// partner the simulator that continues a logged context; nil where the
	// optimizer builds its own (the recalibrated arm's re-fitted
	// simulators) or needs none (the base, filtered BC on the logs).
	user func(r *run) (dialog.User, error)
	// staticReward is the static partner's reward on a logged context
	// (train.StaticConfig.Reward); "" for every other partner.
	staticReward string
}

// optimizer is how an arm learns. Exactly one of train and stages is set,
// except for the base, which has neither.
type optimizer struct {
	// name is how the table names the optimizer ("grpo").
	name string
	// rl marks an optimizer whose stage logs RL iteration records
	// (train.MetricReward, the monitor's readings) under the arm's seed
	// name, which the training curves and diagnostics read.
	rl bool
	// train trains arm a's seed index k from the base into
	// r.armCkpt(a.name, k) in one stage; the one-stage arms train side by
	// side.
	train func(ctx context.Context, r *run, a arm, k int) error
	// rlConfig, when set, adjusts the RL config train reads (a GRPO
	// variant's Baseline or TurnContinuations).
	rlConfig func(*train.RLConfig)
	// lr, when set, is the optimizer's learning rate in the preset's RL
	// budget (chosen on validation problems for each); 0 or unset is
	// GRPO's, RLBudget.LR (learningRate).
	lr func(preset.RLBudget) float64
	// stages are seed index k's stages of an optimizer trained in several
	// steps in order (the recalibrated arm's rounds, its control's
	// re-fit), each run alone after the one-stage arms.
	stages func(r *run, k int) []stage
	// costFactor is an RL iteration's wall time against GRPO's (1 when
	// unset), for the ETA (estimate.go): measured in the reference
	// profile's arms against the same partner.
	costFactor float64
}

// budget is what an arm may spend, the same for every arm that compares
// with another: each trainer reads its budget here, not from the preset.
type budget struct {
	// iterations are the RL iterations (the preset's, or
	// Config.RLIterations), or filtered BC's SFT steps.
	iterations int
	// prompts is static context RL's prompts (groups) per iteration, 0
	// for the preset's InstancesPerStep (Config.StaticPrompts); tokens its
	// gradient tokens per iteration, 0 for none (Config.StaticTokens).
	prompts, tokens int
}

// The partners.
var (
	partnerNaive = partner{name: dialog.Naive.String(), user: func(r *run) (dialog.User, error) { return r.t.User(dialog.Naive) }}
	// partnerCalibrated is the simulator fitted to the logs (Phase I).
	partnerCalibrated = partner{name: "calibrated", user: (*run).calibratedSim}
	// partnerOracle is the human proxy itself: the privileged upper
	// reference.
	partnerOracle = partner{name: "oracle", user: func(r *run) (dialog.User, error) { return r.t.User(dialog.Human) }}
	// partnerLogs is the logged conversations alone, filtered to those the
	// task marks solved.
	partnerLogs = partner{name: "logs"}
	// partnerRecalibrated is the calibrated simulator re-fitted between
	// rounds on the policy's conversations with the human proxy
	// (recalibrate.go); partnerRefitControl the same re-fitted once before
	// RL on the base's (refitcontrol.go).
	partnerRecalibrated = partner{name: "recalibrated"}
	partnerRefitControl = partner{name: "refit-control"}
)

// partnerStatic is the logged contexts scored by reward, each candidate
// turn continued, where the reward asks for it, by the calibrated
// simulator.
func partnerStatic(reward string) partner {
	return partner{name: "static", user: (*run).calibratedSim, staticReward: reward}
}

// The optimizers.
var (
	optGRPO       = optimizer{name: "grpo", rl: true, train: trainGRPO}                // arms.go
	optStatic     = optimizer{name: "static-context-rl", rl: true, train: trainStatic} // arms.go
	optFilteredBC = optimizer{name: "filtered-bc", train: trainFilteredBC}             // filteredbc.go
	// GRPO in rounds against re-fitted simulators (recalibrate.go), and
	// GRPO after one re-fit, the rounds' control (refitcontrol.go).
	optRecalibratingGRPO = optimizer{name: "grpo-recalibrating", stages: (*run).recalibrationStages}
	optRefitGRPO         = optimizer{name: "grpo-after-refit", stages: (*run).controlStages}
	// GRPO with the greedy conversation's reward as the baseline
	// (train.BaselineGreedy): a sample earns credit only where it beats
	// or loses to the mode a deployment decodes, not for pulling the
	// sampled policy up to its greedy level.
	optGRPOGreedy = optimizer{name: "grpo-greedy-baseline", rl: true, train: trainGRPO,
		rlConfig: func(c *train.RLConfig) { c.Baseline = train.BaselineGreedy },
		lr:       func(b preset.RLBudget) float64 { return b.GreedyBaselineLR }, costFactor: 1.1}
	// GRPO with turn-level credit (train.RLConfig.TurnContinuations, whose
	// estimator telescopes to the conversation's advantage so that the
	// agent's decision to stop earns nothing by itself: turncredit.go on
	// verl's RFC #7244), turnCreditContinuations continuations per state.
	optGRPOTurns = optimizer{name: "grpo-turn-credit", rl: true, train: trainGRPO,
		rlConfig: func(c *train.RLConfig) { c.TurnContinuations = turnCreditContinuations },
		lr:       func(b preset.RLBudget) float64 { return b.TurnCreditLR }, costFactor: 2.5}
)

// learningRate is o's learning rate in budget b: its own where the preset
// sets one, else GRPO's.
func (o optimizer) learningRate(b preset.RLBudget) float64 {
	if o.lr != nil {
		if lr := o.lr(b); lr > 0 {
			return lr
		}
	}
	return b.LR
}

// turnCreditContinuations is the turn-credit arm's K: each of a
// conversation's T agent turns but the first costs K continuations, K·(T−1)
// rest-of-conversations per sample, so K = 2 already triples an
// iteration's rollouts at quick's 6 turns (train's turn-credit learning
// test learns with 2). Its learning rate is chosen on validation problems
// (preset.RLBudget.TurnCreditLR); K itself is not: the validation sweep
// held it at 2, at 580-790 s a run against 125-190 s for GRPO.
const turnCreditContinuations = 2

// crossing is an optimizer Config.Optimizers crosses with the partners:
// it trains against the naive, calibrated and oracle partners as
// interactive, and against the static partner (each static reward) as
// static where it has a static form. Arm names are the partner's with
// suffix ("calibrated" + "-interactive"), a static arm's its static
// name's with staticSuffix ("static" + "-rft").
type crossing struct {
	// name is how --optimizers names it.
	name        string
	interactive optimizer
	// static is nil for an optimizer with no static form: its claims
	// against the static partner compare with GRPO's static arms.
	static               *optimizer
	suffix, staticSuffix string
	// about is what --optimizers' help says it does.
	about string
}

// crossings are the optimizers Config.Optimizers may name, in the order
// their arms are listed. GRPO's arms are the paper's, named as they were
// before there were others.
var crossings = []crossing{
	{name: optGRPO.name, interactive: optGRPO, static: &optStatic, suffix: "-interactive",
		about: "the paper's arms: GRPO over whole conversations (naive-, calibrated-, oracle-interactive) and on logged contexts (static); always trained"},
	{name: optRFT.name, interactive: optRFT, static: &optStaticRFT, suffix: "-" + optRFT.name, staticSuffix: "-" + optRFT.name,
		about: "online rejection-sampling fine-tuning (expert iteration): the conversations the partner marks solved (on the static partner, the candidates its reward marks) fine-tune the policy on their agent tokens (rft.go)"},
	{name: optGRPOGreedy.name, interactive: optGRPOGreedy, suffix: "-" + optGRPOGreedy.name,
		about: "GRPO with the greedy conversation's reward as each problem's baseline, so a sample earns credit only against the mode a deployment decodes (one more conversation per problem); interactive partners only"},
	{name: optGRPOTurns.name, interactive: optGRPOTurns, suffix: "-" + optGRPOTurns.name,
		about: fmt.Sprintf("GRPO with turn-level credit: each agent turn's advantage from %d on-policy continuations before and after it, adding up to the conversation's (up to %d× GRPO's conversations at 6 turns); interactive partners only", turnCreditContinuations, 1+turnCreditContinuations*5)},
}

// OptimizersHelp describes each optimizer --optimizers knows, for its
// help: "NAME: what it does", one a line.
func OptimizersHelp() string {
	var lines []string
	for _, c := range crossings {
		lines = append(lines, c.name+": "+c.about)
	}
	return strings.Join(lines, "\n")
}

// crossingNames are the names --optimizers knows, in crossings' order.
func crossingNames() []string {
	var out []string
	for _, c := range crossings {
		out = append(out, c.name)
	}
	return out
}

// CheckOptimizers reports the first unusable list of optimizers
// (Config.Optimizers): an unknown name (the refusal lists the known ones),
// one named twice, or a list without GRPO, whose arms are the ones every
// other optimizer's claims compare with.
func CheckOptimizers(names []string) error {
	known := crossingNames()
	seen := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return fmt.Errorf("optimizer %q, want one of %s", n, strings.Join(known, ", "))
		}
		if seen[n] {
			return fmt.Errorf("optimizer %s given twice: one set of arms each", n)
		}
		seen[n] = true
	}
	if len(names) > 0 && !seen[optGRPO.name] {
		return fmt.Errorf("optimizers %s leave out %s: its arms are the paper's, which every other optimizer's claims compare with", strings.Join(names, ","), optGRPO.name)
	}
	return nil
}

// crossings are the run's optimizers in crossings' order; default GRPO
// alone.
func (r *run) crossings() []crossing {
	var out []crossing
	for _, c := range crossings {
		if c.name == optGRPO.name || slices.Contains(r.cfg.Optimizers, c.name) {
			out = append(out, c)
		}
	}
	return out
}

// optimizersName is how the manifest records the optimizers: comma
// separated in crossings' order, "grpo" for the default.
func (r *run) optimizersName() string {
	var names []string
	for _, c := range r.crossings() {
		names = append(names, c.name)
	}
	return strings.Join(names, ",")
}

// staticArmName is the static arm of the i-th of the run's static rewards
// rw: ArmStatic for the first, ArmStatic-REWARD for each other.
func staticArmName(i int, rw string) string {
	if i > 0 {
		return ArmStatic + "-" + rw
	}
	return ArmStatic
}

// armTable is the run's arms in report order: the base, each static
// reward's arm (ArmStatic for the first of staticRewards, ArmStatic-REWARD
// for each other), the three interactive arms, then filtered BC and the
// recalibrated arm with its control when the run trains them.
func (r *run) armTable() []arm {
	rl := budget{iterations: r.rlConfig(0).Iterations}
	table := []arm{{name: ArmBase}}
	for _, c := range r.crossings() {
		if c.static != nil {
			for i, rw := range r.staticRewards() {
				table = append(table, arm{staticArmName(i, rw) + c.staticSuffix, partnerStatic(rw), *c.static,
					budget{iterations: rl.iterations, prompts: r.cfg.StaticPrompts, tokens: r.cfg.StaticTokens}})
			}
		}
		for _, p := range []partner{partnerNaive, partnerCalibrated, partnerOracle} {
			table = append(table, arm{p.name + c.suffix, p, c.interactive, rl})
		}
	}
	if r.cfg.FilteredBC {
		table = append(table, arm{ArmFilteredBC, partnerLogs, optFilteredBC, budget{iterations: r.cfg.Preset.FilteredBC.Steps}})
	}
	if r.cfg.Recalibrate {
		table = append(table,
			arm{ArmRecalibrated, partnerRecalibrated, optRecalibratingGRPO, rl},
			arm{ArmRefitControl, partnerRefitControl, optRefitGRPO, rl})
	}
	return table
}

// armsWhere are the names of the table's arms that keep reports true, in
// report order.
func (r *run) armsWhere(keep func(arm) bool) []string {
	var out []string
	for _, a := range r.armTable() {
		if keep(a) {
			out = append(out, a.name)
		}
	}
	return out
}

// arms are the names of every arm of the run, in report order.
func (r *run) arms() []string { return r.armsWhere(func(arm) bool { return true }) }

// trainedArms are the arms trained in one stage from the base once per RL
// seed (every arm but the base and those trained in several stages).
func (r *run) trainedArms() []string {
	return r.armsWhere(func(a arm) bool { return a.optimizer.train != nil })
}

// stagedArms are the arms trained in several stages (optimizer.stages).
func (r *run) stagedArms() []arm {
	var out []arm
	for _, a := range r.armTable() {
		if a.optimizer.stages != nil {
			out = append(out, a)
		}
	}
	return out
}

// rlArms are the one-stage arms whose records are RL iterations: the
// training curves' and diagnostics' arms.
func (r *run) rlArms() []string {
	return r.armsWhere(func(a arm) bool { return a.optimizer.rl && a.optimizer.train != nil })
}

// staticArms are the run's static context RL arms, in report order.
func (r *run) staticArms() []string {
	return r.armsWhere(func(a arm) bool { return a.partner.staticReward != "" })
}

// armNamed is the run's arm called name; false when the run has none.
func (r *run) armNamed(name string) (arm, bool) {
	table := r.armTable()
	i := slices.IndexFunc(table, func(a arm) bool { return a.name == name })
	if i < 0 {
		return arm{}, false
	}
	return table[i], true
}

// staticReward is the reward static arm trains with; false when arm is no
// static arm of the run.
func (r *run) staticReward(name string) (string, bool) {
	a, ok := r.armNamed(name)
	return a.partner.staticReward, ok && a.partner.staticReward != ""
}

// learnedSim loads a simulator the run fitted in dir (its calibrated
// one, a recalibration round's), copying what it holds when the run says
// so (Config.SimCopy, run.simCopy): every place the run plays one loads
// it here.
func (r *run) learnedSim(dir string) (*chatlm.User, error) {
	sim, err := spec.LearnedUser(r.t, dir)
	if err != nil {
		return nil, err
	}
	sim.CopyAs(r.t, r.simCopy())
	return sim, nil
}

// simCopy is the copy the run holds its calibrated simulator to: the
// task's (chatlm.CopyOf) with Config.SimCopy, none without.
func (r *run) simCopy() dialog.Copy {
	if !r.cfg.SimCopy {
		return dialog.CopyOff
	}
	return chatlm.CopyOf(r.t)
}

// calibratedSim is the run's calibrated simulator (checkpoints/sim).
func (r *run) calibratedSim() (dialog.User, error) {
	sim, err := r.learnedSim(r.ckpt("sim"))
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return sim, nil
}
