package train

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/lm"
)

// The update of an iteration (the loop's step 3): old and reference
// log-probs of the sequences that carry signal, then UpdatesPerBatch
// passes of clipped policy-gradient steps over seeded minibatches.

// updateStats sums what the minibatch steps of one iteration report.
type updateStats struct {
	steps, seqs                        int
	gradTokens                         int // MetricGradTokens
	loss, kl, clipFrac, ratio, gradSum float64
	maxAdv                             float64
	// lrScale is RLConfig.lrFactor at this iteration, logged as
	// MetricLRScale when a schedule is on (0: constant, not logged).
	lrScale float64
	// logprobS and stepS are the seconds spent on the old and reference
	// log-probs and on the minibatch steps.
	logprobS, stepS float64
	// crossEntropy: loss is the NLL of the trained tokens (rlRun.crossEntropy),
	// and there is no KL, clip or ratio to report.
	crossEntropy bool
}

func (u updateStats) metrics() map[string]any {
	m := map[string]any{MetricUpdates: u.steps, MetricSequences: u.seqs, MetricGradTokens: u.gradTokens, "train/adv_abs_max": u.maxAdv,
		"perf/logprob_s": u.logprobS, "perf/update_s": u.stepS}
	if u.lrScale > 0 {
		m[MetricLRScale] = u.lrScale
	}
	if u.steps == 0 {
		return m // no signal: logged as a skipped update, no loss keys
	}
	n := float64(u.steps)
	m["grad/norm"] = u.gradSum / n
	if u.crossEntropy {
		m[MetricNLL] = u.loss / n
		return m
	}
	m[MetricPolicyLoss], m[MetricKL], m[MetricClipFrac] = u.loss/n, u.kl/n, u.clipFrac/n
	m["loss/ratio"] = u.ratio / n
	return m
}

// update runs UpdatesPerBatch passes of clipped policy-gradient steps over
// the sequences with a non-zero advantage (all of them with
// KeepFlatGroups), adv[k] being seqs[k]'s. The old log-probs of seqs[k]
// are sampled[k] where it is not nil (rlBatch.sampled), else computed. It
// takes no step when no sequence carries signal.
func (r *rlRun) update(seqs []chatlm.Sequence, adv []float64, sampled [][]float32, it int) (updateStats, error) {
	return r.updateTokens(seqs, adv, nil, sampled, it)
}

// updateTokens is update with, where pos[k] is not nil, an advantage per
// position of seqs[k] (pos[k][t] for the prediction at t; turn-level
// credit) in place of adv[k]. With rlRun.crossEntropy it takes
// cross-entropy steps (RFT) and computes no old or reference log-probs.
func (r *rlRun) updateTokens(seqs []chatlm.Sequence, adv []float64, pos [][]float32, sampled [][]float32, it int) (updateStats, error) {
	cfg := r.cfg
	us := updateStats{crossEntropy: r.crossEntropy}
	if cfg.LRCosine {
		us.lrScale = cfg.lrFactor(it)
	}
	var idx []int
	for i, a := range adv {
		n := seqs[i].Trained()
		signal := a != 0
		if pos != nil && pos[i] != nil {
			signal = false
			for t, w := range seqs[i].Mask {
				if w > 0 && pos[i][t] != 0 {
					signal = true
					us.gradTokens++
					us.maxAdv = max(us.maxAdv, math.Abs(float64(pos[i][t])))
				}
			}
		} else {
			us.maxAdv = max(us.maxAdv, math.Abs(a))
			if signal {
				us.gradTokens += n
			}
		}
		if (signal || cfg.KeepFlatGroups) && n > 0 {
			idx = append(idx, i)
		}
	}
	if us.maxAdv == 0 || len(idx) == 0 {
		return us, nil // every group flat: nothing to learn from
	}
	us.seqs = len(idx)
	if r.crossEntropy {
		// No ratio to clip and no KL: the steps need neither old nor
		// reference log-probs.
		none := make([][]float32, len(idx))
		return r.passes(us, seqs, idx, none, none, adv, pos, it)
	}
	start := time.Now()
	// Old log-probs: the policy before this iteration's first step, on
	// exactly the sequences it is trained on, so the first pass has ratio
	// 1 (to float rounding where the sampler's log-probs are reused: the
	// rollout sampled with these very weights; to bf16's rounding, about
	// 2⁻⁸ of the logits' terms, where it sampled in bf16 apart from
	// training, the ratio then being to the policy that drew the
	// conversations, as clipping wants). Reference log-probs: the
	// frozen initial policy.
	old := make([][]float32, len(idx))
	var missing []int // positions in idx without sampled log-probs
	for k, i := range idx {
		if sampled[i] != nil {
			old[k] = sampled[i]
		} else {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sub := make([]int, len(missing))
		for j, k := range missing {
			sub[j] = idx[k]
		}
		lp, err := sequenceLogp(r.policy, seqs, sub, cfg.MiniBatch, r.scoreTemp())
		if err != nil {
			return us, err
		}
		for j, k := range missing {
			old[k] = lp[j]
		}
	}
	ref, err := sequenceLogp(r.ref, seqs, idx, cfg.MiniBatch, r.scoreTemp())
	if err != nil {
		return us, err
	}
	us.logprobS = time.Since(start).Seconds()
	return r.passes(us, seqs, idx, old, ref, adv, pos, it)
}

// passes runs the UpdatesPerBatch passes of minibatch steps over
// seqs[idx[…]], in an order seeded by (Seed, it).
func (r *rlRun) passes(us updateStats, seqs []chatlm.Sequence, idx []int, old, ref [][]float32, adv []float64, pos [][]float32, it int) (updateStats, error) {
	cfg := r.cfg
	start := time.Now()
	rng := rand.New(rand.NewPCG(iterSeed(cfg.Seed, it), streamMinibatch))
	for pass := 0; pass < cfg.UpdatesPerBatch; pass++ {
		order := rng.Perm(len(idx))
		for lo := 0; lo < len(order); lo += cfg.MiniBatch {
			mb := order[lo:min(lo+cfg.MiniBatch, len(order))]
			st, norm, err := r.step(seqs, idx, mb, old, ref, adv, pos)
			if err != nil {
				return us, err
			}
			us.steps++
			us.loss, us.kl, us.clipFrac, us.ratio, us.gradSum = us.loss+st.Loss, us.kl+st.KL, us.clipFrac+st.ClipFrac, us.ratio+st.Ratio, us.gradSum+norm
		}
	}
	us.stepS = time.Since(start).Seconds()
	return us, nil
}

// step is one minibatch gradient step: Forward, PolicyLoss, Backward,
// clip, AdamW. mb indexes idx, which indexes seqs; old and ref are
// aligned with idx. The minibatch is one batch padded to its longest
// sequence: the model spends no work on padding (lm.Model.Forward runs on
// each sequence's own positions), so sequences of very different lengths
// cost what their tokens cost.
func (r *rlRun) step(seqs []chatlm.Sequence, idx, mb []int, old, ref [][]float32, adv []float64, pos [][]float32) (PolicyLossStats, float64, error) {
	cfg := r.cfg
	total := 0
	for _, k := range mb {
		total += seqs[idx[k]].Trained()
	}
	// With LossMean "sequence" a token weighs (mean trained tokens per
	// sequence) / (its sequence's trained tokens): every conversation gets
	// the same total weight, and the minibatch the same total as with
	// "token", so the step size stays comparable.
	seqWeight := func(k int) float32 { return 1 }
	if cfg.LossMean == LossMeanSequence {
		meanTrained := float64(total) / float64(len(mb))
		seqWeight = func(k int) float32 { return float32(meanTrained / float64(seqs[idx[k]].Trained())) }
	}
	r.policy.LM.ZeroGrad()
	batch := make([]chatlm.Sequence, len(mb))
	for j, k := range mb {
		batch[j] = seqs[idx[k]]
	}
	tok, B, T, lens, mask := r.policy.Pack(batch)
	oldFlat, refFlat, advFlat, dlogp := r.buf.take(B * T)
	for j, k := range mb {
		copy(oldFlat[j*T:], old[k])
		copy(refFlat[j*T:], ref[k])
		a, w := float32(adv[idx[k]]), seqWeight(k)
		var pa []float32 // per-position advantages (turn credit), when set
		if pos != nil {
			pa = pos[idx[k]]
		}
		for t := 0; t < T; t++ {
			advFlat[j*T+t] = a
			if pa != nil {
				advFlat[j*T+t] = 0
				if t < len(pa) {
					advFlat[j*T+t] = pa[t]
				}
			}
			if w != 1 {
				mask[j*T+t] *= w
			}
		}
	}
	// The loss reads only the trained predictions (mask > 0), so the
	// head runs on those alone (lm.ForwardMaskedAt).
	logp, err := r.policy.LM.ForwardMaskedAt(tok, B, T, lens, r.scoreTemp(), mask)
	if err != nil {
		return PolicyLossStats{}, 0, err
	}
	var st PolicyLossStats
	if r.crossEntropy {
		st, err = crossEntropyInto(dlogp, logp, advFlat, mask)
		if err != nil {
			return PolicyLossStats{}, 0, err
		}
	} else {
		st = policyLossInto(dlogp, logp, oldFlat, refFlat, advFlat, mask, cfg.ClipEps, cfg.Beta)
		if cfg.Beta == 0 {
			st.KL = meanKL(logp, refFlat, mask) // still worth watching
		}
	}
	if err := r.policy.LM.Backward(dlogp); err != nil {
		return st, 0, err
	}
	norm := lm.ClipGradNorm(r.policy.LM, cfg.ClipNorm)
	if err := r.opt.Update(r.policy.LM, r.sched.At(r.opt.Step)*r.cfg.lrFactor(r.st.Iter)); err != nil {
		return st, norm, err
	}
	return st, norm, nil
}

// crossEntropyInto is RFT's loss, written like policyLossInto: SFT's
// masked mean NLL (lm.MaskedNLL, the loss lm.SFTStep takes) with each
// position's gradient scaled by its advantage, which is 1 on every kept
// conversation's tokens (and −1 under the learning test's flipped sign).
func crossEntropyInto(dlogp, logp, adv, mask []float32) (PolicyLossStats, error) {
	nll, d, err := lm.MaskedNLL(logp, mask)
	if err != nil {
		return PolicyLossStats{}, err
	}
	var st PolicyLossStats
	for i, w := range mask {
		dlogp[i] = d[i] * adv[i]
		if w > 0 {
			st.Tokens++
			st.Weight += float64(w)
		}
	}
	st.Loss = nll
	return st, nil
}

// updateBuffers are a minibatch's old and reference log-probs, its
// advantages and its loss gradient, B·T positions each.
type updateBuffers struct{ old, ref, adv, dlogp []float32 }

// take returns the four buffers at length n, growing them only when a
// minibatch is larger than any before. The caller overwrites what it
// reads: the sequences copied in cover their own positions only, so the
// rest are cleared here (padding has mask 0, but its old and reference
// log-probs must not be a previous minibatch's values either).
func (b *updateBuffers) take(n int) (old, ref, adv, dlogp []float32) {
	if cap(b.old) < n {
		b.old, b.ref, b.adv, b.dlogp = make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	}
	b.old, b.ref, b.adv, b.dlogp = b.old[:n], b.ref[:n], b.adv[:n], b.dlogp[:n]
	clear(b.old)
	clear(b.ref)
	clear(b.adv)
	return b.old, b.ref, b.adv, b.dlogp
}

// sequenceLogp returns, for each seqs[idx[k]], its per-position log-probs
// under m (length len(IDs)) where it is trained (Mask > 0; 0 elsewhere,
// which no loss reads, so the head runs on those rows alone), in batches
// of batch sequences. A row's log-probs do not depend on the rows beside
// it, and padding costs no work (lm.Model.Forward), so the batching
// changes no figure.
func sequenceLogp(m *chatlm.Model, seqs []chatlm.Sequence, idx []int, batch int, temp float32) ([][]float32, error) {
	out := make([][]float32, len(idx))
	for lo := 0; lo < len(idx); lo += batch {
		part := idx[lo:min(lo+batch, len(idx))]
		b := make([]chatlm.Sequence, len(part))
		for j, i := range part {
			b[j] = seqs[i]
		}
		tok, B, T, lens, mask := m.Pack(b)
		logp, err := m.LM.ForwardMaskedAt(tok, B, T, lens, temp, mask)
		if err != nil {
			return nil, err
		}
		for j := range part {
			out[lo+j] = append([]float32(nil), logp[j*T:j*T+lens[j]]...)
		}
	}
	return out, nil
}

// scoreTemp is the temperature the trainer scores sequences at: the
// rollouts' (RLConfig.Gen).
func (r *rlRun) scoreTemp() float32 { return float32(r.cfg.Gen.Temperature) }

// meanKL is the mean k3 KL over masked positions.
func meanKL(logp, ref, mask []float32) float64 {
	var s, n float64
	for i, w := range mask {
		if w > 0 {
			s += KLk3(float64(logp[i]), float64(ref[i]))
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / n
}
