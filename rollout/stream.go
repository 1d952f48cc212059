package rollout

import (
	"context"
	"fmt"

	"github.com/calibrl/calibrl/dialog"
)

// StreamChunk is how many instances Stream plays at once. A chunk bounds
// the memory of a run (episodes are handed on as their chunk finishes) and
// how long a cancellation waits (the chunk in play stops at its next
// step); it is large enough that model-backed players still answer in
// full batches.
const StreamChunk = 128

// Stream plays cfg's episodes StreamChunk instances at a time and hands
// each to emit as its chunk finishes, in order of (instance, sample): the
// episodes Run returns, without holding them all. Every episode's
// randomness depends only on (Seed, instance, sample), so chunking changes
// none of them. It stops at the first error of emit or of play, and when
// ctx ends, between chunks or inside one.
func Stream(ctx context.Context, task Task, agent dialog.Agent, user dialog.User, cfg Config, emit func(dialog.Episode) error) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	total := cfg.Instances * max(cfg.Group, 1)
	progress := cfg.Progress
	done := 0
	for lo := 0; lo < cfg.Instances; lo += StreamChunk {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("rollout: %w", err)
		}
		one := cfg
		one.Start, one.Instances = cfg.Start+lo, min(StreamChunk, cfg.Instances-lo)
		if progress != nil {
			before := done
			one.Progress = func(d, _ int) { progress(before+d, total) }
		}
		eps, err := Run(ctx, task, agent, user, one)
		if err != nil {
			return err
		}
		for i := range eps {
			if err := emit(eps[i]); err != nil {
				return err
			}
		}
		done += len(eps)
	}
	return nil
}

// ShareStream is Share without holding the episodes: cfg.Instances
// episodes shared out between agents as Share does, each handed to emit
// in Share's order as it finishes.
func ShareStream(ctx context.Context, task Task, agents []dialog.Agent, names []string, user dialog.User, cfg Config, emit func(dialog.Episode) error) error {
	return eachShare(agents, names, cfg, func(one Config, a dialog.Agent) error {
		return Stream(ctx, task, a, user, one, emit)
	})
}
