package train

// Static context RL: GRPO on single turns cut from logged conversations.
//
// Each prompt is a logged human conversation cut just before one of its
// agent turns. The policy samples G candidates for that one turn; each
// candidate is scored by completing the conversation from there with the
// logging (behaviour) agent against the frozen simulator, and the task's
// outcome reward of the completed conversation is the candidate's
// reward. Advantages are group-relative over the G candidates and the
// loss covers the candidate's tokens only. The policy never writes its
// own earlier turns, so it never sees the histories its own mistakes
// lead to: the only difference from interactive GRPO against the same
// simulator is the closed loop (DESIGN.md, policy-induced shift).
//
// Budget: with the same GRPOConfig (Iterations, InstancesPerStep as the
// prompts per iteration, Group, UpdatesPerBatch, MiniBatch) both trainers
// sample the same number of policy sequences per iteration and take the
// same number of policy-gradient steps. A static sequence holds one
// policy turn, an interactive one several; to match sampled policy turns
// instead, raise InstancesPerStep by the mean turns per conversation.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/tokenizer"
)

// StaticConfig sets static context RL. Its GRPOConfig fields mean what
// they mean for GRPO, except: InstancesPerStep is the prompts (groups)
// per iteration; MaxTurns bounds the completed conversation's agent turns
// (logged ones included); Split, Start and TrainInstances are unused, the
// prompts being the logs' agent turns in a seeded order, epoch after
// epoch.
type StaticConfig struct {
	GRPOConfig
}

// DefaultStaticConfig returns GRPO's defaults.
func DefaultStaticConfig() StaticConfig { return StaticConfig{DefaultGRPOConfig()} }

// Validate reports the first unusable field.
func (c StaticConfig) Validate() error {
	g := c.GRPOConfig
	if g.Split == "" {
		g.Split = "train" // unused here
	}
	return g.Validate()
}

// BehaviourAgents resolves an episode's Agent field ("scripted:careful")
// to the agent that logged it.
type BehaviourAgents func(name string) (dialog.Agent, error)

// prompt is one logged history cut before an agent turn.
type prompt struct {
	ep  *dialog.Episode
	cut int // index of the agent message the policy rewrites
}

// Static trains policy by static context RL on the agent turns of logs,
// scoring candidates by completing each conversation with its logging
// agent (from behaviour) against the frozen simulator sim. The monitor,
// checkpoints, resumption and logging are GRPO's; the run writes to out.
func Static(ctx context.Context, policy *chatlm.Model, t rollout.Task, logs []dialog.Episode, behaviour BehaviourAgents, sim, monitorUser dialog.User, cfg StaticConfig, out string, log func(map[string]any)) (GRPOResult, error) {
	if err := cfg.Validate(); err != nil {
		return GRPOResult{}, fmt.Errorf("static: %w", err)
	}
	if t == nil || sim == nil || behaviour == nil {
		return GRPOResult{}, errors.New("static: need a task, a simulator and the behaviour agents")
	}
	var prompts []prompt
	agents := map[string]dialog.Agent{}
	for i := range logs {
		ep := &logs[i]
		if _, ok := agents[ep.Agent]; !ok {
			a, err := behaviour(ep.Agent)
			if err != nil {
				return GRPOResult{}, fmt.Errorf("static: episode %s: behaviour agent %q: %w", ep.ID, ep.Agent, err)
			}
			agents[ep.Agent] = a
		}
		turn := 0
		for j, m := range ep.Messages {
			if m.Role != dialog.RoleAssistant {
				continue
			}
			if j > 0 && turn < cfg.MaxTurns {
				prompts = append(prompts, prompt{ep: ep, cut: j})
			}
			turn++
		}
	}
	if len(prompts) == 0 {
		return GRPOResult{}, errors.New("static: the logs hold no agent turn to learn from")
	}
	r, err := newRLRun(policy, t, sim, monitorUser, cfg.GRPOConfig, "static", out, log)
	if err != nil {
		return GRPOResult{}, err
	}
	r.fingerprint = len(prompts)
	s := &staticRun{rlRun: r, prompts: prompts, agents: agents}
	return r.loop(ctx, s.batch)
}

type staticRun struct {
	*rlRun
	prompts []prompt
	agents  map[string]dialog.Agent
	epoch   int
	perm    []int
}

// promptAt is the k-th prompt of the run: each epoch visits all prompts in
// an order seeded by (Seed, epoch).
func (s *staticRun) promptAt(k int) prompt {
	n := len(s.prompts)
	if epoch := k / n; s.perm == nil || epoch != s.epoch {
		s.epoch = epoch
		s.perm = rand.New(rand.NewPCG(s.cfg.Seed, uint64(epoch)+0x737461)).Perm(n)
	}
	return s.prompts[s.perm[k%n]]
}

// batch samples G candidates for each of the iteration's prompts, scores
// each by completing its conversation, and encodes the candidates.
func (s *staticRun) batch(ctx context.Context, it int) (rlBatch, error) {
	cfg := s.cfg
	P, G := cfg.InstancesPerStep, cfg.Group
	seed := iterSeed(cfg.Seed, it)
	ps := make([]prompt, P)
	var rendered [][]tokenizer.Message
	var rngs []*rand.Rand
	for j := range P {
		ps[j] = s.promptAt(it*P + j)
		conv := chatlm.AgentMessages(&ps[j].ep.View, ps[j].ep.Messages[:ps[j].cut])
		for g := range G {
			rendered = append(rendered, conv)
			rngs = append(rngs, rand.New(rand.NewPCG(seed, uint64(j*G+g)<<1|1)))
		}
	}
	turns, err := s.policy.Generate(rendered, string(dialog.RoleAssistant), cfg.Gen, rngs)
	if err != nil {
		return rlBatch{}, err
	}
	b := rlBatch{seqs: make([]chatlm.Sequence, P*G), rewards: make([]float64, P*G)}
	branches := make([]*branch, P*G)
	var tokens, cutTurn float64
	for j, p := range ps {
		// Common random numbers: the G completions of one prompt share the
		// simulator's and the behaviour agent's random streams, so their
		// rewards differ because of the candidate, not the dice.
		simSeed := rollout.EpisodeSeed(seed, j, 0x73696d)
		// The exact ids Generate continued (old turns dropped as it did).
		ids, err := s.policy.Prompt(rendered[j*G], string(dialog.RoleAssistant), cfg.Gen.MaxNewTokens)
		if err != nil {
			return rlBatch{}, err
		}
		for g := range G {
			k := j*G + g
			b.seqs[k] = candidateSequence(ids, turns[k].IDs)
			tokens += float64(len(turns[k].IDs))
			msgs := append(append([]dialog.Message(nil), p.ep.Messages[:p.cut]...),
				dialog.Message{Role: dialog.RoleAssistant, Content: turns[k].Text, Tokens: len(turns[k].IDs)})
			br, err := s.branch(ctx, p, msgs, simSeed)
			if err != nil {
				return rlBatch{}, fmt.Errorf("static: prompt %s at message %d: %w", p.ep.ID, p.cut, err)
			}
			branches[k] = br
		}
		cutTurn += float64(agentTurns(p.ep.Messages[:p.cut]))
	}
	if err := complete(ctx, s.agents, s.trainUser, branches, cfg.MaxTurns); err != nil {
		return rlBatch{}, fmt.Errorf("static: %w", err)
	}
	var success, total float64
	for k, br := range branches {
		sc := s.task.Score(&br.ep.Oracle, br.msgs)
		b.rewards[k] = sc.Reward
		if sc.Success {
			success++
		}
		total += float64(br.turns)
	}
	n := float64(P * G)
	b.metrics = map[string]any{"rollout/reward_mean": mean(b.rewards), "rollout/success": success / n,
		"rollout/turns": total / n, "rollout/agent_tokens": tokens / n, "static/cut_turn": cutTurn / float64(P)}
	return b, nil
}

// candidateSequence is the prompt the candidate was sampled from followed
// by its sampled ids, the loss on those ids only (the closing token
// included).
func candidateSequence(prompt, sampled []int) chatlm.Sequence {
	ids := append(append([]int(nil), prompt...), sampled...)
	mask := make([]float32, len(ids))
	for t := len(prompt) - 1; t+1 < len(ids); t++ {
		mask[t] = 1
	}
	return chatlm.Sequence{IDs: ids, Mask: mask}
}

func agentTurns(msgs []dialog.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == dialog.RoleAssistant {
			n++
		}
	}
	return n
}
