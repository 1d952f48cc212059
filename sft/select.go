package sft

import (
	"context"
	"fmt"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/fidelity"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

// SelectFidelity names the fidelity selector in a fit's resumable state.
const SelectFidelity = "fidelity"

// FidelitySelector chooses a simulator's checkpoint by its per-history
// fidelity to the human proxy (fidelity.MeasureHistories' Excess, lower
// better) on logs, validation conversations the fit never trains on
// (fidelity.ValidationLogs): at every evaluation the weights being fitted
// play the simulator as cfg configures it (its oracle context, judge and
// notes) with gen's sampling, the way it is played once saved. NLL alone
// rewards a simulator that spreads probability over the users' templates
// while saying the wrong thing to the history in front of it; the
// selector keeps the weights that answer histories as the proxy does,
// with NLL breaking ties within a standard error (train.SFTSelect).
func FidelitySelector(cfg Config, human dialog.User, logs []dialog.Episode, gen chatlm.GenConfig, hc fidelity.HistoryConfig) *train.Selector {
	judge := chatlm.JoinJudges(cfg.Judge, cfg.UserNotes)
	return &train.Selector{Name: SelectFidelity, Score: func(ctx context.Context, m *chatlm.Model) (float64, float64, error) {
		u := &chatlm.User{Model: m, Oracle: cfg.Oracle, Judge: judge, Gen: gen}
		rep, err := fidelity.MeasureHistories(ctx, "learned", u, human, logs, hc)
		if err != nil {
			return 0, 0, fmt.Errorf("fidelity selector: %w", err)
		}
		return rep.Excess, rep.ExcessSE, nil
	}}
}

// Default sizes of ValidationSelector's measurement at each evaluation:
// smaller than the gate's (reproduce), since it runs at every evaluation;
// the standard error it reports lets NLL break the ties it cannot tell.
const (
	SelectConversations = 30
	SelectSamples       = 8
)

// ValidationSelector is FidelitySelector on n validation conversations of
// t's scripted profiles with its human proxy (fidelity.ValidationLogs,
// turn limit maxTurns, users seeded by seed), k draws per history, the
// simulator sampled with gen, as checkpoints play (the caller passes
// spec.DefaultGen: spec's tests build simulators with this package).
func ValidationSelector(ctx context.Context, t task.Task, cfg Config, gen chatlm.GenConfig, maxTurns int, seed uint64, n, k int) (*train.Selector, error) {
	ft, ok := t.(fidelity.Task)
	if !ok {
		return nil, fmt.Errorf("sft: select by fidelity: task %s has no scripted agents to play validation conversations", t.Name())
	}
	if n <= 0 || k <= 0 {
		return nil, fmt.Errorf("sft: select by fidelity: %d conversations, %d samples: want both > 0", n, k)
	}
	human, err := t.User(dialog.Human)
	if err != nil {
		return nil, err
	}
	logs, err := fidelity.ValidationLogs(ctx, ft, nil, human, n, seed, maxTurns)
	if err != nil {
		return nil, err
	}
	return FidelitySelector(cfg, human, logs, gen, fidelity.HistoryConfig{Samples: k, Seed: seed}), nil
}
