package train

// Static context RL: GRPO on single turns cut from logged conversations.
// The trainer is rl.go's; this file is Static's entry point and its
// experience: the logged prompts, the candidates and their rewards.
//
// Each prompt is a logged human conversation cut just before one of its
// agent turns. The policy samples G candidates for that one turn and
// each candidate gets a reward that depends on the candidate; advantages
// are group-relative over the G candidates and the loss covers the
// candidate's tokens only. The policy never conditions on a turn it
// produced itself, so it never sees the histories its own turns lead to:
// the only difference from interactive GRPO is the closed loop (the
// policy-induced shift of the method's design).
//
// How a candidate is scored (StaticConfig.Reward):
//
//   - "outcome" (default): prompts are cut only where the logging agent
//     delivered an outcome (an answer, a document or edit commands), and
//     the task's verdict on the candidate turn is the reward (1 when
//     right) — single-turn outcome RL on logged contexts. The candidate is
//     judged in its logged conversation (dialog.Verdict: a docedit command
//     turn edits the document as it stands at the cut), and nothing comes
//     after it, so the advantage is never noise from what follows.
//   - "continuation": CollabLLM's multiturn-aware reward (Wu et al. 2025,
//     https://arxiv.org/abs/2502.00640) with one sample: from every
//     logged agent turn, the candidate is continued by the frozen base
//     policy against the frozen simulator, and the task scores the
//     completed conversation.
//   - "behaviour": as continuation, but the logging (scripted) agent
//     continues. Measured degenerate: the scripted agent recovers from
//     whatever the candidate said, so the candidate barely moves the
//     reward (a batch reward of 0.43 with a per-iteration sd of 0.17
//     against 0.06 between candidates), the advantages are noise and the
//     policy drifts into repetition. Kept to show it.
//
// Budget: with the same RLConfig (Iterations, InstancesPerStep as the
// prompts per iteration, Group, UpdatesPerBatch, MiniBatch) both trainers
// sample the same number of policy sequences per iteration and take the
// same number of policy-gradient steps. A static sequence holds one
// policy turn, an interactive one several; to match sampled policy turns
// instead, raise InstancesPerStep by the mean turns per conversation.

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/tokenizer"
)

// StaticConfig sets static context RL. Its RLConfig fields mean what
// they mean for GRPO, except: InstancesPerStep is the prompts (groups)
// per iteration; MaxTurns bounds the completed conversation's agent turns
// (logged ones included); Split, Start and TrainInstances are unused, the
// prompts being the logs' agent turns in a seeded order, epoch after
// epoch.
type StaticConfig struct {
	RLConfig
	// Reward is how a candidate is scored: "outcome", "continuation" or
	// "behaviour" (see the package comment above). Default "outcome".
	Reward string
	// FillRounds, when positive, keeps drawing rounds of InstancesPerStep
	// prompts (at most FillRounds of them) until the iteration holds
	// InstancesPerStep informative groups, those whose candidates' rewards
	// differ, and trains on those alone. Measured on the quick run, 70% of
	// static's groups are flat (every candidate right, or every one wrong)
	// against 20–31% for the interactive arms, so with the flat ones
	// dropped static took 1.4 updates an iteration to their 4.0 and moved
	// its KL a third as far: a budget in prompts is not one in gradient.
	// Filling matches the informative groups instead (DAPO's dynamic
	// sampling, Yu et al. 2025). Default 0: one round, as before.
	FillRounds int
	// GradTokens, when positive (it needs FillRounds), fills by gradient
	// instead: rounds are drawn until the informative groups kept hold
	// GradTokens of the policy's tokens with a non-zero advantage
	// (MetricGradTokens), whatever their number. Counting groups does not
	// match the interactive arms: a group's tokens depend on the reward
	// (measured on the quick pipelines at 21 groups an iteration: outcome
	// 5,189–5,257 tokens, continuation 3,424–3,454, the interactive arms'
	// mean 3,790–4,374), so a budget in tokens is the one both rewards can
	// share. The last group kept may pass the target by its own tokens.
	GradTokens int
}

// The static rewards.
const (
	StaticOutcome      = "outcome"
	StaticContinuation = "continuation"
	StaticBehaviour    = "behaviour"
)

// DefaultStaticConfig returns DefaultRLConfig and the outcome reward.
func DefaultStaticConfig() StaticConfig {
	return StaticConfig{RLConfig: DefaultRLConfig(), Reward: StaticOutcome}
}

// Validate reports the first unusable field.
func (c StaticConfig) Validate() error {
	switch c.Reward {
	case StaticOutcome, StaticContinuation, StaticBehaviour:
	default:
		return fmt.Errorf("static reward %q, want %s, %s or %s", c.Reward, StaticOutcome, StaticContinuation, StaticBehaviour)
	}
	if c.FillRounds < 0 || c.FillRounds > maxFillRounds {
		return fmt.Errorf("static fill rounds %d, want 0 to %d", c.FillRounds, maxFillRounds)
	}
	if c.GradTokens < 0 || c.GradTokens > maxGradTokens {
		return fmt.Errorf("static gradient tokens %d, want 0 to %d", c.GradTokens, maxGradTokens)
	}
	if c.GradTokens > 0 && c.FillRounds == 0 {
		return fmt.Errorf("static gradient tokens %d need fill rounds (FillRounds > 0) to draw them", c.GradTokens)
	}
	g := c.RLConfig
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
// scoring candidates as cfg.Reward says: by the task, or by completing
// each conversation with the frozen base policy or the logging agent
// (from behaviour) against the frozen simulator sim. The monitor,
// checkpoints, resumption and logging are the RL trainer's (rl.go), as
// for GRPO; the run writes to out.
func Static(ctx context.Context, policy *chatlm.Model, t rollout.Task, logs []dialog.Episode, behaviour BehaviourAgents, sim, monitorUser dialog.User, cfg StaticConfig, out string, log func(map[string]any)) (RLResult, error) {
	if err := cfg.Validate(); err != nil {
		return RLResult{}, fmt.Errorf("static: %w", err)
	}
	s, err := newStaticRun(policy, t, logs, behaviour, sim, monitorUser, cfg, algoStatic, out, log)
	if err != nil {
		return RLResult{}, err
	}
	// A resumed run must have the same prompts and draw them the same way.
	s.fingerprint = len(s.prompts) + cfg.FillRounds<<40 + cfg.GradTokens<<45
	return s.loop(ctx, s.batch)
}

// newStaticRun cuts the logs into prompts and sets up the trainer (as
// algo, Static's or StaticRFT's) and its experience.
func newStaticRun(policy *chatlm.Model, t rollout.Task, logs []dialog.Episode, behaviour BehaviourAgents, sim, monitorUser dialog.User, cfg StaticConfig, algo, out string, log func(map[string]any)) (*staticRun, error) {
	if t == nil || sim == nil || behaviour == nil {
		return nil, fmt.Errorf("%s: need a task, a simulator and the behaviour agents", algo)
	}
	var prompts []prompt
	agents := map[string]dialog.Agent{}
	for i := range logs {
		ep := &logs[i]
		if _, ok := agents[ep.Agent]; !ok {
			a, err := behaviour(ep.Agent)
			if err != nil {
				return nil, fmt.Errorf("%s: episode %s: behaviour agent %q: %w", algo, ep.ID, ep.Agent, err)
			}
			agents[ep.Agent] = a
		}
		prompts = cutPrompts(t, ep, cfg.MaxTurns, cfg.Reward == StaticOutcome, prompts)
	}
	if len(prompts) == 0 {
		return nil, fmt.Errorf("%s: the logs hold no agent turn to learn from", algo)
	}
	r, err := newRLRun(policy, t, sim, monitorUser, cfg.RLConfig, algo, out, log)
	if err != nil {
		return nil, err
	}
	if cfg.Reward == StaticContinuation {
		base := &chatlm.Agent{Model: r.ref, Gen: cfg.Gen, Tool: r.tool}
		for name := range agents {
			agents[name] = base
		}
	}
	return &staticRun{rlRun: r, prompts: prompts, agents: agents, outcome: cfg.Reward == StaticOutcome, fillRounds: cfg.FillRounds, gradTokens: cfg.GradTokens}, nil
}

// cutPrompts appends to dst the prompts of ep: a cut before each of its
// first maxTurns agent turns but the opening one, and with onlyDelivered
// only before those that deliver an outcome in their conversation
// (dialog.Verdict).
func cutPrompts(t rollout.Task, ep *dialog.Episode, maxTurns int, onlyDelivered bool, dst []prompt) []prompt {
	turn := 0
	for j, m := range ep.Messages {
		if m.Role != dialog.RoleAssistant {
			continue
		}
		if j > 0 && turn < maxTurns {
			if delivered, _ := dialog.Verdict(t, &ep.Oracle, ep.Messages[:j+1]); delivered || !onlyDelivered {
				dst = append(dst, prompt{ep: ep, cut: j})
			}
		}
		turn++
	}
	return dst
}

// with is the logged conversation up to p's cut followed by cand.
func (p prompt) with(cand dialog.Message) []dialog.Message {
	return append(append([]dialog.Message(nil), p.ep.Messages[:p.cut]...), cand)
}

// outcomeReward is StaticOutcome's reward of candidate turn cand at p's
// cut: 1 when the task's verdict on it in the logged conversation is
// right (dialog.Verdict: a docedit command turn edits the document as it
// stands at the cut), else 0.
func outcomeReward(t rollout.Task, p prompt, cand dialog.Message) float64 {
	if _, right := dialog.Verdict(t, &p.ep.Oracle, p.with(cand)); right {
		return 1
	}
	return 0
}

type staticRun struct {
	*rlRun
	prompts []prompt
	agents  map[string]dialog.Agent // who continues a candidate
	outcome bool                    // score the candidate itself (StaticOutcome)
	// fillRounds and gradTokens are StaticConfig's FillRounds and
	// GradTokens.
	fillRounds, gradTokens int
	epoch                  int
	perm                   []int
}

// promptAt is the k-th prompt of the run: each epoch visits all prompts in
// an order seeded by (Seed, epoch).
func (s *staticRun) promptAt(k int) prompt {
	n := len(s.prompts)
	if epoch := k / n; s.perm == nil || epoch != s.epoch {
		s.epoch = epoch
		s.perm = rand.New(rand.NewPCG(s.cfg.Seed, uint64(epoch)+streamStaticEpoch)).Perm(n)
	}
	return s.prompts[s.perm[k%n]]
}

// maxFillRounds bounds StaticConfig.FillRounds: each round samples a
// whole batch of candidates.
const maxFillRounds = 16

// maxGradTokens bounds StaticConfig.GradTokens (so that it fits the
// resumption fingerprint): the interactive arms of the quick preset train
// about 4,000 an iteration.
const maxGradTokens = 1 << 17

// batch is the iteration's experience: one round of prompts, or with
// FillRounds, rounds until InstancesPerStep informative groups (or with
// GradTokens, until their gradient tokens reach it).
func (s *staticRun) batch(ctx context.Context, it int) (rlBatch, error) {
	P, G := s.cfg.InstancesPerStep, s.cfg.Group
	if s.fillRounds == 0 {
		return s.round(ctx, it, 0, it*P)
	}
	// Iteration it owns the prompt slots [it·P·R, (it+1)·P·R) whatever
	// earlier iterations used, so a resumed run draws exactly as an
	// uninterrupted one without remembering how many rounds each took.
	var kept rlBatch
	var drawn, informative, rounds float64
	keptTokens := 0
	full := func() bool {
		if s.gradTokens > 0 {
			return keptTokens >= s.gradTokens
		}
		return len(kept.rewards) == P*G
	}
	sums := map[string]float64{}
	for round := range s.fillRounds {
		b, err := s.round(ctx, it, round, (it*s.fillRounds+round)*P)
		if err != nil {
			return rlBatch{}, err
		}
		rounds++
		for k, v := range b.metrics {
			if f, ok := v.(float64); ok {
				sums[k] += f
			}
		}
		for j := 0; j < len(b.rewards); j += G {
			drawn++
			if flat(b.rewards[j : j+G]) {
				continue
			}
			informative++
			if !full() {
				kept.appendGroup(b, j, G)
				keptTokens += b.groupGradTokens(j, G, s.cfg.AdvEps)
			}
		}
		if full() {
			break
		}
	}
	if len(kept.rewards) == 0 {
		// Every group of every round flat: train on the first round, whose
		// zero advantages leave only the KL term, as without filling.
		b, err := s.round(ctx, it, 0, it*s.fillRounds*P)
		if err == nil {
			b.metrics["static/fill_rounds"], b.metrics["static/informative_drawn"] = rounds, 0.0
		}
		return b, err
	}
	kept.metrics = map[string]any{}
	for k, v := range sums {
		kept.metrics[k] = v / rounds // the rounds' means: what the policy did
	}
	kept.metrics["static/fill_rounds"] = rounds
	kept.metrics["static/informative_drawn"] = informative / drawn
	return kept, nil
}

// flat reports a group whose rewards are all equal.
func flat(rewards []float64) bool {
	for _, r := range rewards {
		if r != rewards[0] {
			return false
		}
	}
	return true
}

// groupGradTokens counts the trained tokens of the group's samples
// rewards[j:j+G] whose GRPO advantage is not zero: what update adds to
// MetricGradTokens for them.
func (b rlBatch) groupGradTokens(j, G int, eps float64) int {
	adv := GroupAdvantages(b.rewards[j:j+G], G, eps)
	n := 0
	for k, o := range b.owner {
		if o >= j && o < j+G && adv[o-j] != 0 {
			n += b.seqs[k].Trained()
		}
	}
	return n
}

// appendGroup appends to b the group of G samples from.rewards[j:j+G] with
// their sequences.
func (b *rlBatch) appendGroup(from rlBatch, j, G int) {
	base := len(b.rewards)
	b.rewards = append(b.rewards, from.rewards[j:j+G]...)
	b.success = append(b.success, from.success[j:j+G]...)
	for k, o := range from.owner {
		if o >= j && o < j+G {
			b.seqs = append(b.seqs, from.seqs[k])
			b.owner = append(b.owner, base+o-j)
			b.sampled = append(b.sampled, from.sampled[k])
		}
	}
}

// round samples G candidates for each of P prompts from prompt slot
// first, scores each (by the task, or by completing its conversation),
// and encodes the candidates. Round r's candidates draw random streams
// of their own; round 0's are those every iteration drew before rounds.
func (s *staticRun) round(ctx context.Context, it, r, first int) (rlBatch, error) {
	cfg := s.cfg
	P, G := cfg.InstancesPerStep, cfg.Group
	seed := iterSeed(cfg.Seed, it)
	ps := make([]prompt, P)
	var rendered [][]tokenizer.Message
	var rngs []*rand.Rand
	for j := range P {
		ps[j] = s.promptAt(first + j)
		conv := chatlm.AgentMessages(&ps[j].ep.View, ps[j].ep.Messages[:ps[j].cut])
		for g := range G {
			rendered = append(rendered, conv)
			// Candidate k of round r draws from PCG stream 2(rPG+k)+1 of
			// the iteration's seed: odd, so never the minibatch order's
			// (streamMinibatch).
			rngs = append(rngs, rand.New(rand.NewPCG(seed, uint64(r*P*G+j*G+g)<<1|1)))
		}
	}
	turns, err := s.policy.Generate(rendered, string(dialog.RoleAssistant), cfg.Gen, rngs, s.tool)
	if err != nil {
		return rlBatch{}, err
	}
	// One sequence per candidate; the sampler's log-probs are not reused
	// (sampled rows nil), the first pass computes them.
	b := rlBatch{rewards: make([]float64, P*G), success: make([]bool, P*G), seqs: make([]chatlm.Sequence, P*G), owner: make([]int, P*G), sampled: make([][]float32, P*G)}
	branches := make([]*rollout.Live, P*G)
	var tokens, cutTurn float64
	for j, p := range ps {
		// Common random numbers: the G completions of one prompt share the
		// simulator's and the behaviour agent's random streams, so their
		// rewards differ because of the candidate, not the dice.
		simSeed := rollout.EpisodeSeed(seed, r*P+j, sampleStaticSim)
		// The exact ids Generate continued (old turns dropped as it did).
		ids, err := s.policy.Prompt(rendered[j*G], string(dialog.RoleAssistant), cfg.Gen.MaxNewTokens)
		if err != nil {
			return rlBatch{}, err
		}
		for g := range G {
			k := j*G + g
			b.seqs[k], b.owner[k] = chatlm.TurnSequence(ids, turns[k]), k
			tokens += float64(len(turns[k].IDs))
			cand := dialog.Message{Role: dialog.RoleAssistant, Content: turns[k].Text, Tokens: len(turns[k].IDs)}
			if s.outcome {
				b.rewards[k] = outcomeReward(s.task, p, cand)
				b.success[k] = b.rewards[k] == 1
				continue
			}
			msgs := p.with(cand)
			br, err := s.branch(ctx, p, msgs, simSeed)
			if err != nil {
				return rlBatch{}, fmt.Errorf("prompt %s at message %d: %w", p.ep.ID, p.cut, err)
			}
			branches[k] = br
		}
		cutTurn += float64(agentTurns(p.ep.Messages[:p.cut]))
	}
	n := float64(P * G)
	if s.outcome {
		b.metrics = map[string]any{MetricReward: mean(b.rewards), MetricSuccess: mean(b.rewards),
			"rollout/turns": 1.0, "rollout/agent_tokens": tokens / n, "static/cut_turn": cutTurn / float64(P)}
		return b, nil
	}
	if err := complete(ctx, s.agents, s.trainUser, branches); err != nil {
		return rlBatch{}, err
	}
	var success, total float64
	for k, br := range branches {
		br.Finish(s.task)
		b.rewards[k], b.success[k] = br.Ep.Reward, br.Ep.Success
		if br.Ep.Success {
			success++
		}
		total += float64(br.Ep.Turns)
	}
	b.metrics = map[string]any{MetricReward: mean(b.rewards), MetricSuccess: success / n,
		"rollout/turns": total / n, "rollout/agent_tokens": tokens / n, "static/cut_turn": cutTurn / float64(P)}
	return b, nil
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
