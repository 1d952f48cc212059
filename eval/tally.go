package eval

import (
	"math"
	"sort"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/metric"
)

// Tally is Summarize one episode at a time, in memory independent of the
// number of episodes, for runs too large to hold (calibrl eval -n 10⁹).
// The counts and means are those of Summarize; the 95% intervals of the
// reward and metrics come from a running variance (Welford), equal to the
// two-pass figure up to rounding.
type Tally struct {
	s       Summary
	success int
	reward  moments
	metrics map[string]*moments
}

// moments is a running mean and sum of squared deviations.
type moments struct {
	n        int
	sum      float64 // summed in order, so sum/n is Summarize's mean exactly
	mean, m2 float64 // Welford's running mean and M2
}

func (m *moments) add(x float64) {
	m.n++
	m.sum += x
	d := x - m.mean
	m.mean += d / float64(m.n)
	m.m2 += d * (x - m.mean)
}

// ci is metric.MeanCI of the values added.
func (m *moments) ci() (mean, lo, hi float64) {
	if m.n == 0 {
		return 0, 0, 0
	}
	mean = m.sum / float64(m.n)
	if m.n == 1 {
		return mean, mean, mean
	}
	sd := math.Sqrt(m.m2 / float64(m.n-1))
	half := metric.StudentTQuantile(0.5+0.95/2, float64(m.n-1)) * sd / math.Sqrt(float64(m.n))
	return mean, mean - half, mean + half
}

// NewTally starts an empty tally for a run of the given seed.
func NewTally(seed uint64) *Tally {
	return &Tally{s: Summary{Seed: seed, Ends: map[dialog.EndReason]int{}}, metrics: map[string]*moments{}}
}

// Add counts one episode. The identifying fields (task, agent, user,
// split) are taken from the first.
func (t *Tally) Add(ep *dialog.Episode) {
	if t.s.Episodes == 0 {
		t.s.Task, t.s.Agent, t.s.User, t.s.Split = ep.Task, ep.Agent, ep.User, ep.Split
	}
	t.s.Episodes++
	if ep.Success {
		t.success++
	}
	t.reward.add(ep.Reward)
	t.s.Turns += float64(ep.Turns)
	t.s.Tokens += float64(ep.Tokens)
	for _, m := range ep.Messages {
		if m.Role == dialog.RoleAssistant {
			t.s.AgentTokens += float64(m.Tokens)
		}
	}
	t.s.Ends[ep.End]++
	for k, v := range ep.Metrics {
		m := t.metrics[k]
		if m == nil {
			m = &moments{}
			t.metrics[k] = m
		}
		m.add(v)
	}
}

// Summary returns the figures of the episodes added so far.
func (t *Tally) Summary() Summary {
	s := t.s
	s.Ends = make(map[dialog.EndReason]int, len(t.s.Ends))
	for k, v := range t.s.Ends {
		s.Ends[k] = v
	}
	if s.Episodes == 0 {
		return s
	}
	n := float64(s.Episodes)
	s.Success = float64(t.success) / n
	s.SuccessCI95[0], s.SuccessCI95[1] = metric.WilsonCI(t.success, s.Episodes, 1.96)
	s.Reward, s.RewardCI95[0], s.RewardCI95[1] = t.reward.ci()
	s.Turns /= n
	s.Tokens /= n
	s.AgentTokens /= n
	if len(t.metrics) > 0 {
		s.Metrics = map[string]float64{}
		names := make([]string, 0, len(t.metrics))
		for k := range t.metrics {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			mean, lo, hi := t.metrics[k].ci()
			s.Metrics[k], s.Metrics[k+"_ci95_lo"], s.Metrics[k+"_ci95_hi"] = mean, lo, hi
		}
		s.shortcuts()
	}
	return s
}
