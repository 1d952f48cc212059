package horizon

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// bruteForce enumerates every outcome of the 2·H independent turn events
// (human reply outside the simulator's support, policy error) and plays each
// sequence through step: the expected return by brute force, for tiny H.
func bruteForce(m Model, reg Regime) float64 {
	h := m.H()
	var total float64
	for code := range 1 << (2 * h) {
		prob, ret, s := 1.0, 0.0, 0
		for t := range h {
			u := code>>(2*t)&1 == 1
			e := code>>(2*t+1)&1 == 1
			prob *= pick(u, m.Delta[t]) * pick(e, m.Eps[t])
			var on bool
			s, on = m.step(reg, s, u, e)
			if on {
				ret += m.RMax
			}
		}
		total += prob * ret
	}
	return total
}

func pick(happened bool, p float64) float64 {
	if happened {
		return p
	}
	return 1 - p
}

// randomModel draws per-turn errors up to maxP.
func randomModel(rng *rand.Rand, h, recovery int, maxP float64) Model {
	m := Model{RMax: 0.5 + rng.Float64(), Eps: make([]float64, h), Delta: make([]float64, h), Recovery: recovery}
	for t := range h {
		m.Eps[t] = maxP * rng.Float64()
		m.Delta[t] = maxP * rng.Float64()
	}
	return m
}

func TestExactEqualsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for h := 1; h <= 5; h++ {
		for recovery := 0; recovery <= 2; recovery++ {
			m := randomModel(rng, h, recovery, 0.6)
			for _, reg := range []Regime{Static, Interactive, Simulated} {
				got, want := m.Exact(reg), bruteForce(m, reg)
				if math.Abs(got-want) > 1e-12 {
					t.Errorf("H=%d recovery=%d %v: exact DP %v, brute force %v", h, recovery, reg, got, want)
				}
			}
		}
	}
}

func TestClosedForms(t *testing.T) {
	const eps, r = 0.1, 2.0
	for _, h := range []int{1, 3, 7} {
		// Static with ε everywhere: turn t ends on track iff no error in
		// turns 0..t, so gap = R·Σ_t (1 − (1−ε)^(t+1)).
		m := Model{RMax: r, Eps: constant(h, eps), Delta: make([]float64, h)}
		var want float64
		for t := range h {
			want += r * (1 - math.Pow(1-eps, float64(t+1)))
		}
		g := m.ExactGaps()
		check(t, fmt.Sprintf("H=%d static, eps everywhere", h), g.Static, want)
		// Interactive without repair turns: each error costs its own turn.
		check(t, fmt.Sprintf("H=%d interactive, eps everywhere", h), g.Interactive, r*eps*float64(h))
		check(t, fmt.Sprintf("H=%d simulator gap with delta = 0", h), g.Simulator, 0)

		for i := range h {
			for recovery := 0; recovery <= 2; recovery++ {
				one := Model{RMax: r, Eps: make([]float64, h), Delta: make([]float64, h), Recovery: recovery}
				one.Eps[i] = eps
				g := one.ExactGaps()
				name := fmt.Sprintf("H=%d error at %d recovery %d", h, i, recovery)
				check(t, name+": static", g.Static, r*eps*float64(h-i))
				check(t, name+": interactive", g.Interactive, r*eps*float64(min(1+recovery, h-i)))
				one.Eps[i], one.Delta[i] = 0, eps
				check(t, name+": simulator", one.ExactGaps().Simulator, r*eps*float64(h-i))
			}
		}
	}
}

func check(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
		t.Errorf("%s: got %v, want %v", name, got, want)
	}
}

// The bounds hold for any per-turn errors, not just constant ones.
func TestGapsWithinBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		h := 1 + rng.IntN(40)
		m := randomModel(rng, h, rng.IntN(4), 0.3*rng.Float64())
		g, b := m.ExactGaps(), m.Bounds()
		for _, c := range []struct {
			name       string
			gap, bound float64
		}{
			{"static", g.Static, b.Static},
			{"interactive", g.Interactive, b.Interactive},
			{"simulator", g.Simulator, b.Simulator},
		} {
			if c.gap < -1e-12 || c.gap > c.bound+1e-12 {
				t.Errorf("trial %d H=%d recovery=%d %s: gap %v outside [0, bound %v]", trial, h, m.Recovery, c.name, c.gap, c.bound)
			}
		}
	}
}

func TestSampleGapsMatchesExact(t *testing.T) {
	for _, recovery := range []int{0, 2} {
		m := Model{RMax: 1, Eps: constant(6, 0.05), Delta: constant(6, 0.08), Recovery: recovery}
		exact := m.ExactGaps()
		mean, se := m.SampleGaps(20000, rand.New(rand.NewPCG(3, 4)))
		for _, c := range []struct {
			name            string
			exact, mean, se float64
		}{
			{"static", exact.Static, mean.Static, se.Static},
			{"interactive", exact.Interactive, mean.Interactive, se.Interactive},
			{"simulator", exact.Simulator, mean.Simulator, se.Simulator},
		} {
			if !(c.se > 0) || math.Abs(c.mean-c.exact) > 4.5*c.se {
				t.Errorf("recovery %d %s: Monte Carlo %v ± %v, exact %v (more than 4.5 SE apart)", recovery, c.name, c.mean, c.se, c.exact)
			}
		}
		again, _ := m.SampleGaps(20000, rand.New(rand.NewPCG(3, 4)))
		if again != mean {
			t.Errorf("recovery %d: same seed gave %v then %v", recovery, mean, again)
		}
	}
}

func TestModelValidate(t *testing.T) {
	good := Model{RMax: 1, Eps: []float64{0.1}, Delta: []float64{0.1}}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid model: %v", err)
	}
	for _, c := range []struct {
		name string
		m    Model
	}{
		{"no turns", Model{RMax: 1}},
		{"zero reward", Model{Eps: []float64{0.1}, Delta: []float64{0.1}}},
		{"length mismatch", Model{RMax: 1, Eps: []float64{0.1, 0.1}, Delta: []float64{0.1}}},
		{"eps above 1", Model{RMax: 1, Eps: []float64{1.5}, Delta: []float64{0.1}}},
		{"delta NaN", Model{RMax: 1, Eps: []float64{0.1}, Delta: []float64{math.NaN()}}},
		{"negative recovery", Model{RMax: 1, Eps: []float64{0.1}, Delta: []float64{0.1}, Recovery: -1}},
	} {
		if err := c.m.Validate(); err == nil {
			t.Errorf("%s: got no error, want one", c.name)
		}
	}
}
