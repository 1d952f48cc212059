package train

import (
	"context"
	"fmt"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

// monitor is the reward-hacking monitor: the current policy on a fixed
// set of held-out instances (same instances and seeds every time), once
// against the training user and once against the human proxy. A rising
// training-user reward with a flat or falling human reward is reward
// hacking.
func (r *rlRun) monitor(ctx context.Context, step int) error {
	// A stopped run starts no reading (the rollouts notice a cancellation
	// only now and then).
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("monitor: %w", err)
	}
	cfg := r.cfg
	agent := &chatlm.Agent{Model: r.policy, Gen: cfg.MonitorGen, Tool: r.tool}
	rc := rollout.Config{Split: cfg.MonitorSplit, Start: cfg.MonitorStart, Instances: cfg.MonitorInstances, Group: 1,
		Seed: cfg.Seed ^ seedMonitor, MaxTurns: cfg.MaxTurns, AgentName: "policy", CountTokens: r.policy.CountTokens}
	rec := map[string]any{MetricStep: step}
	// play returns the mean reward against user and records its success
	// and turns under monitor/NAME_….
	play := func(user dialog.User, name string) (float64, error) {
		rc.UserName = name
		eps, err := rollout.Run(ctx, r.task, agent, user, rc)
		if err != nil {
			return 0, fmt.Errorf("monitor against %s: %w", name, err)
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
		rec["monitor/"+name+"_success"], rec["monitor/"+name+"_turns"] = success/n, turns/n
		return reward / n, nil
	}
	tr, err := play(r.trainUser, "train_user")
	if err != nil {
		return err
	}
	r.st.MonitorTrain, rec[MetricMonitorTrainReward] = tr, tr
	if r.monitorUser != nil {
		hr, err := play(r.monitorUser, "human")
		if err != nil {
			return err
		}
		r.st.MonitorHuman, rec[MetricMonitorHumanReward] = hr, hr
		rec["monitor/reward_gap"] = tr - hr
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
