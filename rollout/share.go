package rollout

import (
	"context"
	"fmt"

	"github.com/calibrl/calibrl/dialog"
)

// Share plays cfg.Instances episodes shared out between agents, each on
// its own consecutive instances from cfg.Start (the first Instances mod
// len(agents) agents get one more), in agent order: how logs of several
// behaviour policies are collected. names[i] is recorded as agents[i]'s
// name; cfg.AgentName is ignored, and cfg.Progress sees the whole count.
func Share(ctx context.Context, task Task, agents []dialog.Agent, names []string, user dialog.User, cfg Config) ([]dialog.Episode, error) {
	var all []dialog.Episode
	err := eachShare(agents, names, cfg, func(one Config, a dialog.Agent) error {
		eps, err := Run(ctx, task, a, user, one)
		all = append(all, eps...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

// eachShare calls play with each agent and its share of cfg: consecutive
// instances from cfg.Start, the first Instances mod len(agents) agents
// one more, names[i] as the agent's name, and a Progress that counts
// within the whole run.
func eachShare(agents []dialog.Agent, names []string, cfg Config, play func(one Config, a dialog.Agent) error) error {
	if len(agents) == 0 || len(agents) != len(names) {
		return fmt.Errorf("rollout: %d agents with %d names", len(agents), len(names))
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	total, progress := cfg.Instances, cfg.Progress
	start, done := cfg.Start, 0
	for i, a := range agents {
		count := total / len(agents)
		if i < total%len(agents) {
			count++
		}
		if count == 0 {
			continue
		}
		one := cfg
		one.Start, one.Instances, one.AgentName = start, count, names[i]
		if progress != nil {
			before := done
			one.Progress = func(d, _ int) { progress(before+d, total) }
		}
		if err := play(one, a); err != nil {
			return err
		}
		start += count
		done += count * max(cfg.Group, 1)
	}
	return nil
}
