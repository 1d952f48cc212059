package horizon

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Regime is how the policy was trained; it decides what a mistake costs.
type Regime int

const (
	// Static: trained on logged expert conversations only (static context RL,
	// behaviour cloning). After its own error the dialogue is in states the
	// policy never saw, and it never gets back on track.
	Static Regime = iota
	// Interactive: trained on-policy against the human (the oracle arm, or a
	// perfectly calibrated simulator). After its own error it spends
	// Model.Recovery turns repairing and is then back on track.
	Interactive
	// Simulated: trained on-policy against a simulator whose user reply
	// opening turn t is off by total variation δ_t. It repairs its own errors
	// like Interactive, but a human reply the simulator never produces
	// (probability δ_t) leaves it in states it never trained on: off track for
	// the rest of the conversation.
	Simulated
)

// String names the regime as the reports do.
func (r Regime) String() string {
	switch r {
	case Static:
		return "static"
	case Interactive:
		return "interactive"
	case Simulated:
		return "simulator"
	}
	return fmt.Sprintf("Regime(%d)", int(r))
}

// Model is the synthetic dialogue MDP of one horizon H = len(Eps).
//
// State at the start of a turn: on track, repairing (j turns left), or lost.
// A turn runs in two steps. First the user replies: under Simulated, with
// probability Delta[t] the human says something the simulator never says and
// a policy not already lost becomes lost. Then the agent acts: on track it
// errs with probability Eps[t] (Static: lost; otherwise the turn is spoiled
// and Recovery repair turns follow); repairing it spends the turn repairing;
// lost it stays lost. The turn earns RMax if it ends on track. The expert
// never errs and earns RMax·H.
type Model struct {
	// RMax is the reward of one turn that ends on track.
	RMax float64
	// Eps[t] is the probability that the learned policy errs at turn t in a
	// state it was trained on; its length is the horizon H.
	Eps []float64
	// Delta[t] is the total-variation distance between the human's and the
	// simulator's user reply opening turn t: the mass of human replies the
	// simulator never produces. Only Simulated uses it; len(Delta) = H.
	Delta []float64
	// Recovery is how many turns an interactively trained policy spends
	// repairing after its own error, besides the spoiled turn itself
	// (0: an error costs its own turn only).
	Recovery int
}

// Gaps holds one number per regime: a gap to the oracle, its bound, a cost
// or a correlation. Simulator is the simulator-induced part, the value of
// Interactive minus the value of Simulated, both against the human.
type Gaps struct {
	Static      float64 `json:"static"`
	Interactive float64 `json:"interactive"`
	Simulator   float64 `json:"simulator"`
}

// H is the horizon, the number of turns.
func (m Model) H() int { return len(m.Eps) }

// Validate reports a model whose probabilities or sizes are out of range.
func (m Model) Validate() error {
	if !(m.RMax > 0) || math.IsInf(m.RMax, 0) {
		return fmt.Errorf("horizon: model: RMax %v must be positive and finite", m.RMax)
	}
	if len(m.Eps) == 0 {
		return errors.New("horizon: model: horizon must be at least 1 turn")
	}
	if len(m.Delta) != len(m.Eps) {
		return fmt.Errorf("horizon: model: %d simulator errors for %d turns", len(m.Delta), len(m.Eps))
	}
	for t := range m.Eps {
		if !(m.Eps[t] >= 0 && m.Eps[t] <= 1) || !(m.Delta[t] >= 0 && m.Delta[t] <= 1) {
			return fmt.Errorf("horizon: model: turn %d: eps %v and delta %v must lie in [0, 1]", t, m.Eps[t], m.Delta[t])
		}
	}
	if m.Recovery < 0 {
		return fmt.Errorf("horizon: model: Recovery %d must be ≥ 0", m.Recovery)
	}
	return nil
}

// States are 0 (on track), 1…Recovery (repairing, that many turns left) and
// Recovery+1 (lost).
func (m Model) numStates() int { return m.Recovery + 2 }
func (m Model) lost() int      { return m.Recovery + 1 }

// step is one turn from state s given the turn's two random events: the
// human's reply is outside the simulator's support (userOff) and the policy
// errs (agentErr). It returns the next state and whether the turn ended on
// track. Exact, Sample and the tests' brute force all go through it, so the
// dynamics are written once.
func (m Model) step(reg Regime, s int, userOff, agentErr bool) (next int, onTrack bool) {
	lost := m.lost()
	if reg == Simulated && userOff {
		s = lost
	}
	switch {
	case s == lost:
		return lost, false
	case s > 0: // repairing; s-1 == 0 is back on track
		return s - 1, false
	case !agentErr:
		return 0, true
	case reg == Static:
		return lost, false
	default:
		return m.Recovery, false
	}
}

// Exact is the expected return of the policy trained under reg, playing
// against the human, by dynamic programming over the state distribution: the
// probability of each state is pushed through every turn's four event
// outcomes, and the probability mass that ends a turn on track is summed.
// It costs O(H·(Recovery+2)). The model must be valid.
func (m Model) Exact(reg Regime) float64 {
	p := make([]float64, m.numStates())
	next := make([]float64, m.numStates())
	p[0] = 1
	var ret float64
	for t := range m.H() {
		clear(next)
		pe, pu := m.Eps[t], m.Delta[t]
		for s, ps := range p {
			if ps == 0 {
				continue
			}
			for _, u := range [2]bool{false, true} {
				wu := 1 - pu
				if u {
					wu = pu
				}
				for _, e := range [2]bool{false, true} {
					we := 1 - pe
					if e {
						we = pe
					}
					w := ps * wu * we
					ns, on := m.step(reg, s, u, e)
					next[ns] += w
					if on {
						ret += w * m.RMax
					}
				}
			}
		}
		p, next = next, p
	}
	return ret
}

// Oracle is the expert's return, RMax·H.
func (m Model) Oracle() float64 { return m.RMax * float64(m.H()) }

// ExactGaps are the regimes' gaps to the oracle, all against the human, by
// Exact. Simulator is the part the simulator adds: Exact(Interactive) −
// Exact(Simulated).
func (m Model) ExactGaps() Gaps {
	inter := m.Exact(Interactive)
	return Gaps{
		Static:      m.Oracle() - m.Exact(Static),
		Interactive: m.Oracle() - inter,
		Simulator:   inter - m.Exact(Simulated),
	}
}

// Bounds are the theory's bounds on ExactGaps: R_max·Σ_t (H−t)·ε_t for
// static training (errors compound), R_max·(1+Recovery)·Σ_t ε_t for
// interactive training (each error costs at most 1+Recovery turns), and
// R_max·Σ_t (H−t)·δ_t for the simulator (a reply outside its support at t can
// spoil turns t … H−1).
func (m Model) Bounds() Gaps {
	var b Gaps
	h := m.H()
	for t := range h {
		left := float64(h - t)
		b.Static += left * m.Eps[t]
		b.Interactive += float64(1+m.Recovery) * m.Eps[t]
		b.Simulator += left * m.Delta[t]
	}
	b.Static *= m.RMax
	b.Interactive *= m.RMax
	b.Simulator *= m.RMax
	return b
}

// SampleGaps estimates ExactGaps by Monte Carlo over n episodes (n ≥ 2) and
// returns the means and their standard errors. Each episode draws the turn
// events once and plays all three regimes on them (common random numbers), so
// the simulator-induced gap is a paired difference. Deterministic given rng.
func (m Model) SampleGaps(n int, rng *rand.Rand) (mean, se Gaps) {
	var sum, sq [3]float64
	oracle := m.Oracle()
	for range n {
		var ret [3]float64
		state := [3]int{}
		regs := [3]Regime{Static, Interactive, Simulated}
		for t := range m.H() {
			u := rng.Float64() < m.Delta[t]
			e := rng.Float64() < m.Eps[t]
			for k, reg := range regs {
				var on bool
				state[k], on = m.step(reg, state[k], u, e)
				if on {
					ret[k] += m.RMax
				}
			}
		}
		g := [3]float64{oracle - ret[0], oracle - ret[1], ret[1] - ret[2]}
		for k := range g {
			sum[k] += g[k]
			sq[k] += g[k] * g[k]
		}
	}
	var mu, s [3]float64
	fn := float64(n)
	for k := range mu {
		mu[k] = sum[k] / fn
		v := (sq[k] - fn*mu[k]*mu[k]) / (fn - 1)
		s[k] = math.Sqrt(math.Max(v, 0) / fn)
	}
	return Gaps{mu[0], mu[1], mu[2]}, Gaps{s[0], s[1], s[2]}
}

// constant is a slice of h copies of v.
func constant(h int, v float64) []float64 {
	s := make([]float64, h)
	for i := range s {
		s[i] = v
	}
	return s
}
