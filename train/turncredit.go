package train

// Turn-level credit for interactive GRPO (RLConfig.TurnContinuations): every
// agent turn of a conversation gets its own advantage, estimated from
// on-policy continuations, where plain GRPO gives every turn the
// conversation's. The estimator is VinePPO's (Kazemnejad et al. 2024,
// https://arxiv.org/abs/2410.01679) with a turn as the step and no
// intermediate reward, the task scoring only the outcome:
//
//	V̂_1     = the conversation's baseline (the group mean, or with
//	          BaselineGreedy the greedy conversation's reward)
//	V̂_k     = the mean reward of K continuations from the state before
//	          agent turn k (k ≥ 2): the conversation up to and including
//	          the user's reply to turn k−1, the policy writing turn k
//	          afresh and playing on against the same user
//	V̂_{T+1} = the conversation's own reward r
//	A_k     = s · (V̂_{k+1} − V̂_k)
//
// s is the group's 1/(std_G + AdvEps) under the group baseline (1 under
// the greedy one), so a conversation's turn advantages add up to exactly
// its GRPO advantage: turn credit only moves it between the turns, to
// the ones after which the value rose or fell. A flat group (every
// reward equal) has no GRPO advantage and is skipped, as GRPO skips it,
// without playing its continuations.
//
// Unbiased: turn k's baseline V̂_k is estimated from continuations that
// resample turn k itself, so it does not depend on the turn being
// credited, and E[V̂_{k+1} | turn k] = Q(s_k, turn k).
//
// The bias verl's RFC #7244 names (per-turn advantages normalised per
// turn index and summed, so that a conversation's baseline has as many
// terms as it has turns, which the agent's own decision to stop sets: a
// hidden bonus or penalty per extra turn). Here each turn's baseline is
// the value of its own state, one term, whatever the conversation's
// length, and the turns' advantages telescope to r − V̂_1, so taking one
// more turn earns nothing by itself; it earns what it changes in the
// value. The credit is per turn and summed over the turn's tokens, not
// normalised per conversation: the loss is the token mean over the
// minibatch (LossMean "token", required), whose denominator is the
// minibatch's, shared by every turn in it. A per-conversation mean
// (LossMean "sequence") would weigh each turn by 1/(its conversation's
// tokens), a weight the stopping decision sets, which reintroduces the
// length bias; Validate refuses it.
//
// Cost: K·(T−1) continuations per conversation of T turns, each the rest
// of a conversation, played in lockstep, batched like a rollout.

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

// seedTurnContinuation is XORed into an iteration's seed for the seeds of
// its continuations' agents: "turn".
const seedTurnContinuation = 0x7475726e

// turnValues is what turn-level credit adds to a batch.
type turnValues struct {
	// value[i][k], k ≥ 1, is V̂ before sample i's agent turn k+1 (0-based
	// turn k): the mean reward of its continuations. value[i] is nil for a
	// sample whose group was skipped.
	value [][]float64
	// trained[i][k] is the number of trained positions of sample i's turn
	// k (its sampled, not forced, ids): how a whole-conversation sequence's
	// trained positions, in order, divide into turns.
	trained [][]int
	// seqTurn[s] is the turn sequence s holds when its conversation is one
	// sequence per turn, or −1 when it is the whole conversation.
	seqTurn []int
	// swap: RLConfig.swapTurnCredit (a learning test's sabotage).
	swap bool
}

// turnCredit plays the continuations of b's conversations (eps, played
// by sessions, in iteration it) and records their values in b.turns.
func (r *rlRun) turnCredit(ctx context.Context, b *rlBatch, eps []dialog.Episode, sessions []dialog.AgentSession, it int) error {
	cfg := r.cfg
	K, G := cfg.TurnContinuations, cfg.Group
	tv := &turnValues{value: make([][]float64, len(eps)), trained: make([][]int, len(eps)), seqTurn: make([]int, len(b.seqs)), swap: cfg.swapTurnCredit}
	perSample := make([]int, len(eps))
	for _, o := range b.owner {
		perSample[o]++
	}
	next := make([]int, len(eps))
	for s, o := range b.owner {
		tv.seqTurn[s] = -1
		if perSample[o] > 1 {
			tv.seqTurn[s] = next[o]
		}
		next[o]++
	}
	for i := range eps {
		for _, turn := range sessions[i].(*chatlm.AgentSession).Turns {
			n := 0
			for j := range turn.IDs {
				if turn.Forced == nil || !turn.Forced[j] {
					n++
				}
			}
			tv.trained[i] = append(tv.trained[i], n)
		}
	}
	// The continuations: K from before each agent turn but the first, of
	// every conversation whose group is not flat (or, with the greedy
	// baseline, of every conversation). Each continuation's agent has dice
	// of its own; its user replays the conversation's user through the
	// prefix (the episode's seed), so it continues from the very state.
	agent := &chatlm.Agent{Model: r.policy, Gen: cfg.Gen, Tool: r.tool}
	rules := rollout.Rules{Env: dialog.EnvironmentOf(r.task), CountTokens: r.policy.CountTokens}
	seed := iterSeed(cfg.Seed, it) ^ seedTurnContinuation
	type at struct{ i, k int }
	var lives []*rollout.Live
	var where []at
	for i := range eps {
		if b.greedy == nil && flat(b.rewards[i/G*G:i/G*G+G]) {
			continue
		}
		ep := &eps[i]
		tv.value[i] = make([]float64, len(tv.trained[i]))
		k := 0
		for j, m := range ep.Messages {
			if m.Role != dialog.RoleAssistant {
				continue
			}
			if k > 0 && k < len(tv.trained[i]) {
				for c := range K {
					l, err := continueBefore(ctx, ep, j, rollout.EpisodeSeed(seed, i, k*K+c), agent, r.trainUser, rules)
					if err != nil {
						return err
					}
					lives, where = append(lives, l), append(where, at{i, k})
				}
			}
			k++
		}
	}
	if err := playOut(ctx, agent, r.trainUser, lives); err != nil {
		return err
	}
	for n, l := range lives {
		l.Finish(r.task)
		tv.value[where[n].i][where[n].k] += l.Ep.Reward / float64(K)
	}
	b.turns = tv
	b.metrics[MetricTurnContinuations] = len(lives)
	return nil
}

// continueBefore starts a continuation of ep from before its agent
// message j: the conversation up to the user's reply (and the
// environment's notes) before it, the agent drawing from agentSeed's dice,
// the user replaying ep's user through the prefix (ep.Seed, so a scripted
// user is in the very state it was in, rollout.Resume) and drawing on
// from there.
func continueBefore(ctx context.Context, ep *dialog.Episode, j int, agentSeed uint64, agent dialog.Agent, user dialog.User, rules rollout.Rules) (*rollout.Live, error) {
	pre := *ep
	pre.Messages, pre.Seed = ep.Messages[:j], agentSeed
	l, err := rollout.Resume(ctx, pre, agent, user, ep.Seed, rules)
	if err != nil {
		return nil, fmt.Errorf("episode %s before message %d: %w", ep.ID, j, err)
	}
	return l, nil
}

// playOut plays continuations to their end in lockstep: the agent takes
// the turn each was cut before, then user and agent alternate (complete).
func playOut(ctx context.Context, agent dialog.Agent, user dialog.User, lives []*rollout.Live) error {
	if len(lives) == 0 {
		return nil
	}
	if err := rollout.ActAll(ctx, agent, lives, 1); err != nil {
		return err
	}
	byName := map[string]dialog.Agent{}
	for _, l := range lives {
		byName[l.Ep.Agent] = agent
	}
	return complete(ctx, byName, user, lives)
}

// advantages spreads each sample's GRPO advantage adv[i] over its turns
// (the file comment's A_k) and onto its sequences: a turn's sequence gets
// its turn's advantage, a whole conversation's sequence one per position.
func (tv *turnValues) advantages(b rlBatch, adv []float64, group int, eps float64) advantages {
	out := advantages{seq: b.seqAdvantages(adv), pos: make([][]float32, len(b.seqs))}
	turnAdv := make([][]float64, len(b.rewards))
	var first, later, nFirst, nLater float64
	for i, v := range tv.value {
		if v == nil {
			continue // a flat group: no advantage to spread
		}
		g := b.rewards[i/group*group : i/group*group+group]
		base, scale := mean(g), 0.0
		if b.greedy != nil {
			base, scale = b.greedy[i/group], 1
		} else if sd := popStd(g); sd > 0 {
			scale = 1 / (sd + eps)
		}
		turnAdv[i] = turnAdvantages(v, base, b.rewards[i], scale)
		if tv.swap {
			slices.Reverse(turnAdv[i])
		}
		for k, a := range turnAdv[i] {
			if k == 0 {
				first, nFirst = first+math.Abs(a), nFirst+1
			} else {
				later, nLater = later+math.Abs(a), nLater+1
			}
		}
	}
	for s, o := range b.owner {
		ta := turnAdv[o]
		if ta == nil {
			continue
		}
		if k := tv.seqTurn[s]; k >= 0 {
			out.seq[s] = 0
			if k < len(ta) {
				out.seq[s] = ta[k]
			}
			continue
		}
		out.pos[s] = positionAdvantages(b.seqs[s], tv.trained[o], ta)
	}
	out.metrics = map[string]any{}
	if nFirst > 0 {
		out.metrics[MetricTurnAdvFirst] = first / nFirst
	}
	if nLater > 0 {
		out.metrics[MetricTurnAdvLater] = later / nLater
	}
	return out
}

// turnAdvantages is A_k = scale·(V̂_{k+1} − V̂_k) for the T turns of one
// conversation, V̂_1 = base, V̂_k = value[k−1] for 2 ≤ k ≤ T (value[0] is
// unused) and V̂_{T+1} = reward. They add up to scale·(reward − base).
func turnAdvantages(value []float64, base, reward, scale float64) []float64 {
	T := len(value)
	out := make([]float64, T)
	prev := base
	for k := range T {
		next := reward
		if k+1 < T {
			next = value[k+1]
		}
		out[k] = scale * (next - prev)
		prev = next
	}
	return out
}

// positionAdvantages gives each trained position of seq, a whole
// conversation, its turn's advantage: the trained positions in order are
// trained[0] of turn 0's, then trained[1] of turn 1's, and so on. Trained
// positions past the turns known (none, when the sequence was built from
// the same turns) get 0.
func positionAdvantages(seq chatlm.Sequence, trained []int, turnAdv []float64) []float32 {
	pos := make([]float32, len(seq.IDs))
	k, left := 0, 0
	if len(trained) > 0 {
		left = trained[0]
	}
	for t, w := range seq.Mask {
		if w <= 0 {
			continue
		}
		for left == 0 && k+1 < len(trained) {
			k++
			left = trained[k]
		}
		if left == 0 {
			break
		}
		pos[t] = float32(turnAdv[k])
		left--
	}
	return pos
}

// popStd is the population standard deviation of xs.
func popStd(xs []float64) float64 {
	m := mean(xs)
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return math.Sqrt(v / float64(len(xs)))
}
