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

import (
	"context"
	"slices"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/spec"
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
	// stages are seed index k's stages of an optimizer trained in several
	// steps in order (the recalibrated arm's rounds, its control's
	// re-fit), each run alone after the one-stage arms.
	stages func(r *run, k int) []stage
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
)

// armTable is the run's arms in report order: the base, each static
// reward's arm (ArmStatic for the first of staticRewards, ArmStatic-REWARD
// for each other), the three interactive arms, then filtered BC and the
// recalibrated arm with its control when the run trains them.
func (r *run) armTable() []arm {
	rl := budget{iterations: r.rlConfig(0).Iterations}
	table := []arm{{name: ArmBase}}
	for i, rw := range r.staticRewards() {
		name := ArmStatic
		if i > 0 {
			name = ArmStatic + "-" + rw
		}
		table = append(table, arm{name, partnerStatic(rw), optStatic,
			budget{iterations: rl.iterations, prompts: r.cfg.StaticPrompts, tokens: r.cfg.StaticTokens}})
	}
	table = append(table,
		arm{ArmNaive, partnerNaive, optGRPO, rl},
		arm{ArmCalibrated, partnerCalibrated, optGRPO, rl},
		arm{ArmOracle, partnerOracle, optGRPO, rl})
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

// calibratedSim is the run's calibrated simulator (checkpoints/sim).
func (r *run) calibratedSim() (dialog.User, error) {
	sim, err := spec.LearnedUser(r.t, r.ckpt("sim"))
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return sim, nil
}
