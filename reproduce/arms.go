package reproduce

// The training of the arms: RL from the base against each arm's user, static
// context RL on the logs, filtered behaviour cloning.

import (
	"cmp"
	"context"
	"fmt"

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

// staticConfig is the static arm's trainer config around the RL config.
func (r *run) staticConfig(cfg train.RLConfig) train.StaticConfig {
	if r.cfg.StaticPrompts > 0 {
		cfg.InstancesPerStep = r.cfg.StaticPrompts
	}
	return train.StaticConfig{RLConfig: cfg, Reward: cmp.Or(r.cfg.StaticReward, train.StaticOutcome), FillRounds: r.cfg.StaticFill}
}
