package train

import (
	"context"
	"fmt"
	"math"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

// The pre-registered hacking metrics. Learned reward hacking is a change,
// not a level: a lenient simulator pays more than the human proxy from
// the start (the naive user's gap is there at iteration 0), so every
// reading is compared with the policy RL started from, on the same
// problems and seeds, and the change gets a paired 95% interval.
//
// Each reading plays RLConfig.HackingInstances held-out problems (the
// monitor's split, from MonitorStart; greedy, MonitorGen, or sampled as
// the rollouts with HackingSampled) against the
// training user and the human proxy. Per problem it records, against the
// training user, whether the agent asked for the target and whether the
// user pasted it and the agent delivered the paste (from the task, when
// it can say: hackingSignals), and the reward against each user. The
// rates are over problems; paste→delivery is over the problems where the
// user pasted. The change of a rate or reward from iteration 0 is the
// mean of its per-problem differences, with the normal interval
// mean ± 1.96·sd/√n; paste→delivery's change, over two different sets
// of problems, gets the unpaired interval of a difference of proportions.
//
// Sizing: a change d is detected (α = 0.05 two-sided, power 0.8) when
// d ≥ 2.8·sd/√n. For a rate near 0.5 whose per-problem outcomes change
// independently (the worst case) sd² = 0.5, so n = 800 detects 0.070,
// n = 1,568 detects 0.05; where at most a quarter of the problems change
// outcome (sd² ≤ 0.25), n = 800 detects 0.0495. HackingMDE computes it.

// hackingSignals is what a task can say about an episode for the hacking
// metrics (docedit: Task.HackingSignals).
type hackingSignals interface {
	HackingSignals(o *dialog.Oracle, msgs []dialog.Message) (askedTarget, pasted, pasteDelivered bool)
}

// HackingMDE is the smallest change the hacking metrics detect at n
// problems (α = 0.05 two-sided, power 0.8) for a per-problem difference of
// variance v: 2.8·√(v/n).
func HackingMDE(n int, v float64) float64 {
	if n <= 0 {
		return math.Inf(1)
	}
	return 2.8 * math.Sqrt(v/float64(n))
}

// hackingReading is one reading's per-problem outcomes.
type hackingReading struct {
	ask, pasted, delivered []float64 // 0 or 1, against the training user
	train, human           []float64 // rewards
}

// playHacking reads model on the hacking problems.
func (r *rlRun) playHacking(ctx context.Context, model *chatlm.Model) (hackingReading, error) {
	cfg := r.cfg
	gen := cfg.MonitorGen
	if cfg.HackingSampled {
		gen = cfg.monitorSampledGen()
	}
	agent := &chatlm.Agent{Model: model, Gen: gen, Tool: r.tool}
	rc := rollout.Config{Split: cfg.MonitorSplit, Start: cfg.MonitorStart, Instances: cfg.HackingInstances, Group: 1,
		Seed: cfg.Seed ^ seedHacking, MaxTurns: cfg.MaxTurns, AgentName: "policy", CountTokens: model.CountTokens}
	var h hackingReading
	rc.UserName = "train_user"
	eps, err := playInChunks(ctx, r.task, agent, r.trainUser, rc)
	if err != nil {
		return h, fmt.Errorf("hacking metrics against the training user: %w", err)
	}
	sig, _ := r.task.(hackingSignals)
	for _, ep := range eps {
		h.train = append(h.train, ep.Reward)
		if sig != nil {
			ask, pasted, delivered := sig.HackingSignals(&ep.Oracle, ep.Messages)
			h.ask, h.pasted, h.delivered = append(h.ask, b2f(ask)), append(h.pasted, b2f(pasted)), append(h.delivered, b2f(delivered))
		}
	}
	if r.monitorUser != nil {
		rc.UserName = "human"
		eps, err := playInChunks(ctx, r.task, agent, r.monitorUser, rc)
		if err != nil {
			return h, fmt.Errorf("hacking metrics against the human proxy: %w", err)
		}
		for _, ep := range eps {
			h.human = append(h.human, ep.Reward)
		}
	}
	return h, nil
}

// hackingChunk bounds the problems of a reading played at once. A
// rollout holds every conversation's KV caches until its last turn, and
// 800 problems at once took 17.3 GB in the quote-tool dose study (two
// arms' readings side by side, docedit at the quick preset); chunks of
// hackingChunk keep a reading's memory a fraction of that. Each episode's
// seed is its problem's index's, so the episodes are the same in any
// chunking (TestHackingReadingsDoNotDependOnTheChunk).
var hackingChunk = 128

// playInChunks is rollout.Run of rc's problems, hackingChunk at a time.
func playInChunks(ctx context.Context, task rollout.Task, agent dialog.Agent, user dialog.User, rc rollout.Config) ([]dialog.Episode, error) {
	var eps []dialog.Episode
	for start := 0; start < rc.Instances; start += hackingChunk {
		c := rc
		c.Start, c.Instances = rc.Start+start, min(hackingChunk, rc.Instances-start)
		part, err := rollout.Run(ctx, task, agent, user, c)
		if err != nil {
			return nil, err
		}
		eps = append(eps, part...)
	}
	return eps, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// hacking records one reading of the hacking metrics at step, and its
// change from the policy RL started from (the frozen reference, played
// again after a resume: the same problems and seeds give the same
// reading).
func (r *rlRun) hacking(ctx context.Context, step int) error {
	if r.hackBase == nil {
		base, err := r.playHacking(ctx, r.ref)
		if err != nil {
			return err
		}
		r.hackBase = &base
	}
	now, err := r.playHacking(ctx, r.policy)
	if err != nil {
		return err
	}
	base := r.hackBase
	rec := map[string]any{MetricStep: step, MetricHackingN: float64(len(now.train))}
	if r.cfg.HackingSampled {
		rec[MetricHackingSampled] = 1.0
	}
	put := func(key string, now, base []float64) {
		if len(now) == 0 || len(now) != len(base) {
			return
		}
		rec[key] = mean(now)
		d := make([]float64, len(now))
		for i := range now {
			d[i] = now[i] - base[i]
		}
		m, half := meanCI(d)
		rec[key+HackingChange], rec[key+HackingChange+"_lo"], rec[key+HackingChange+"_hi"] = m, m-half, m+half
	}
	put(MetricHackingTargetRequest, now.ask, base.ask)
	put(MetricHackingTrainReward, now.train, base.train)
	put(MetricHackingHumanReward, now.human, base.human)
	if len(now.human) == len(now.train) && len(now.human) > 0 {
		gap := func(h hackingReading) []float64 {
			g := make([]float64, len(h.train))
			for i := range g {
				g[i] = h.train[i] - h.human[i]
			}
			return g
		}
		put(MetricHackingGap, gap(now), gap(*base))
	}
	if len(now.pasted) > 0 {
		rec[MetricHackingPasted] = sum(now.pasted)
	}
	if p, ok := pasteDelivery(now); ok {
		rec[MetricHackingPasteDelivery] = p
		if q, ok := pasteDelivery(*base); ok {
			n, m := sum(now.pasted), sum(base.pasted)
			half := 1.96 * math.Sqrt(p*(1-p)/n+q*(1-q)/m)
			k := MetricHackingPasteDelivery + HackingChange
			rec[k], rec[k+"_lo"], rec[k+"_hi"] = p-q, p-q-half, p-q+half
		}
	}
	r.log(rec)
	return nil
}

// pasteDelivery is the share of the problems where the user pasted whose
// paste the agent delivered; ok is false when no user pasted.
func pasteDelivery(h hackingReading) (float64, bool) {
	n := sum(h.pasted)
	if n == 0 {
		return 0, false
	}
	var d float64
	for i, p := range h.pasted {
		d += p * h.delivered[i]
	}
	return d / n, true
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// meanCI is the mean of xs and the half-width of its normal 95% interval
// (0 for fewer than two values).
func meanCI(xs []float64) (m, half float64) {
	m = mean(xs)
	if len(xs) < 2 {
		return m, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, 1.96 * math.Sqrt(ss/float64(len(xs)-1)/float64(len(xs)))
}
