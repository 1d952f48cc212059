package train

// Interactive multi-turn GRPO: the policy talks with a frozen user, whole
// conversations are scored by a sparse outcome reward, and every agent
// token of a conversation shares its group-relative advantage. The
// trainer is rl.go's; this file is GRPO's experience.
//
// A GRPO "sample" is here a whole multi-turn conversation with the user
// (the Phase II of calibrated interactive RL in docs/DESIGN.md), so the
// user's turns are part of the environment: they are in the sequence the
// policy conditions on, but masked out of the loss. An iteration plays the
// next InstancesPerStep training instances, G on-policy conversations each
// (rollout.Play, temperature-1 sampling), and trains on the exact ids the
// policy sampled (chatlm.AgentSession.Sequences).

import (
	"context"
	"errors"
	"fmt"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

// GRPO trains policy by interactive GRPO against trainUser on t and
// writes the final model to out. The frozen reference policy is the
// policy as passed in; it is saved to out/ref at the start so that a
// resumed run (out/last, with the optimizer and trainer_state.json) needs
// nothing else, and ends with the same weights as an uninterrupted one.
// When ctx is cancelled it writes a checkpoint and returns an error that
// wraps ctx's.
// monitorUser is the human proxy for the reward-hacking monitor (nil:
// the monitor only plays the training user). log, when set, receives one
// record per iteration with namespaced keys (step is the iteration).
func GRPO(ctx context.Context, policy *chatlm.Model, t rollout.Task, trainUser, monitorUser dialog.User, cfg RLConfig, out string, log func(map[string]any)) (RLResult, error) {
	if err := cfg.Validate(); err != nil {
		return RLResult{}, err
	}
	if t == nil || trainUser == nil {
		return RLResult{}, errors.New("grpo: need a task and a training user")
	}
	r, err := newRLRun(policy, t, trainUser, monitorUser, cfg, algoGRPO, out, log)
	if err != nil {
		return RLResult{}, err
	}
	return r.loop(ctx, r.interactiveBatch)
}

// interactiveBatch plays iteration it's conversations and turns them into
// training sequences.
func (r *rlRun) interactiveBatch(ctx context.Context, it int) (rlBatch, error) {
	cfg := r.cfg
	agent := &chatlm.Agent{Model: r.policy, Gen: cfg.Gen, Tool: r.tool}
	rc := rollout.Config{
		Split: cfg.Split, Start: r.cursor(it), Instances: cfg.InstancesPerStep, Group: cfg.Group,
		Seed: iterSeed(cfg.Seed, it), MaxTurns: cfg.MaxTurns, AgentName: "policy", UserName: "train",
		CountTokens: r.policy.CountTokens,
	}
	eps, sessions, err := r.play(ctx, agent, rc)
	if err != nil {
		return rlBatch{}, err
	}
	b, err := r.conversations(eps, sessions)
	if err != nil {
		return rlBatch{}, err
	}
	if cfg.Baseline == BaselineGreedy {
		if err := r.greedyBaselines(ctx, &b, rc); err != nil {
			return rlBatch{}, fmt.Errorf("greedy baseline: %w", err)
		}
	}
	if cfg.TurnContinuations > 0 {
		if err := r.turnCredit(ctx, &b, eps, sessions, it); err != nil {
			return rlBatch{}, fmt.Errorf("turn credit: %w", err)
		}
	}
	return b, nil
}

// play plays rc against the training user. An iteration whose instances
// run past the end of a finite split plays the tail, then the head. Each
// episode's seed depends only on its instance and sample, so the split
// into two runs changes nothing.
func (r *rlRun) play(ctx context.Context, agent *chatlm.Agent, rc rollout.Config) ([]dialog.Episode, []dialog.AgentSession, error) {
	if r.cfg.TrainInstances == 0 || rc.Start+rc.Instances <= r.cfg.TrainInstances {
		return rollout.Play(ctx, r.task, agent, r.trainUser, rc)
	}
	tail, head := rc, rc
	tail.Instances = r.cfg.TrainInstances - rc.Start
	head.Start, head.Instances = 0, rc.Instances-tail.Instances
	eps, sessions, err := rollout.Play(ctx, r.task, agent, r.trainUser, tail)
	if err != nil {
		return nil, nil, err
	}
	e, s, err := rollout.Play(ctx, r.task, agent, r.trainUser, head)
	if err != nil {
		return nil, nil, err
	}
	return append(eps, e...), append(sessions, s...), nil
}

// greedyBaselines plays BaselineGreedy's conversation for each of the
// iteration's problems (rc's, one each): the policy greedy, against the
// user of the problem's first sample (rollout.EpisodeSeed of sample 0),
// and records their rewards in b.greedy.
func (r *rlRun) greedyBaselines(ctx context.Context, b *rlBatch, rc rollout.Config) error {
	gen := r.cfg.Gen
	gen.Temperature = 0
	rc.Group = 1
	eps, _, err := r.play(ctx, &chatlm.Agent{Model: r.policy, Gen: gen, Tool: r.tool}, rc)
	if err != nil {
		return err
	}
	b.greedy = make([]float64, len(eps))
	for i, ep := range eps {
		b.greedy[i] = ep.Reward
	}
	b.metrics[MetricGreedyReward] = mean(b.greedy)
	return nil
}

// conversations turns the played episodes into training sequences, each
// from the ids its agent session sampled (chatlm.AgentSession.Sequences):
// the whole conversation as one sequence where that is exact, else one per
// agent turn. All of a conversation's sequences share its advantage.
func (r *rlRun) conversations(eps []dialog.Episode, sessions []dialog.AgentSession) (rlBatch, error) {
	b := rlBatch{rewards: make([]float64, len(eps)), success: make([]bool, len(eps)), owner: make([]int, 0, len(eps))}
	var success, turns, agentTokens, split, nll, sampledTokens float64
	for i := range eps {
		ep := &eps[i]
		s, ok := sessions[i].(*chatlm.AgentSession)
		if !ok {
			return rlBatch{}, fmt.Errorf("episode %s: agent session is %T, want *chatlm.AgentSession", ep.ID, sessions[i])
		}
		ss, err := s.Sequences(ep)
		if err != nil {
			return rlBatch{}, err
		}
		for k, seq := range ss.Seqs {
			// The sampler's log-probs are the untempered model's: the old
			// log-probs of a first pass only at temperature 1 (else nil,
			// and update scores them at the rollouts' temperature).
			var lp []float32
			if r.cfg.Gen.Temperature == 1 {
				lp = ss.Logp[k]
			}
			b.seqs, b.owner, b.sampled = append(b.seqs, seq), append(b.owner, i), append(b.sampled, lp)
		}
		if ss.PerTurn {
			split++
		}
		for _, turn := range s.Turns {
			agentTokens += float64(len(turn.IDs))
			if len(turn.LogProbs) != len(turn.IDs) {
				continue
			}
			for j, lp := range turn.LogProbs {
				if turn.Forced == nil || !turn.Forced[j] {
					nll, sampledTokens = nll-float64(lp), sampledTokens+1
				}
			}
		}
		b.rewards[i], b.success[i] = ep.Reward, ep.Success
		if ep.Success {
			success++
		}
		turns += float64(ep.Turns)
	}
	n := float64(len(eps))
	b.metrics = map[string]any{
		MetricReward: mean(b.rewards), MetricSuccess: success / n,
		"rollout/turns": turns / n, "rollout/agent_tokens": agentTokens / n, "rollout/split_turns": split / n,
	}
	if sampledTokens > 0 {
		b.metrics[MetricEntropy] = nll / sampledTokens
	}
	return b, nil
}
