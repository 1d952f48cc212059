package train

import "math"

// GroupAdvantages returns GRPO's group-relative advantages: rewards come in
// consecutive groups of size group (the G conversations of one instance),
// and each becomes (r − mean)/(std + eps) within its group, std being the
// population standard deviation. A group whose rewards are all equal carries
// no signal and gets zero advantages. Shao et al. 2024, DeepSeekMath, §4.1.
func GroupAdvantages(rewards []float64, group int, eps float64) []float64 {
	adv := make([]float64, len(rewards))
	if group <= 0 {
		return adv
	}
	for start := 0; start < len(rewards); start += group {
		end := min(start+group, len(rewards))
		g := rewards[start:end]
		mean := 0.0
		for _, r := range g {
			mean += r
		}
		mean /= float64(len(g))
		variance := 0.0
		for _, r := range g {
			variance += (r - mean) * (r - mean)
		}
		std := math.Sqrt(variance / float64(len(g)))
		if std == 0 {
			continue
		}
		for i, r := range g {
			adv[start+i] = (r - mean) / (std + eps)
		}
	}
	return adv
}

// KLk3 is Schulman's k3 estimator of KL(π‖π_ref) from one sample of π:
// exp(ref−logp) − (ref−logp) − 1. It is unbiased, never negative, and zero
// when the two log-probs agree.
func KLk3(logp, refLogp float64) float64 {
	d := refLogp - logp
	return math.Exp(d) - d - 1
}

// PolicyLossStats describes one evaluation of the clipped objective.
type PolicyLossStats struct {
	Loss     float64 // the mean per-token loss
	KL       float64 // mean k3 KL to the reference over counted tokens
	ClipFrac float64 // fraction of counted tokens whose ratio was clipped
	Ratio    float64 // mean importance ratio
	Tokens   int     // tokens counted (mask > 0)
	Weight   float64 // their total weight (the sum of their mask values)
}

// PolicyLoss is GRPO's per-token objective, a weighted mean over the
// tokens with mask > 0, each weighing its mask value (1 for every token:
// long and short conversations weigh by their tokens; RLConfig.LossMean
// "sequence" gives each conversation the same total weight instead):
//
//	ratio = exp(logp − oldLogp)
//	loss  = −min(ratio·A, clip(ratio, 1−clipEps, 1+clipEps)·A) + beta·k3(logp, refLogp)
//
// All slices are per token, adv holds each token's advantage (the
// conversation's, shared by all its agent tokens). It returns the loss
// statistics and dlogp, the gradient of the mean loss with respect to logp,
// ready for Model.Backward. Tokens with mask 0 (user tokens, padding) get
// zero gradient. refLogp may be nil when beta is 0.
func PolicyLoss(logp, oldLogp, refLogp, adv, mask []float32, clipEps, beta float64) (PolicyLossStats, []float32) {
	dlogp := make([]float32, len(logp))
	return policyLossInto(dlogp, logp, oldLogp, refLogp, adv, mask, clipEps, beta), dlogp
}

// policyLossInto is PolicyLoss writing the gradient into dlogp (len(logp)
// long; overwritten whole), so that the RL update reuses one buffer.
func policyLossInto(dlogp, logp, oldLogp, refLogp, adv, mask []float32, clipEps, beta float64) PolicyLossStats {
	clear(dlogp)
	var st PolicyLossStats
	var n float64 // total weight
	for i := range logp {
		if mask[i] > 0 {
			st.Tokens++
			n += float64(mask[i])
		}
	}
	if st.Tokens == 0 {
		return st
	}
	st.Weight = n
	var clipped float64
	for i := range logp {
		if mask[i] <= 0 {
			continue
		}
		w := float64(mask[i])
		lp, a := float64(logp[i]), float64(adv[i])
		ratio := math.Exp(lp - float64(oldLogp[i]))
		clippedRatio := min(max(ratio, 1-clipEps), 1+clipEps)
		unclippedObj, clippedObj := ratio*a, clippedRatio*a
		obj := min(unclippedObj, clippedObj)
		grad := 0.0
		// The gradient flows through the unclipped term only when it is the
		// smaller one; otherwise the clipped constant wins and the token is
		// held still.
		if unclippedObj <= clippedObj {
			grad = -a * ratio
		} else {
			clipped += w
		}
		loss := -obj
		if beta != 0 {
			ref := float64(refLogp[i])
			loss += beta * KLk3(lp, ref)
			st.KL += w * KLk3(lp, ref)
			grad += beta * (1 - math.Exp(ref-lp))
		}
		st.Loss += w * loss
		st.Ratio += w * ratio
		dlogp[i] = float32(grad * w / n)
	}
	st.Loss /= n
	st.KL /= n
	st.Ratio /= n
	st.ClipFrac = clipped / n
	return st
}

// groupRewardStats describes the groups GroupAdvantages sees (consecutive
// groups of size group, the last one possibly shorter): the mean over
// groups of the within-group population variance of the rewards, and the
// share of flat groups, whose rewards are all equal and so carry no
// advantage.
func groupRewardStats(rewards []float64, group int) (meanVar, flat float64) {
	if group <= 0 || len(rewards) == 0 {
		return 0, 0
	}
	n := 0
	for start := 0; start < len(rewards); start += group {
		g := rewards[start:min(start+group, len(rewards))]
		m := mean(g)
		v := 0.0
		equal := true
		for _, r := range g {
			v += (r - m) * (r - m)
			equal = equal && r == g[0]
		}
		meanVar += v / float64(len(g))
		if equal {
			flat++
		}
		n++
	}
	return meanVar / float64(n), flat / float64(n)
}
