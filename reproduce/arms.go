package reproduce

// The training of the arms: RL from the base against each arm's user, static
// context RL on the logs, filtered behaviour cloning.

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
		if reward, ok := r.staticReward(name); ok {
			logs, err := r.logs()
			if err != nil {
				return err
			}
			sim, err := spec.LearnedUser(r.t, r.ckpt("sim"))
			if err != nil {
				return err
			}
			behaviour := func(agent string) (dialog.Agent, error) { return spec.Agent(r.t, agent) }
			res, err := train.Static(ctx, policy, r.t, logs, behaviour, sim, human, r.staticConfig(cfg, reward), out, log)
			if err == nil {
				r.trained(out, res)
			}
			return err
		}
		switch name {
		case ArmFilteredBC:
			return r.filteredBC(k)(ctx)
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

// staticArms are the run's static arms, in report order: ArmStatic trains
// the first of staticRewards (so a run with one static reward, whichever,
// has the one static arm it always had), ArmStatic-REWARD each other one.
func (r *run) staticArms() []string {
	var out []string
	for i, rw := range r.staticRewards() {
		if i == 0 {
			out = append(out, ArmStatic)
		} else {
			out = append(out, ArmStatic+"-"+rw)
		}
	}
	return out
}

// staticReward is the reward static arm trains with; false when arm is no
// static arm of the run.
func (r *run) staticReward(arm string) (string, bool) {
	if i := slices.Index(r.staticArms(), arm); i >= 0 {
		return r.staticRewards()[i], true
	}
	return "", false
}

// withStaticArms is arms with the run's static arms after ArmStatic's
// first in place of it: every list of arms (report order, training,
// evaluation, gaps) names them through it.
func (r *run) withStaticArms(arms []string) []string {
	i := slices.Index(arms, ArmStatic)
	if i < 0 {
		return arms
	}
	return slices.Concat(arms[:i], r.staticArms(), arms[i+1:])
}

// staticConfig is a static arm's trainer config around the RL config.
func (r *run) staticConfig(cfg train.RLConfig, reward string) train.StaticConfig {
	if r.cfg.StaticPrompts > 0 {
		cfg.InstancesPerStep = r.cfg.StaticPrompts
	}
	return train.StaticConfig{RLConfig: cfg, Reward: reward, FillRounds: r.cfg.StaticFill, GradTokens: r.cfg.StaticTokens}
}

// staticRewardsName is how the manifest records the static rewards: comma
// separated in staticRewardOrder ("outcome,continuation"), so that a run
// with one reward records it as runs did before there were several, and
// a program from before reads a run with several as a reward it does not
// have and refuses to resume it.
func (r *run) staticRewardsName() string { return strings.Join(r.staticRewards(), ",") }
