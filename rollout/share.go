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
	if len(agents) == 0 || len(agents) != len(names) {
		return nil, fmt.Errorf("rollout: %d agents with %d names", len(agents), len(names))
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	total, progress := cfg.Instances, cfg.Progress
	var all []dialog.Episode
	start := cfg.Start
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
			done := len(all)
			one.Progress = func(d, _ int) { progress(done+d, total) }
		}
		eps, err := Run(ctx, task, a, user, one)
		if err != nil {
			return nil, err
		}
		all = append(all, eps...)
		start += count
	}
	return all, nil
}
