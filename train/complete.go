package train

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/calibrl/calibrl/dialog"
)

// branch is one conversation continued from a logged prefix: the prefix,
// a candidate agent turn, then whatever the behaviour agent and the
// simulator say until the end.
type branch struct {
	ep    *dialog.Episode // the logged episode: oracle, view, behaviour agent
	msgs  []dialog.Message
	agent dialog.AgentSession
	user  dialog.UserSession
	turns int // agent messages so far
	done  bool
}

// branch opens the sessions that continue msgs (the prefix up to p.cut,
// then the candidate). The behaviour agent draws from the logged
// episode's own agent stream, so replaying the prefix reproduces its
// logged state exactly; the simulator draws from simSeed.
func (s *staticRun) branch(ctx context.Context, p prompt, msgs []dialog.Message, simSeed uint64) (*branch, error) {
	agent := s.agents[p.ep.Agent]
	br := &branch{ep: p.ep, msgs: msgs, turns: agentTurns(msgs)}
	br.agent = agent.NewSession(&p.ep.View, rand.New(rand.NewPCG(p.ep.Seed, 2))) // rollout's agent stream
	br.user = s.trainUser.NewSession(&p.ep.Oracle, rand.New(rand.NewPCG(simSeed, 1)))
	if err := replay(ctx, br, msgs, p.cut, agent, s.trainUser); err != nil {
		return nil, err
	}
	return br, nil
}

// replay brings stateful sessions to where the logged prefix msgs[:cut]
// leaves them. Scripted agents and users keep state between calls (facts
// asked for, patience left), so they are walked through the prefix and
// what they say is discarded: the logged messages stay. The behaviour
// agent also acts at the cut itself, as it did when logging, so that it
// has read the user's last message; its words there are replaced by the
// candidate's, which it does not know it said (a scripted agent may then
// misread a reply to the candidate's question as a reply to its own).
// Model-backed sessions (BatchAgent, BatchUser) read everything from the
// history they are given and are not replayed.
func replay(ctx context.Context, br *branch, msgs []dialog.Message, cut int, agent dialog.Agent, user dialog.User) error {
	prefix := msgs[:cut]
	if _, batch := agent.(dialog.BatchAgent); !batch {
		for i := 1; i <= cut; i++ {
			if msgs[i].Role == dialog.RoleAssistant {
				if _, err := br.agent.Act(ctx, prefix[:i]); err != nil {
					return fmt.Errorf("replay agent: %w", err)
				}
			}
		}
	}
	if _, batch := user.(dialog.BatchUser); !batch {
		if _, err := br.user.Open(ctx); err != nil {
			return fmt.Errorf("replay user: %w", err)
		}
		for i := 1; i < len(prefix); i++ {
			if prefix[i].Role == dialog.RoleUser && prefix[i-1].Role == dialog.RoleAssistant {
				if _, _, err := br.user.Reply(ctx, prefix[:i]); err != nil {
					return fmt.Errorf("replay user: %w", err)
				}
			}
		}
	}
	return nil
}

// complete runs every branch to its end in lockstep, like rollout.Play:
// the user answers the last agent turn (and may end), then, below
// maxTurns agent turns, the behaviour agent speaks. Model-backed users
// and agents answer each step in one batch.
func complete(ctx context.Context, agents map[string]dialog.Agent, user dialog.User, brs []*branch, maxTurns int) error {
	active := brs
	for len(active) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := usersAnswer(ctx, user, active); err != nil {
			return err
		}
		active = stillLive(active, maxTurns)
		if err := agentsAnswer(ctx, agents, active); err != nil {
			return err
		}
	}
	return nil
}

// stillLive drops finished branches and those at the turn limit.
func stillLive(brs []*branch, maxTurns int) []*branch {
	var out []*branch
	for _, br := range brs {
		if br.turns >= maxTurns {
			br.done = true
		}
		if !br.done {
			out = append(out, br)
		}
	}
	return out
}

func usersAnswer(ctx context.Context, user dialog.User, brs []*branch) error {
	apply := func(br *branch, text string, end bool) {
		if text != "" {
			br.msgs = append(br.msgs, dialog.Message{Role: dialog.RoleUser, Content: text, Tokens: dialog.ApproxTokens(text)})
		}
		br.done = end
	}
	if b, ok := user.(dialog.BatchUser); ok {
		sessions := make([]dialog.UserSession, len(brs))
		histories := make([][]dialog.Message, len(brs))
		for i, br := range brs {
			sessions[i], histories[i] = br.user, br.msgs
		}
		texts, ends, err := b.ReplyBatch(ctx, sessions, histories)
		if err != nil {
			return fmt.Errorf("simulator: %w", err)
		}
		if len(texts) != len(brs) || len(ends) != len(brs) {
			return fmt.Errorf("simulator answered %d of %d conversations", len(texts), len(brs))
		}
		for i, br := range brs {
			apply(br, texts[i], ends[i])
		}
		return nil
	}
	for _, br := range brs {
		text, end, err := br.user.Reply(ctx, br.msgs)
		if err != nil {
			return fmt.Errorf("simulator: episode %s: %w", br.ep.ID, err)
		}
		apply(br, text, end)
	}
	return nil
}

func agentsAnswer(ctx context.Context, agents map[string]dialog.Agent, brs []*branch) error {
	add := func(br *branch, text string) {
		br.msgs = append(br.msgs, dialog.Message{Role: dialog.RoleAssistant, Content: text, Tokens: dialog.ApproxTokens(text)})
		br.turns++
	}
	byAgent := map[string][]*branch{}
	for _, br := range brs {
		byAgent[br.ep.Agent] = append(byAgent[br.ep.Agent], br)
	}
	names := make([]string, 0, len(byAgent))
	for n := range byAgent {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		group := byAgent[name]
		if b, ok := agents[name].(dialog.BatchAgent); ok {
			sessions := make([]dialog.AgentSession, len(group))
			histories := make([][]dialog.Message, len(group))
			for i, br := range group {
				sessions[i], histories[i] = br.agent, br.msgs
			}
			texts, err := b.ActBatch(ctx, sessions, histories)
			if err != nil {
				return fmt.Errorf("behaviour agent %s: %w", name, err)
			}
			if len(texts) != len(group) {
				return fmt.Errorf("behaviour agent %s answered %d of %d conversations", name, len(texts), len(group))
			}
			for i, br := range group {
				add(br, texts[i])
			}
			continue
		}
		for _, br := range group {
			text, err := br.agent.Act(ctx, br.msgs)
			if err != nil {
				return fmt.Errorf("behaviour agent %s: episode %s: %w", name, br.ep.ID, err)
			}
			add(br, text)
		}
	}
	return nil
}
