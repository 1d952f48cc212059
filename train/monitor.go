package train

import (
	"context"
	"fmt"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/rollout"
)

// monitor is the reward-hacking monitor: the current policy on a fixed
// set of held-out instances (same instances and seeds every time), once
// against the training user and once against the human proxy. A rising
// training-user reward with a flat or falling human reward is reward
// hacking. With MonitorSampled the policy also plays the human proxy
// sampled as in the rollouts, so that a reading follows both the policy
// RL optimises and its greedy mode.
func (r *rlRun) monitor(ctx context.Context, step int) error {
	// A stopped run starts no reading (the rollouts notice a cancellation
	// only now and then).
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("monitor: %w", err)
	}
	cfg := r.cfg
	agent := &chatlm.Agent{Model: r.policy, Gen: cfg.MonitorGen, Tool: r.tool}
	rc := rollout.Config{Split: cfg.MonitorSplit, Start: cfg.MonitorStart, Instances: cfg.MonitorInstances, Group: 1,
		Seed: cfg.monitorSeed(), MaxTurns: cfg.MaxTurns, AgentName: "policy", CountTokens: r.policy.CountTokens}
	rec := map[string]any{MetricStep: step}
	// play returns agent's mean reward against user and records its
	// success and turns under monitor/KEY_….
	play := func(agent dialog.Agent, user dialog.User, name, key string) (float64, error) {
		rc.UserName = name
		eps, err := rollout.Run(ctx, r.task, agent, user, rc)
		if err != nil {
			return 0, fmt.Errorf("monitor against %s: %w", key, err)
		}
		var reward, success, turns float64
		for _, ep := range eps {
			reward += ep.Reward
			turns += float64(ep.Turns)
			if ep.Success {
				success++
			}
		}
		n := float64(len(eps))
		rec["monitor/"+key+"_success"], rec["monitor/"+key+"_turns"] = success/n, turns/n
		return reward / n, nil
	}
	tr, err := play(agent, r.trainUser, "train_user", "train_user")
	if err != nil {
		return err
	}
	r.st.MonitorTrain, rec[MetricMonitorTrainReward] = tr, tr
	if r.monitorUser != nil {
		hr, err := play(agent, r.monitorUser, "human", "human")
		if err != nil {
			return err
		}
		r.st.MonitorHuman, rec[MetricMonitorHumanReward] = hr, hr
		rec["monitor/reward_gap"] = tr - hr
		if cfg.MonitorSampled {
			sampled := &chatlm.Agent{Model: r.policy, Gen: cfg.monitorSampledGen(), Tool: r.tool}
			sr, err := play(sampled, r.monitorUser, "human", "human_sampled")
			if err != nil {
				return err
			}
			rec["monitor/human_sampled_reward"] = sr
		}
	}
	r.log(rec)
	if cfg.HackingInstances > 0 {
		if err := r.hacking(ctx, step); err != nil {
			return err
		}
	}
	r.st.MonitorPending = false
	return nil
}

// monitorSeed seeds the monitor's episodes: MonitorSeed when set, else
// the RL seed's own.
func (c RLConfig) monitorSeed() uint64 {
	if c.MonitorSeed != nil {
		return *c.MonitorSeed
	}
	return c.Seed ^ seedMonitor
}

// monitorSampledGen is MonitorSampled's decoding: the rollouts'
// temperature and top-p with the monitor's turn length.
func (c RLConfig) monitorSampledGen() chatlm.GenConfig {
	g := c.MonitorGen
	g.Temperature, g.TopP = c.Gen.Temperature, c.Gen.TopP
	return g
}

// MonitorOn places the monitor's problems on slice s of the test split in
// a run seeded with seed, exactly as package eval defines the slice: the
// problems from s.Start, the users seeded s.Seed(seed), the same for every
// RL seed of the run (RLConfig.Seed plays no part), so that every arm and
// seed is read on the same conversations' users and a reading of the
// policy RL started from is the same for all of them. The hacking
// metrics' problems, which start at MonitorStart, move with it. As for an
// evaluation, the caller checks that the sets fit the slice (s.Check of
// the larger of MonitorInstances and HackingInstances).
func (c *RLConfig) MonitorOn(s eval.Slice, seed uint64) {
	us := s.Seed(seed)
	c.MonitorSplit, c.MonitorStart, c.MonitorSeed = "test", s.Start, &us
}
