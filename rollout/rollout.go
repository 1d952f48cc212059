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
package rollout

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/calibrl/calibrl/dialog"
)

// Task is what the rollout needs of a task.
type Task interface {
	Name() string
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

// DefaultMaxTurns is the turn limit when Config.MaxTurns is zero.
const DefaultMaxTurns = 10

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

// live is one running episode.
type live struct {
	ep    dialog.Episode
	agent dialog.AgentSession
	user  dialog.UserSession
	done  bool
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
	total := cfg.Instances * cfg.Group
	eps := make([]*live, 0, total)
	for i := 0; i < cfg.Instances; i++ {
		index := cfg.Start + i
		oracle, view, err := task.Instance(cfg.Split, index)
		if err != nil {
			return nil, nil, fmt.Errorf("rollout: instance %d: %w", index, err)
		}
		for g := 0; g < cfg.Group; g++ {
			seed := EpisodeSeed(cfg.Seed, index, g)
			l := &live{ep: dialog.Episode{
				ID:       fmt.Sprintf("%s/%s/%d/%d", task.Name(), cfg.Split, index, g),
				Task:     dialog.TaskName(task),
				Split:    cfg.Split,
				MaxTurns: cfg.MaxTurns,
				Agent:    cfg.AgentName,
				User:     cfg.UserName,
				Seed:     seed,
				Index:    index,
				Sample:   g,
				Oracle:   *oracle,
				View:     *view,
			}}
			l.user = user.NewSession(&l.ep.Oracle, rand.New(rand.NewPCG(seed, 1)))
			l.agent = agent.NewSession(&l.ep.View, rand.New(rand.NewPCG(seed, 2)))
			eps = append(eps, l)
		}
	}
	defer func() {
		for _, l := range eps {
			for _, s := range []any{l.agent, l.user} {
				if k, ok := s.(contextKeeper); ok {
					k.Release()
				}
			}
		}
	}()
	for _, l := range eps {
		for _, s := range []any{l.agent, l.user} {
			if k, ok := s.(contextKeeper); ok {
				k.KeepContext()
			}
		}
	}

	if err := openings(ctx, user, eps, cfg); err != nil {
		return nil, nil, err
	}

	env := dialog.EnvironmentOf(task)
	finished := 0
	for turn := 0; turn < cfg.MaxTurns; turn++ {
		active := activeOf(eps)
		if len(active) == 0 {
			break
		}
		if err := agentsAct(ctx, agent, active, cfg); err != nil {
			return nil, nil, err
		}
		if env != nil {
			respond(env, active, cfg)
		}
		if err := usersReply(ctx, user, active, cfg); err != nil {
			return nil, nil, err
		}
		if cfg.Progress != nil {
			now := total - len(activeOf(eps))
			if now != finished {
				finished = now
				cfg.Progress(finished, total)
			}
		}
	}
	out := make([]dialog.Episode, len(eps))
	sessions := make([]dialog.AgentSession, len(eps))
	for i, l := range eps {
		if !l.done {
			l.ep.End = dialog.MaxTurns
		}
		finish(task, &l.ep)
		out[i], sessions[i] = l.ep, l.agent
	}
	if cfg.Progress != nil && finished != total {
		cfg.Progress(total, total)
	}
	return out, sessions, nil
}

// openings has every user write its first message.
func openings(ctx context.Context, user dialog.User, eps []*live, cfg Config) error {
	add := func(l *live, text string) {
		l.ep.Messages = append(l.ep.Messages, dialog.Message{Role: dialog.RoleUser, Content: text, Tokens: cfg.CountTokens(text)})
	}
	if b, ok := user.(dialog.BatchOpener); ok {
		sessions := make([]dialog.UserSession, len(eps))
		for i, l := range eps {
			sessions[i] = l.user
		}
		texts, err := b.OpenBatch(ctx, sessions)
		if err != nil {
			return fmt.Errorf("rollout: user: %w", err)
		}
		if len(texts) != len(eps) {
			return fmt.Errorf("rollout: user opened %d of %d conversations", len(texts), len(eps))
		}
		for i, l := range eps {
			add(l, texts[i])
		}
		return nil
	}
	return parallel(ctx, cfg.Workers, eps, func(ctx context.Context, l *live) error {
		text, err := l.user.Open(ctx)
		if err != nil {
			return fmt.Errorf("user: %w", err)
		}
		add(l, text)
		return nil
	})
}

func activeOf(eps []*live) []*live {
	var a []*live
	for _, l := range eps {
		if !l.done {
			a = append(a, l)
		}
	}
	return a
}

func agentsAct(ctx context.Context, agent dialog.Agent, active []*live, cfg Config) error {
	add := func(l *live, text string) {
		l.ep.Messages = append(l.ep.Messages, dialog.Message{Role: dialog.RoleAssistant, Content: text, Tokens: cfg.CountTokens(text)})
		l.ep.Turns++
	}
	if b, ok := agent.(dialog.BatchAgent); ok {
		sessions := make([]dialog.AgentSession, len(active))
		histories := make([][]dialog.Message, len(active))
		for i, l := range active {
			sessions[i], histories[i] = l.agent, l.ep.Messages
		}
		texts, err := b.ActBatch(ctx, sessions, histories)
		if err != nil {
			return fmt.Errorf("rollout: agent: %w", err)
		}
		if len(texts) != len(active) {
			return fmt.Errorf("rollout: agent answered %d of %d conversations", len(texts), len(active))
		}
		for i, l := range active {
			add(l, texts[i])
		}
		return nil
	}
	return parallel(ctx, cfg.Workers, active, func(ctx context.Context, l *live) error {
		text, err := l.agent.Act(ctx, l.ep.Messages)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		add(l, text)
		return nil
	})
}

// respond records the task environment's note on each agent turn just
// written (dialog.Environment) as a system message after it.
func respond(env dialog.Environment, active []*live, cfg Config) {
	for _, l := range active {
		if note := env.Respond(&l.ep.View, l.ep.Messages); note != "" {
			l.ep.Messages = append(l.ep.Messages, dialog.Message{Role: dialog.RoleSystem, Content: note, Tokens: cfg.CountTokens(note)})
		}
	}
}

func usersReply(ctx context.Context, user dialog.User, active []*live, cfg Config) error {
	apply := func(l *live, text string, end bool) {
		if text != "" {
			l.ep.Messages = append(l.ep.Messages, dialog.Message{Role: dialog.RoleUser, Content: text, Tokens: cfg.CountTokens(text)})
		}
		if end {
			l.done = true
			l.ep.End = endReason(l.user)
		}
	}
	if b, ok := user.(dialog.BatchUser); ok {
		sessions := make([]dialog.UserSession, len(active))
		histories := make([][]dialog.Message, len(active))
		for i, l := range active {
			sessions[i], histories[i] = l.user, l.ep.Messages
		}
		texts, ends, err := b.ReplyBatch(ctx, sessions, histories)
		if err != nil {
			return fmt.Errorf("rollout: user: %w", err)
		}
		if len(texts) != len(active) || len(ends) != len(active) {
			return fmt.Errorf("rollout: user answered %d of %d conversations", len(texts), len(active))
		}
		for i, l := range active {
			apply(l, texts[i], ends[i])
		}
		return nil
	}
	return parallel(ctx, cfg.Workers, active, func(ctx context.Context, l *live) error {
		text, end, err := l.user.Reply(ctx, l.ep.Messages)
		if err != nil {
			return fmt.Errorf("user: %w", err)
		}
		apply(l, text, end)
		return nil
	})
}

// endReason asks the session why it ended, when it can say.
func endReason(s dialog.UserSession) dialog.EndReason {
	if r, ok := s.(interface{ EndReason() dialog.EndReason }); ok {
		if reason := r.EndReason(); reason != "" {
			return reason
		}
	}
	return dialog.UserEnded
}

func finish(task Task, ep *dialog.Episode) {
	sc := task.Score(&ep.Oracle, ep.Messages)
	ep.Outcome, ep.Reward, ep.Success, ep.Metrics = sc.Outcome, sc.Reward, sc.Success, sc.Metrics
	ep.Tokens = 0
	for _, m := range ep.Messages {
		ep.Tokens += m.Tokens
	}
	// A user who "accepts" a wrong outcome did not solve the task.
	if ep.End == dialog.Solved && !ep.Success {
		ep.End = dialog.UserEnded
	}
}

// parallel runs f on every episode with at most workers at once and returns
// the first error, naming the episode.
func parallel(ctx context.Context, workers int, eps []*live, f func(context.Context, *live) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	next := make(chan *live)
	for w := 0; w < min(workers, len(eps)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range next {
				if err := f(ctx, l); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("rollout: episode %s: %w", l.ep.ID, err)
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for _, l := range eps {
		select {
		case next <- l:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
