// Package rollout runs many episodes of an agent talking with a user,
// concurrently and deterministically.
//
// Episodes advance in lockstep: every live episode's agent speaks, then every
// live episode's user answers. Agents and users backed by a model answer a
// whole step in one batch (dialog.BatchAgent, dialog.BatchUser); scripted
// ones are fanned out over a worker pool. Each episode draws its randomness
// from its own generators, seeded from (Seed, instance, sample), so the
// episodes do not depend on the worker count or on which other episodes run
// beside them.
//
// An episode's life (the opening, agent and user turns, the environment's
// notes, the ends and the score) is written once, in Live, and asking many
// players at once, in one batch or one session at a time, in OpenAll,
// ActAll and ReplyAll: Play runs them in lockstep; a server steps one
// episode per request; static RL resumes logged conversations from a cut
// (Resume).
package rollout

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/level"
)

// Task is what the rollout needs of a task.
type Task interface {
	Name() string
	// Spec is the name that rebuilds the task ("mathchat:easy"), which
	// its episodes record.
	Spec() string
	Instance(split string, index int) (*dialog.Oracle, *dialog.View, error)
	Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score
}

// Config says which episodes to run.
type Config struct {
	// Split is the instance split: "train" or "test".
	Split string
	// Start is the first instance index; Instances how many instances.
	Start, Instances int
	// Group is how many episodes run on each instance (GRPO's G). Default 1.
	Group int
	// Seed seeds every episode's agent and user randomness.
	Seed uint64
	// MaxTurns bounds the agent's turns in an episode. Default 10.
	MaxTurns int
	// Workers bounds concurrent scripted sessions. Default GOMAXPROCS.
	Workers int
	// AgentName and UserName are recorded in each episode.
	AgentName, UserName string
	// CountTokens measures messages. Default dialog.ApproxTokens.
	CountTokens func(string) int
	// Progress, when set, is called after each step with the number of
	// finished episodes and the total.
	Progress func(done, total int)
}

// MaxHeld bounds the episodes Run and Play hold in memory at once (they
// return them all): about a million, a few GB of conversations. Commands
// that write episodes as they finish (collect, eval with --episodes-out:
// ShareStream) take any number.
const MaxHeld = 1 << 20

// DefaultMaxTurns is the turn limit when Config.MaxTurns is zero: the
// task levels' own (level.DefaultMaxTurns). Commands that know their task
// give its level's limit instead (task.Name.MaxTurns: N at "hN").
const DefaultMaxTurns = level.DefaultMaxTurns

func (c *Config) fill() {
	if c.Group <= 0 {
		c.Group = 1
	}
	if c.MaxTurns <= 0 {
		c.MaxTurns = DefaultMaxTurns
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.CountTokens == nil {
		c.CountTokens = dialog.ApproxTokens
	}
}

// Validate reports a config that cannot run.
func (c Config) Validate() error {
	if c.Instances <= 0 {
		return fmt.Errorf("rollout: number of episodes must be positive, got %d", c.Instances)
	}
	if c.Start < 0 {
		return fmt.Errorf("rollout: start index must not be negative, got %d", c.Start)
	}
	if c.Split == "" {
		return errors.New("rollout: no split")
	}
	return nil
}

// EpisodeSeed is the seed of one episode's randomness. It mixes the run
// seed, the instance and the sample so that neighbouring runs differ.
func EpisodeSeed(seed uint64, index, sample int) uint64 {
	return splitmix(splitmix(seed^0x9e3779b97f4a7c15) ^ splitmix(uint64(index)<<20^uint64(sample)))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// contextKeeper is a session that can keep state across the turns of its
// episode (a model's key/value cache of the conversation, so that a turn
// reads only what is new) when it is told that the episode will be ended:
// Play calls KeepContext before the first turn and Release when it
// returns. The episodes are the same either way.
type contextKeeper interface {
	KeepContext()
	Release()
}

// Run plays the episodes and returns them in order of (instance, sample).
func Run(ctx context.Context, task Task, agent dialog.Agent, user dialog.User, cfg Config) ([]dialog.Episode, error) {
	eps, _, err := Play(ctx, task, agent, user, cfg)
	return eps, err
}

// Play is Run that also returns each episode's agent session, for trainers
// that need what a model agent recorded (the tokens it sampled).
func Play(ctx context.Context, task Task, agent dialog.Agent, user dialog.User, cfg Config) ([]dialog.Episode, []dialog.AgentSession, error) {
	cfg.fill()
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	if cfg.Instances > MaxHeld/cfg.Group {
		return nil, nil, fmt.Errorf("rollout: %d instances × group %d episodes held in memory at once, the limit is %d", cfg.Instances, cfg.Group, MaxHeld)
	}
	rules := Rules{Env: dialog.EnvironmentOf(task), CountTokens: cfg.CountTokens}
	total := cfg.Instances * cfg.Group
	eps := make([]*Live, 0, total)
	for i := 0; i < cfg.Instances; i++ {
		index := cfg.Start + i
		oracle, view, err := task.Instance(cfg.Split, index)
		if err != nil {
			return nil, nil, fmt.Errorf("rollout: instance %d: %w", index, err)
		}
		for g := 0; g < cfg.Group; g++ {
			eps = append(eps, Begin(dialog.Episode{
				ID:       fmt.Sprintf("%s/%s/%d/%d", task.Name(), cfg.Split, index, g),
				Task:     task.Spec(),
				Split:    cfg.Split,
				MaxTurns: cfg.MaxTurns,
				Agent:    cfg.AgentName,
				User:     cfg.UserName,
				Seed:     EpisodeSeed(cfg.Seed, index, g),
				Index:    index,
				Sample:   g,
				Oracle:   *oracle,
				View:     *view,
			}, agent, user, rules))
		}
	}
	defer func() {
		for _, l := range eps {
			for _, s := range []any{l.Agent, l.User} {
				if k, ok := s.(contextKeeper); ok {
					k.Release()
				}
			}
		}
	}()
	for _, l := range eps {
		for _, s := range []any{l.Agent, l.User} {
			if k, ok := s.(contextKeeper); ok {
				k.KeepContext()
			}
		}
	}

	if err := OpenAll(ctx, user, eps, cfg.Workers); err != nil {
		return nil, nil, err
	}
	finished := 0
	for turn := 0; turn < cfg.MaxTurns; turn++ {
		active := Playing(eps)
		if len(active) == 0 {
			break
		}
		if err := ActAll(ctx, agent, active, cfg.Workers); err != nil {
			return nil, nil, err
		}
		if err := ReplyAll(ctx, user, active, cfg.Workers); err != nil {
			return nil, nil, err
		}
		if cfg.Progress != nil {
			now := total - len(Playing(eps))
			if now != finished {
				finished = now
				cfg.Progress(finished, total)
			}
		}
	}
	out := make([]dialog.Episode, len(eps))
	sessions := make([]dialog.AgentSession, len(eps))
	for i, l := range eps {
		l.Finish(task)
		out[i], sessions[i] = l.Ep, l.Agent
	}
	if cfg.Progress != nil && finished != total {
		cfg.Progress(total, total)
	}
	return out, sessions, nil
}
