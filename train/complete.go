package train

import (
	"context"
	"fmt"
	"sort"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

// branch starts the conversation that continues msgs (the logged prefix
// up to p.cut, then the candidate) from where the logged sessions were
// (rollout.Resume): the behaviour agent draws from the logged episode's
// own agent stream, so replaying the prefix reproduces its logged state
// exactly; the simulator draws from simSeed. The behaviour agent acted at
// the cut as it did when logging, so it has read the user's last message;
// its words there are the candidate's, which it does not know it said (a
// scripted agent may then misread a reply to the candidate's question as
// a reply to its own).
//
// The task's environment notes the candidate and every later agent turn
// as in a rollout (docedit shows the document a turn of edit commands
// left), so the simulator judges the candidate's effect, not its words.
func (s *staticRun) branch(ctx context.Context, p prompt, msgs []dialog.Message, simSeed uint64) (*rollout.Live, error) {
	ep := *p.ep
	ep.Messages, ep.MaxTurns = msgs, s.cfg.MaxTurns
	return rollout.Resume(ctx, ep, s.agents[p.ep.Agent], s.trainUser, simSeed, rollout.Rules{Env: dialog.EnvironmentOf(s.task)})
}

// complete runs every branch to its end in lockstep, like rollout.Play:
// the user answers the last agent turn (and may end the conversation, as
// the turn limit does), then the behaviour agent speaks. Model-backed
// users and agents answer each step in one batch.
func complete(ctx context.Context, agents map[string]dialog.Agent, user dialog.User, brs []*rollout.Live) error {
	active := brs
	for len(active) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := rollout.ReplyAll(ctx, user, active, 1); err != nil {
			return fmt.Errorf("simulator: %w", err)
		}
		active = rollout.Playing(active)
		if err := behavioursAct(ctx, agents, active); err != nil {
			return err
		}
	}
	return nil
}

// behavioursAct has each branch's behaviour agent (the logged episode's)
// speak, the branches of one agent in one call, agents in name order.
func behavioursAct(ctx context.Context, agents map[string]dialog.Agent, brs []*rollout.Live) error {
	byAgent := map[string][]*rollout.Live{}
	for _, br := range brs {
		byAgent[br.Ep.Agent] = append(byAgent[br.Ep.Agent], br)
	}
	names := make([]string, 0, len(byAgent))
	for n := range byAgent {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := rollout.ActAll(ctx, agents[name], byAgent[name], 1); err != nil {
			return fmt.Errorf("behaviour agent %s: %w", name, err)
		}
	}
	return nil
}
