package reproduce

// The training of the RL arms (armtable.go): GRPO from the base against
// each arm's partner, static context RL on the logs; and the static
// rewards, one static arm each.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/train"
)

// trainArm is the stage that trains arm a's seed index k with its
// optimizer.
func (r *run) trainArm(a arm, k int) func(context.Context) error {
	return func(ctx context.Context) error { return a.optimizer.train(ctx, r, a, k) }
}

// armStart is what every trained arm starts from: the base's weights,
// its partner's user and the human proxy (the monitor's user).
func (r *run) armStart(a arm) (policy *chatlm.Model, partner, human dialog.User, err error) {
	if policy, _, err = chatlm.Load(r.ckpt(ArmBase)); err != nil {
		return nil, nil, nil, err
	}
	if human, err = r.t.User(dialog.Human); err != nil {
		return nil, nil, nil, err
	}
	if partner, err = a.partner.user(r); err != nil {
		return nil, nil, nil, err
	}
	return policy, partner, human, nil
}

// trainGRPO trains arm a's seed index k with GRPO from the base against
// its partner, the human proxy the monitor's.
func trainGRPO(ctx context.Context, r *run, a arm, k int) error {
	policy, u, human, err := r.armStart(a)
	if err != nil {
		return err
	}
	cfg := r.rlConfig(k)
	cfg.Iterations = a.budget.iterations
	cfg.LR = a.optimizer.learningRate(r.cfg.Preset.RL)
	if a.optimizer.rlConfig != nil {
		a.optimizer.rlConfig(&cfg)
	}
	out := r.armCkpt(a.name, k)
	res, err := train.GRPO(ctx, policy, r.t, u, human, cfg, out, r.metricsLog(seedName(a.name, k)))
	if err == nil {
		r.trained(out, res)
	}
	return err
}

// trainStatic trains arm a's seed index k with static context RL from the
// base: single turns of the logged histories, completed by the behaviour
// agent against the partner's simulator and scored by its reward.
func trainStatic(ctx context.Context, r *run, a arm, k int) error {
	policy, sim, human, err := r.armStart(a)
	if err != nil {
		return err
	}
	logs, err := r.logs()
	if err != nil {
		return err
	}
	cfg := r.rlConfig(k)
	cfg.Iterations = a.budget.iterations
	out := r.armCkpt(a.name, k)
	behaviour := func(agent string) (dialog.Agent, error) { return spec.Agent(r.t, agent) }
	res, err := train.Static(ctx, policy, r.t, logs, behaviour, sim, human, r.staticConfig(cfg, a), out, r.metricsLog(seedName(a.name, k)))
	if err == nil {
		r.trained(out, res)
	}
	return err
}

// ArmStaticContinuation is static context RL with the continuation
// reward in a run that trains it beside the outcome reward
// (Config.StaticRewards outcome and continuation): each static reward is
// its own arm, seeds, evaluations and claims, so that a run reports both
// side by side. ArmStatic keeps the outcome reward and its name, the arm
// the paper's claims are about.
const ArmStaticContinuation = ArmStatic + "-" + train.StaticContinuation

// staticRewardOrder is the order of the static rewards, which decides the
// arms' names and report order whatever the order they were asked in.
var staticRewardOrder = []string{train.StaticOutcome, train.StaticContinuation, train.StaticBehaviour}

// CheckStaticRewards reports the first unusable list of static rewards
// (Config.StaticRewards): an unknown reward or one named twice.
func CheckStaticRewards(rewards []string) error {
	seen := map[string]bool{}
	for _, rw := range rewards {
		if !slices.Contains(staticRewardOrder, rw) {
			return fmt.Errorf("static reward %q, want %s", rw, strings.Join(staticRewardOrder, ", "))
		}
		if seen[rw] {
			return fmt.Errorf("static reward %s given twice: one arm each", rw)
		}
		seen[rw] = true
	}
	return nil
}

// staticRewards are the run's static rewards in staticRewardOrder;
// default outcome alone.
func (r *run) staticRewards() []string {
	if len(r.cfg.StaticRewards) == 0 {
		return []string{train.StaticOutcome}
	}
	var out []string
	for _, rw := range staticRewardOrder {
		if slices.Contains(r.cfg.StaticRewards, rw) {
			out = append(out, rw)
		}
	}
	return out
}

// staticConfig is static arm a's trainer config around the RL config: its
// partner's reward, its budget's prompts and gradient tokens.
func (r *run) staticConfig(cfg train.RLConfig, a arm) train.StaticConfig {
	if a.budget.prompts > 0 {
		cfg.InstancesPerStep = a.budget.prompts
	}
	return train.StaticConfig{RLConfig: cfg, Reward: a.partner.staticReward, FillRounds: r.cfg.StaticFill, GradTokens: a.budget.tokens}
}

// staticRewardsName is how the manifest records the static rewards: comma
// separated in staticRewardOrder ("outcome,continuation"), so that a run
// with one reward records it as runs did before there were several, and
// a program from before reads a run with several as a reward it does not
// have and refuses to resume it.
func (r *run) staticRewardsName() string { return strings.Join(r.staticRewards(), ",") }
