package reproduce

// Online rejection-sampling fine-tuning (expert iteration) as an optimizer
// of the arm table (--optimizers rft): each iteration the policy plays the
// group's conversations per problem against the arm's partner, keeps those
// the partner's reward marks successful, and is fine-tuned on their agent
// tokens (train.RFT; train.StaticRFT on the static partner's logged
// contexts with its reward). Its arms are PARTNER-rft ("calibrated-rft")
// and static-rft (static-REWARD-rft for each other static reward).

import (
	"context"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/train"
)

// The optimizers of the rft crossing: against a user, and on the static
// partner's logged contexts. Both log RL iteration records (the filter's
// kept conversations and problems, train.MetricRFTKept and
// train.MetricRFTKeptProblems, and their agent tokens as
// train.MetricGradTokens) for the curves and diagnostics.
var (
	optRFT       = optimizer{name: "rft", rl: true, train: trainRFT, lr: rftLR, costFactor: 0.5}
	optStaticRFT = optimizer{name: "static-rft", rl: true, train: trainRFT, lr: rftLR, costFactor: 0.5}
)

func rftLR(b preset.RLBudget) float64 { return b.RFTLR }

// trainRFT trains arm a's seed index k by rejection-sampling fine-tuning
// from the base with the RL config GRPO trains with (the same budget, the
// group as the conversations per problem, every success kept), the human
// proxy the monitor's. A static arm's budget is its iterations and
// prompts: its fill rounds and gradient tokens are static context RL's way
// of filling groups whose rewards are all equal, which the filter, keeping
// every success, has no use for.
func trainRFT(ctx context.Context, r *run, a arm, k int) error {
	policy, u, human, err := r.armStart(a)
	if err != nil {
		return err
	}
	cfg := train.RFTConfig{RLConfig: r.rlConfig(k)}
	cfg.Iterations = a.budget.iterations
	cfg.LR = a.optimizer.learningRate(r.cfg.Preset.RL)
	out, log := r.armCkpt(a.name, k), r.metricsLog(seedName(a.name, k))
	var res train.RLResult
	if a.partner.staticReward == "" {
		res, err = train.RFT(ctx, policy, r.t, u, human, cfg, out, log)
	} else {
		logs, lerr := r.logs()
		if lerr != nil {
			return lerr
		}
		if a.budget.prompts > 0 {
			cfg.InstancesPerStep = a.budget.prompts
		}
		behaviour := func(agent string) (dialog.Agent, error) { return spec.Agent(r.t, agent) }
		sc := train.StaticRFTConfig{RFTConfig: cfg, Reward: a.partner.staticReward}
		res, err = train.StaticRFT(ctx, policy, r.t, logs, behaviour, u, human, sc, out, log)
	}
	if err == nil {
		r.trained(out, res)
	}
	return err
}
