package train

// Online rejection-sampling fine-tuning (expert iteration): each
// iteration the policy plays G conversations per problem against the
// partner, keeps those the partner's reward marks successful, and is
// fine-tuned on them by cross-entropy. ReST-EM (Singh et al. 2023,
// "Beyond Human Data", https://arxiv.org/abs/2312.06585) and RAFT (Dong et
// al. 2023, https://arxiv.org/abs/2304.06767); the policy-gradient view
// (a REINFORCE step with reward 1 on kept samples and 0 elsewhere, no
// baseline) is why it sits in the RL trainer. The trainer is rl.go's —
// rollouts, monitor, checkpoints, resumption and logging are GRPO's —
// and this file is RFT's entry points and its step 2, the filter.
//
// One iteration:
//
//  1. experience: GRPO's (grpo.go; StaticRFT: static.go's candidates on
//     logged contexts), each sample with the partner's verdict;
//  2. filter: a sample is kept when the partner marked it successful
//     (dialog.Episode.Success; a static outcome candidate when its reward
//     is 1), at most MaxKeptPerProblem per problem; a kept sample's
//     sequences get weight 1, the others 0 and are not trained;
//  3. update (update.go, rlRun.crossEntropy): UpdatesPerBatch passes of
//     minibatch steps on SFT's loss, the masked mean NLL of the kept
//     conversations' agent tokens (user turns and tool-forced tokens are
//     masked out by the sequences' loss mask, as in SFT and GRPO);
//     clip, AdamW at LR after Warmup;
//  4. log: MetricRFTKept conversations, MetricRFTKeptProblems problems,
//     their agent tokens as MetricGradTokens, the success rate as
//     MetricSuccess, the NLL as MetricNLL;
//  5–6. monitor and checkpoint as GRPO.
//
// The loss is the token mean over a minibatch (LossMean "token"): a long
// kept conversation weighs by its length, as SFT's does. All its tokens
// carry the same positive weight, so unlike a policy-gradient with a
// baseline nothing pushes against a failing conversation's tokens; the
// failures are simply left out.

import (
	"context"
	"errors"
	"fmt"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

// RFTConfig sets online rejection-sampling fine-tuning. Its RLConfig
// fields mean what they mean for GRPO (Iterations, Seed, the instances,
// Group as the conversations per problem, MaxTurns, Gen, UpdatesPerBatch,
// MiniBatch, LossMean, LR, Warmup, LRCosine, WeightDecay, ClipNorm, the
// monitor and checkpoints), except that ClipEps, Beta and AdvEps are
// unused (no ratio, no KL, no group statistics), and Baseline,
// TurnContinuations and KeepFlatGroups must be left unset: they are
// GRPO's credit, which the filter replaces.
type RFTConfig struct {
	RLConfig
	// MaxKeptPerProblem, when positive, keeps at most that many successful
	// conversations of a problem's G (its first ones, in sample order), so
	// that easy problems, solved in all G, do not outweigh hard ones
	// (ReST-EM caps the solutions per problem for this reason). Default 0:
	// every successful conversation is kept.
	MaxKeptPerProblem int

	// keep is the filter: keepSuccess, or a learning test's sabotage.
	keep rftKeep
	// noStep keeps nothing, so that no step is taken: a learning test's
	// sabotage of the update.
	noStep bool
}

// rftKeep is which conversations the filter keeps.
type rftKeep int

const (
	keepSuccess  rftKeep = iota // the partner's successes: RFT
	keepAll                     // every conversation (sabotage: plain self-imitation)
	keepFailures                // the failures (sabotage)
)

// DefaultRFTConfig returns DefaultRLConfig, every success kept.
func DefaultRFTConfig() RFTConfig { return RFTConfig{RLConfig: DefaultRLConfig()} }

// Validate reports the first unusable field.
func (c RFTConfig) Validate() error {
	switch {
	case c.MaxKeptPerProblem < 0:
		return fmt.Errorf("rft config: max kept per problem %d, want ≥ 0", c.MaxKeptPerProblem)
	case c.MaxKeptPerProblem > c.Group:
		return fmt.Errorf("rft config: max kept per problem %d exceeds the group of %d", c.MaxKeptPerProblem, c.Group)
	case c.Baseline != "" || c.TurnContinuations != 0 || c.KeepFlatGroups:
		return errors.New("rft config: baseline, turn continuations and keep-flat-groups are GRPO's credit; leave them unset")
	}
	return c.RLConfig.Validate()
}

// RFT trains policy by online rejection-sampling fine-tuning against
// trainUser on t and writes the final model to out: GRPO's shape and
// contract (resumable from out/last to the same weights as an
// uninterrupted run, a checkpoint on cancellation, monitorUser for the
// monitor, log receiving one record per iteration), with the filter and
// cross-entropy steps in place of GRPO's advantages and clipped steps.
func RFT(ctx context.Context, policy *chatlm.Model, t rollout.Task, trainUser, monitorUser dialog.User, cfg RFTConfig, out string, log func(map[string]any)) (RLResult, error) {
	if err := cfg.Validate(); err != nil {
		return RLResult{}, err
	}
	if t == nil || trainUser == nil {
		return RLResult{}, errors.New("rft: need a task and a training user")
	}
	r, err := newRLRun(policy, t, trainUser, monitorUser, cfg.RLConfig, algoRFT, out, log)
	if err != nil {
		return RLResult{}, err
	}
	r.useRFT(cfg)
	r.fingerprint = cfg.MaxKeptPerProblem
	return r.loop(ctx, r.interactiveBatch)
}

// StaticRFTConfig sets rejection-sampling fine-tuning on logged contexts:
// RFTConfig, InstancesPerStep being the prompts per iteration (as in
// StaticConfig), and the static reward that judges each candidate turn.
type StaticRFTConfig struct {
	RFTConfig
	// Reward is StaticConfig.Reward: "outcome" (the default; a candidate
	// is kept when it delivers the right outcome in its logged
	// conversation) or "continuation" (kept when the conversation the
	// frozen base continues from it against the simulator succeeds).
	Reward string
}

// DefaultStaticRFTConfig returns DefaultRFTConfig and the outcome reward.
func DefaultStaticRFTConfig() StaticRFTConfig {
	return StaticRFTConfig{RFTConfig: DefaultRFTConfig(), Reward: StaticOutcome}
}

// StaticRFT is RFT on the static partner: the policy samples G
// candidates for each logged prompt (an agent turn cut from a logged
// conversation, as Static), candidates the static reward marks
// successful are kept, and the policy is fine-tuned on them, each in its
// logged context. Static's arguments; the run writes to out.
func StaticRFT(ctx context.Context, policy *chatlm.Model, t rollout.Task, logs []dialog.Episode, behaviour BehaviourAgents, sim, monitorUser dialog.User, cfg StaticRFTConfig, out string, log func(map[string]any)) (RLResult, error) {
	if err := cfg.RFTConfig.Validate(); err != nil {
		return RLResult{}, fmt.Errorf("static rft: %w", err)
	}
	sc := StaticConfig{RLConfig: cfg.RLConfig, Reward: cfg.Reward}
	if err := sc.Validate(); err != nil {
		return RLResult{}, fmt.Errorf("static rft: %w", err)
	}
	s, err := newStaticRun(policy, t, logs, behaviour, sim, monitorUser, sc, algoStaticRFT, out, log)
	if err != nil {
		return RLResult{}, err
	}
	s.useRFT(cfg.RFTConfig)
	s.fingerprint = len(s.prompts) + cfg.MaxKeptPerProblem<<40
	return s.loop(ctx, s.batch)
}

// useRFT makes r's step 2 the filter and its update cross-entropy.
func (r *rlRun) useRFT(cfg RFTConfig) {
	r.crossEntropy = true
	r.credit = func(b rlBatch) advantages { return rftFilter(b, cfg) }
}

// rftFilter is RFT's step 2: weight 1 on the sequences of the samples
// kept, 0 on the others.
func rftFilter(b rlBatch, cfg RFTConfig) advantages {
	G := cfg.Group
	keep := make([]float64, len(b.rewards))
	kept, problems := 0, 0
	for g := 0; g+G <= len(b.rewards) && !cfg.noStep; g += G {
		n := 0
		for i := g; i < g+G; i++ {
			ok := i < len(b.success) && b.success[i]
			switch cfg.keep {
			case keepAll:
				ok = true
			case keepFailures:
				ok = !ok
			}
			if ok && (cfg.MaxKeptPerProblem == 0 || n < cfg.MaxKeptPerProblem) {
				keep[i] = 1
				n++
			}
		}
		kept += n
		if n > 0 {
			problems++
		}
	}
	return advantages{seq: b.seqAdvantages(keep), metrics: map[string]any{MetricRFTKept: kept, MetricRFTKeptProblems: problems}}
}
