package fidelity

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"text/tabwriter"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/rollout"
)

// This file measures per-history fidelity: for every history of a
// held-out logged conversation (the conversation up to one of its user
// turns), the distance between the simulator's and the human proxy's
// distributions of the next user turn. δ_t of ActsByTurn compares act
// frequencies pooled over all conversations at turn t; two users can agree
// there while answering each history differently (the right acts to the
// wrong people), and the simulation lemma's δ_t is the per-history one:
// E_h TV(P_sim(·|h), P_human(·|h)).
//
// The human proxy is a program, so its next-turn distribution at a history
// is sampled, not read from one logged reply: K proxy sessions with seeds
// of their own are each replayed through the logged conversation (opened,
// then asked to reply to each logged prefix in order, so a session's memory
// — patience spent, facts told — follows the logged agent's turns) and
// their replies at a history are K draws of its next turn. The simulator
// is sampled the same way, K sessions replayed through the same logs, so
// any effect of replaying rather than living the conversation falls on
// both alike. Persona is the oracle's, so the logged person's.
//
// Sampling error. The plug-in TV between two K-sample empirical
// distributions is biased up: two independent sample sets of one user are
// apart by more than 0 (measured at K = 16 on 183 mathchat:easy validation
// histories: 0.034, where the proxy's next act is nearly fixed by the
// agent's turn; more where it is not). So the proxy is sampled twice, sets
// A and B, independent, and each history gets
//
//	d_h = TV(sim_h, A_h) − TV(B_h, A_h),
//
// the simulator's distance minus the split baseline of the same sample
// sizes. When the simulator is the proxy, sim_h and B_h are exchangeable,
// so E d_h = 0 exactly, whatever K: Excess ≈ 0 within ExcessSE is what a
// faithful simulator shows, and the test of this file checks it.

// HistoryConfig sets a per-history measurement.
type HistoryConfig struct {
	// Samples is K, the draws of each user's next turn per history;
	// default 16. Larger K lowers the baseline Floor and the noise of
	// Excess; Excess is unbiased at any K.
	Samples int
	// Turns is how many user-turn indexes the per-turn figures cover (0 is
	// the opening); default 6. Later turns count in the overall figures.
	Turns int
	// Seed seeds every session: sample k of conversation i draws from
	// rollout.EpisodeSeed(Seed^set, i, k) on historyStream, set one
	// constant for the simulator and one for each proxy set.
	Seed uint64
}

func (c *HistoryConfig) fill() error {
	if c.Samples <= 0 {
		c.Samples = 16
	}
	if c.Turns <= 0 {
		c.Turns = 6
	}
	if c.Turns > MaxTurnIndexes {
		return fmt.Errorf("fidelity: %d turn indexes, the limit is %d", c.Turns, MaxTurnIndexes)
	}
	if c.Samples > maxSamples {
		return fmt.Errorf("fidelity: %d samples per history, the limit is %d", c.Samples, maxSamples)
	}
	return nil
}

// maxSamples bounds K: every conversation holds K sessions per user.
const maxSamples = 1024

// historyStream is the PCG stream of the replayed sessions: no rollout's
// (rollout.UserStream, rollout.AgentStream) nor MeasureLogs' (logStream).
const historyStream = 4

// The seed offsets of the three sample sets.
const (
	simSet    uint64 = 0
	proxyASet uint64 = 0x61a
	proxyBSet uint64 = 0x61b
)

// replayBatch bounds the sessions asked at once: a model simulator
// answers a round of K sessions per conversation in batches this size.
const replayBatch = 512

// TurnDistance is the per-history figures of one user-turn index.
type TurnDistance struct {
	Histories int     `json:"histories"`
	Distance  float64 `json:"distance"`
	Floor     float64 `json:"floor"`
	Excess    float64 `json:"excess"`
}

// Facts counts the numbers one user's sampled turns state, where the task
// has facts: a stated number is true when the problem holds it (its
// instruction, a fact's value or the answer). Accuracy is True/Stated, nil
// when nothing was stated: how well a user copies the facts it holds
// ("A-912" for "A-921" is a false one).
type Facts struct {
	Stated   int      `json:"stated"`
	True     int      `json:"true"`
	Accuracy *float64 `json:"accuracy,omitempty"`
}

// HistoryReport is one simulator's per-history fidelity.
type HistoryReport struct {
	Sim           string `json:"sim"`
	Conversations int    `json:"conversations"`
	Histories     int    `json:"histories"`
	Samples       int    `json:"samples"`
	// Distance is the mean over histories of TV(sim_h, A_h) between the
	// simulator's and the proxy's (set A) sampled act distributions; Floor
	// the mean of TV(B_h, A_h), the proxy against its own second set: the
	// plug-in bias at this K. Excess = Distance − Floor is the per-history
	// distance the sampling noise does not explain (≈ 0 for the proxy
	// itself), and ExcessSE its standard error, clustered by conversation
	// (a conversation's histories share their draws' sessions).
	Distance float64 `json:"distance"`
	Floor    float64 `json:"floor"`
	Excess   float64 `json:"excess"`
	ExcessSE float64 `json:"excess_se"`
	// ByTurn[t] is the same over user turn t's histories.
	ByTurn []TurnDistance `json:"by_turn"`
	// SimFacts and HumanFacts count the stated numbers of the simulator's
	// and the proxy's (set A) draws; absent for tasks without facts.
	SimFacts   *Facts `json:"sim_facts,omitempty"`
	HumanFacts *Facts `json:"human_facts,omitempty"`
}

// MeasureHistories measures sim's per-history fidelity to human on the
// logged conversations eps (the caller passes held-out ones: validation,
// never test, when a choice rests on it).
func MeasureHistories(ctx context.Context, simName string, sim, human dialog.User, eps []dialog.Episode, cfg HistoryConfig) (HistoryReport, error) {
	if err := cfg.fill(); err != nil {
		return HistoryReport{}, err
	}
	rep := HistoryReport{Sim: simName, Conversations: len(eps), Samples: cfg.Samples}
	if len(eps) == 0 {
		return rep, fmt.Errorf("fidelity: no logged conversations to measure %s against", simName)
	}
	convs := make([][]logContext, len(eps))
	for i := range eps {
		convs[i] = logContexts(i, &eps[i])
	}
	simDraws, err := replayDraws(ctx, sim, eps, convs, cfg, simSet)
	if err != nil {
		return rep, fmt.Errorf("fidelity: %s: %w", simName, err)
	}
	a, err := replayDraws(ctx, human, eps, convs, cfg, proxyASet)
	if err != nil {
		return rep, fmt.Errorf("fidelity: human: %w", err)
	}
	b, err := replayDraws(ctx, human, eps, convs, cfg, proxyBSet)
	if err != nil {
		return rep, fmt.Errorf("fidelity: human: %w", err)
	}
	scoreHistories(&rep, eps, convs, simDraws, a, b, cfg.Turns)
	return rep, nil
}

// draw is one sampled user turn.
type draw struct {
	text  string
	ended bool
}

// replayDraws samples u's turn K times at every context of convs:
// out[i][j][k] is sample k at conversation i's j-th user turn.
func replayDraws(ctx context.Context, u dialog.User, eps []dialog.Episode, convs [][]logContext, cfg HistoryConfig, set uint64) ([][][]draw, error) {
	K := cfg.Samples
	out := make([][][]draw, len(eps))
	sessions := make([][]dialog.UserSession, len(eps))
	rounds := 0
	for i := range eps {
		out[i] = make([][]draw, len(convs[i]))
		for j := range out[i] {
			out[i][j] = make([]draw, K)
		}
		sessions[i] = make([]dialog.UserSession, K)
		for k := range K {
			seed := rollout.EpisodeSeed(cfg.Seed^set, i, k)
			sessions[i][k] = u.NewSession(&eps[i].Oracle, rand.New(rand.NewPCG(seed, historyStream)))
		}
		rounds = max(rounds, len(convs[i]))
	}
	// Round j asks every conversation's K sessions for their j-th user
	// turn, so each session's turns come in order.
	type slot struct{ i, k int }
	for j := range rounds {
		var open, reply []slot
		for i := range convs {
			if j >= len(convs[i]) {
				continue
			}
			for k := range K {
				if len(convs[i][j].history) == 0 {
					open = append(open, slot{i, k})
				} else {
					reply = append(reply, slot{i, k})
				}
			}
		}
		for lo := 0; lo < len(open); lo += replayBatch {
			part := open[lo:min(lo+replayBatch, len(open))]
			ss := make([]dialog.UserSession, len(part))
			for n, s := range part {
				ss[n] = sessions[s.i][s.k]
			}
			texts, err := rollout.Openings(ctx, u, ss, 1)
			if err != nil {
				return nil, fmt.Errorf("openings: %w", err)
			}
			for n, s := range part {
				out[s.i][j][s.k] = draw{text: texts[n]}
			}
		}
		for lo := 0; lo < len(reply); lo += replayBatch {
			part := reply[lo:min(lo+replayBatch, len(reply))]
			ss := make([]dialog.UserSession, len(part))
			hs := make([][]dialog.Message, len(part))
			for n, s := range part {
				ss[n], hs[n] = sessions[s.i][s.k], convs[s.i][j].history
			}
			texts, ends, err := rollout.Replies(ctx, u, ss, hs, 1)
			if err != nil {
				return nil, fmt.Errorf("replies at user turn %d: %w", j, err)
			}
			for n, s := range part {
				out[s.i][j][s.k] = draw{text: texts[n], ended: ends[n]}
			}
		}
	}
	return out, nil
}

// actDist is the act distribution of one history's draws.
func actDist(o *dialog.Oracle, ds []draw) map[Act]float64 {
	p := map[Act]float64{}
	for _, d := range ds {
		p[Classify(o, d.text, d.ended)] += 1 / float64(len(ds))
	}
	return p
}

// scoreHistories fills rep's distances and fact counts from the draws.
func scoreHistories(rep *HistoryReport, eps []dialog.Episode, convs [][]logContext, sim, a, b [][][]draw, turns int) {
	rep.ByTurn = make([]TurnDistance, turns)
	withFacts := false
	var simFacts, humanFacts Facts
	var sumD, sumF float64
	convExcess := make([]float64, len(convs)) // Σ d_h per conversation
	convN := make([]int, len(convs))
	for i := range convs {
		o := &eps[i].Oracle
		known := o.KnownNumbers()
		if len(o.Facts) > 0 {
			withFacts = true
		}
		for j, c := range convs[i] {
			pa := actDist(o, a[i][j])
			dist, floor := TV(actDist(o, sim[i][j]), pa), TV(actDist(o, b[i][j]), pa)
			sumD, sumF = sumD+dist, sumF+floor
			convExcess[i] += dist - floor
			convN[i]++
			rep.Histories++
			if t := c.turn; t < turns {
				bt := &rep.ByTurn[t]
				bt.Histories++
				bt.Distance += dist
				bt.Floor += floor
			}
			if len(o.Facts) > 0 {
				for k := range sim[i][j] {
					countFacts(&simFacts, known, sim[i][j][k].text)
					countFacts(&humanFacts, known, a[i][j][k].text)
				}
			}
		}
	}
	n := float64(rep.Histories)
	rep.Distance, rep.Floor = sumD/n, sumF/n
	rep.Excess = rep.Distance - rep.Floor
	rep.ExcessSE = clusteredSE(convExcess, convN, rep.Excess)
	for t := range rep.ByTurn {
		bt := &rep.ByTurn[t]
		if bt.Histories > 0 {
			bt.Distance /= float64(bt.Histories)
			bt.Floor /= float64(bt.Histories)
			bt.Excess = bt.Distance - bt.Floor
		}
	}
	if withFacts {
		for _, f := range []*Facts{&simFacts, &humanFacts} {
			if f.Stated > 0 {
				acc := float64(f.True) / float64(f.Stated)
				f.Accuracy = &acc
			}
		}
		rep.SimFacts, rep.HumanFacts = &simFacts, &humanFacts
	}
}

// clusteredSE is the standard error of a mean over histories, mean,
// whose histories come in clusters (conversations) of sizes n with sums
// sums: the cluster-robust (sandwich) variance with the C/(C−1)
// small-sample factor. Zero with fewer than two clusters.
func clusteredSE(sums []float64, n []int, mean float64) float64 {
	var total, ss float64
	clusters := 0
	for c := range sums {
		if n[c] == 0 {
			continue
		}
		clusters++
		total += float64(n[c])
		r := sums[c] - float64(n[c])*mean
		ss += r * r
	}
	if clusters < 2 {
		return 0
	}
	return math.Sqrt(ss*float64(clusters)/float64(clusters-1)) / total
}

// countFacts adds the numbers msg states to f.
func countFacts(f *Facts, known map[string]bool, msg string) {
	for _, n := range dialog.NumberPattern.FindAllString(msg, -1) {
		f.Stated++
		if known[dialog.CanonNumber(n)] {
			f.True++
		}
	}
}

// WriteHistoryTable prints one row per simulator of its per-history
// fidelity, then the excess by user turn.
func WriteHistoryTable(w io.Writer, reps []HistoryReport) error {
	if len(reps) == 0 {
		return nil
	}
	acc := func(f *Facts) string {
		if f == nil || f.Accuracy == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.3f of %d", *f.Accuracy, f.Stated)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "sim\thistories\tK\tTV to proxy\tproxy floor\texcess ± se\tfacts true (proxy)")
	for _, r := range reps {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%+.3f ± %.3f\t%s (%s)\n", r.Sim, r.Histories, r.Samples, r.Distance, r.Floor,
			r.Excess, r.ExcessSE, acc(r.SimFacts), acc(r.HumanFacts))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "user turn t\thistories"
	for _, r := range reps {
		head += "\t" + r.Sim + " excess"
	}
	fmt.Fprintln(tw, head)
	for t, bt := range reps[0].ByTurn {
		if bt.Histories == 0 {
			continue
		}
		fmt.Fprintf(tw, "%d\t%d", t, bt.Histories)
		for _, r := range reps {
			fmt.Fprintf(tw, "\t%+.3f", r.ByTurn[t].Excess)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// String is a one-line summary for logs and reports.
func (r HistoryReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "per-history TV %.3f (proxy floor %.3f, excess %+.3f ± %.3f) over %d histories, K=%d", r.Distance, r.Floor, r.Excess, r.ExcessSE, r.Histories, r.Samples)
	if r.SimFacts != nil && r.SimFacts.Accuracy != nil {
		fmt.Fprintf(&b, ", facts true %.3f", *r.SimFacts.Accuracy)
	}
	return b.String()
}

// ValidationLogs plays n conversations of the scripted profiles (the
// task's every one when nil; shared out between them, as reproduce
// collects its logs) with the human
// proxy on the validation slice (eval.ValidationSlice: test-split problems
// and personas no training stage sees and no verdict reads, users seeded
// apart): the held-out logs a per-history measurement that chooses
// anything (a checkpoint, a gate) reads.
func ValidationLogs(ctx context.Context, t Task, profiles []string, human dialog.User, n int, seed uint64, maxTurns int) ([]dialog.Episode, error) {
	s := eval.ValidationSlice
	if err := s.Check(n); err != nil {
		return nil, fmt.Errorf("fidelity: validation logs: %w", err)
	}
	if len(profiles) == 0 {
		profiles = t.Profiles()
	}
	agents := make([]dialog.Agent, len(profiles))
	names := make([]string, len(profiles))
	for i, p := range profiles {
		a, err := t.Agent(p)
		if err != nil {
			return nil, fmt.Errorf("fidelity: validation logs: %w", err)
		}
		agents[i], names[i] = a, AgentSpec(p)
	}
	return rollout.Share(ctx, t, agents, names, human, rollout.Config{Split: "test", Start: s.Start, Instances: n,
		Seed: s.Seed(seed), MaxTurns: maxTurns, UserName: dialog.Human.String()})
}
