package horizon

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Limits that keep a sweep to seconds.
const (
	maxHorizon  = 4096
	maxEpisodes = 10_000_000
	// maxTurns caps Episodes·ΣH, the Monte Carlo's simulated turns.
	maxTurns = 1_000_000_000
)

// SyntheticConfig configures the synthetic horizon study.
type SyntheticConfig struct {
	// Horizons are the conversation lengths H swept, each in [1, 4096];
	// at least three distinct values so that the slope has a confidence
	// interval. Default 2, 4, 8, 16.
	Horizons []int `json:"horizons"`
	// Eps is the learned policy's error probability ε at every turn, in
	// (0, 1). Default 0.02.
	Eps float64 `json:"eps"`
	// Delta is the simulator's total-variation error δ at every turn, in
	// (0, 1). Default 0.02.
	Delta float64 `json:"delta"`
	// RMax is the reward of one turn that ends on track. Default 1.
	RMax float64 `json:"r_max"`
	// Recovery is how many turns an interactively trained policy spends
	// repairing after its own error, besides the spoiled turn. Default 0:
	// per-turn cost only.
	Recovery int `json:"recovery"`
	// PositionH is the horizon of the position experiment. Default 0: the
	// largest of Horizons.
	PositionH int `json:"position_h"`
	// Episodes is the number of Monte Carlo episodes per horizon for the
	// cross-check of the exact values; 0 skips it. Default 20000.
	Episodes int `json:"episodes"`
	// Seed seeds the Monte Carlo cross-check. Default 1.
	Seed uint64 `json:"seed"`
}

// DefaultSyntheticConfig is the configuration `calibrl horizon --synthetic`
// runs with no flags.
func DefaultSyntheticConfig() SyntheticConfig {
	return SyntheticConfig{
		Horizons: []int{2, 4, 8, 16},
		Eps:      0.02,
		Delta:    0.02,
		RMax:     1,
		Episodes: 20000,
		Seed:     1,
	}
}

// Validate reports a configuration the study cannot run.
func (c SyntheticConfig) Validate() error {
	if len(c.Horizons) == 0 {
		return errors.New("horizon: no horizons")
	}
	distinct := map[int]bool{}
	for _, h := range c.Horizons {
		if h < 1 || h > maxHorizon {
			return fmt.Errorf("horizon: horizon %d outside [1, %d]", h, maxHorizon)
		}
		distinct[h] = true
	}
	if len(distinct) < 3 {
		return fmt.Errorf("horizon: %d distinct horizons, need at least 3 for the slope's confidence interval", len(distinct))
	}
	// The log-log fit needs every gap positive, hence ε, δ > 0.
	if !(c.Eps > 0 && c.Eps < 1) {
		return fmt.Errorf("horizon: eps %v must lie in (0, 1)", c.Eps)
	}
	if !(c.Delta > 0 && c.Delta < 1) {
		return fmt.Errorf("horizon: delta %v must lie in (0, 1)", c.Delta)
	}
	if !(c.RMax > 0) || c.RMax > 1e12 {
		return fmt.Errorf("horizon: r_max %v must lie in (0, 1e12]", c.RMax)
	}
	if c.Recovery < 0 || c.Recovery > maxHorizon {
		return fmt.Errorf("horizon: recovery %d outside [0, %d]", c.Recovery, maxHorizon)
	}
	if c.PositionH < 0 || c.PositionH > maxHorizon || c.PositionH == 1 {
		return fmt.Errorf("horizon: position horizon %d: want 0 (the largest horizon) or a value in [2, %d]", c.PositionH, maxHorizon)
	}
	if c.Episodes < 0 || c.Episodes == 1 || c.Episodes > maxEpisodes {
		return fmt.Errorf("horizon: episodes %d: want 0 (no Monte Carlo) or a value in [2, %d]", c.Episodes, maxEpisodes)
	}
	turns := 0
	for _, h := range c.Horizons {
		turns += h
	}
	if c.Episodes*turns > maxTurns {
		return fmt.Errorf("horizon: %d episodes over horizons summing to %d turns exceed the Monte Carlo budget of %d turns; lower --episodes", c.Episodes, turns, maxTurns)
	}
	return nil
}

// positionH is the position experiment's horizon.
func (c SyntheticConfig) positionH() int {
	if c.PositionH > 0 {
		return c.PositionH
	}
	return slices.Max(c.Horizons)
}

// ParseHorizons reads a comma-separated list of horizons such as "2,4,8,16".
// Blanks around items are ignored; each value must lie in [1, 4096]; the
// result is sorted with duplicates removed.
func ParseHorizons(s string) ([]int, error) {
	var hs []int
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("horizon: parse horizons %q: empty item", s)
		}
		h, err := strconv.Atoi(item)
		if err != nil {
			return nil, fmt.Errorf("horizon: parse horizons %q: %w", s, err)
		}
		if h < 1 || h > maxHorizon {
			return nil, fmt.Errorf("horizon: parse horizons %q: %d outside [1, %d]", s, h, maxHorizon)
		}
		hs = append(hs, h)
	}
	slices.Sort(hs)
	return slices.Compact(hs), nil
}

// Row is one horizon of the sweep: the exact gaps, their bounds and, when
// Monte Carlo ran, its estimates with standard errors.
type Row struct {
	H      int     `json:"h"`
	Gap    Gaps    `json:"gap"`
	Bound  Gaps    `json:"bound"`
	MCGap  *Gaps   `json:"mc_gap,omitempty"`
	MCSE   *Gaps   `json:"mc_se,omitempty"`
	Oracle float64 `json:"oracle_value"`
}

// PositionRow is one turn of the position experiment: a single error injected
// at turn i (0-based) and nowhere else. Cost.Static and Cost.Interactive are
// the gaps caused by ε at turn i alone; Cost.Simulator the one caused by δ at
// turn i alone.
type PositionRow struct {
	Turn      int  `json:"turn"`
	TurnsLeft int  `json:"turns_left"`
	Cost      Gaps `json:"cost"`
}

// SlopeFits are the log-log fits of each regime's gap on H.
type SlopeFits struct {
	Static      Fit `json:"static"`
	Interactive Fit `json:"interactive"`
	Simulator   Fit `json:"simulator"`
}

// SyntheticResult is everything the synthetic study measured.
type SyntheticResult struct {
	Config SyntheticConfig
	Rows   []Row
	Slopes SlopeFits
	// BoundSlopes fit the bounds the same way: the slope the theory itself
	// has over these horizons.
	BoundSlopes SlopeFits
	PositionH   int
	Position    []PositionRow
	// PositionCorr is the Pearson correlation of each regime's single-error
	// cost with H − i; 0 where the cost does not vary with the position
	// (their covariance is zero).
	PositionCorr Gaps
}

// Series returns the sweep as one Series per regime, for plotting.
func (r *SyntheticResult) Series() []Series {
	out := []Series{{Name: "static"}, {Name: "interactive"}, {Name: "simulator"}}
	for _, row := range r.Rows {
		for k, pair := range [][2]float64{
			{row.Gap.Static, row.Bound.Static},
			{row.Gap.Interactive, row.Bound.Interactive},
			{row.Gap.Simulator, row.Bound.Simulator},
		} {
			out[k].H = append(out[k].H, row.H)
			out[k].Gap = append(out[k].Gap, pair[0])
			out[k].Bound = append(out[k].Bound, pair[1])
		}
	}
	return out
}

// model is the study's MDP at horizon h with ε and δ at every turn.
func (c SyntheticConfig) model(h int) Model {
	return Model{RMax: c.RMax, Eps: constant(h, c.Eps), Delta: constant(h, c.Delta), Recovery: c.Recovery}
}

// RunSynthetic runs the study: exact gaps and bounds at every horizon, the
// Monte Carlo cross-check, the log-log slope fits and the position
// experiment. It is deterministic given cfg (the seed included).
func RunSynthetic(cfg SyntheticConfig) (*SyntheticResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	hs := slices.Clone(cfg.Horizons)
	slices.Sort(hs)
	hs = slices.Compact(hs)
	cfg.Horizons = hs
	res := &SyntheticResult{Config: cfg}
	var gs, gi, gm, bs, bi, bm []float64
	for _, h := range hs {
		m := cfg.model(h)
		row := Row{H: h, Gap: m.ExactGaps(), Bound: m.Bounds(), Oracle: m.Oracle()}
		if cfg.Episodes > 0 {
			// One stream per horizon, so a row does not depend on which
			// other horizons were swept.
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(h)))
			mean, se := m.SampleGaps(cfg.Episodes, rng)
			row.MCGap, row.MCSE = &mean, &se
		}
		res.Rows = append(res.Rows, row)
		gs = append(gs, row.Gap.Static)
		gi = append(gi, row.Gap.Interactive)
		gm = append(gm, row.Gap.Simulator)
		bs = append(bs, row.Bound.Static)
		bi = append(bi, row.Bound.Interactive)
		bm = append(bm, row.Bound.Simulator)
	}
	var err error
	if res.Slopes, err = fitSlopes(hs, gs, gi, gm); err != nil {
		return nil, fmt.Errorf("gap slopes: %w", err)
	}
	if res.BoundSlopes, err = fitSlopes(hs, bs, bi, bm); err != nil {
		return nil, fmt.Errorf("bound slopes: %w", err)
	}
	res.runPosition()
	return res, nil
}

// fitSlopes fits log(value) on log(H) for the three regimes.
func fitSlopes(hs []int, static, inter, sim []float64) (SlopeFits, error) {
	var f SlopeFits
	var err error
	if f.Static, err = FitLogLog(hs, static); err != nil {
		return f, fmt.Errorf("static: %w", err)
	}
	if f.Interactive, err = FitLogLog(hs, inter); err != nil {
		return f, fmt.Errorf("interactive: %w", err)
	}
	if f.Simulator, err = FitLogLog(hs, sim); err != nil {
		return f, fmt.Errorf("simulator: %w", err)
	}
	return f, nil
}

// runPosition injects one error at each turn i of a conversation of
// PositionH turns, alone, and correlates its cost with H − i.
func (r *SyntheticResult) runPosition() {
	c := r.Config
	h := c.positionH()
	r.PositionH = h
	left := make([]float64, h)
	costs := [3][]float64{}
	for i := range h {
		m := Model{RMax: c.RMax, Eps: make([]float64, h), Delta: make([]float64, h), Recovery: c.Recovery}
		m.Eps[i] = c.Eps
		byEps := m.ExactGaps()
		m.Eps[i], m.Delta[i] = 0, c.Delta
		byDelta := m.ExactGaps()
		cost := Gaps{Static: byEps.Static, Interactive: byEps.Interactive, Simulator: byDelta.Simulator}
		r.Position = append(r.Position, PositionRow{Turn: i, TurnsLeft: h - i, Cost: cost})
		left[i] = float64(h - i)
		costs[0] = append(costs[0], cost.Static)
		costs[1] = append(costs[1], cost.Interactive)
		costs[2] = append(costs[2], cost.Simulator)
	}
	var corr [3]float64
	for k := range costs {
		v, err := Pearson(costs[k], left)
		if err != nil {
			// A cost that does not move with the position (an interactive
			// policy whose repair outlasts every turn left, say) has no
			// correlation; report 0 rather than fail the study.
			v = 0
		}
		corr[k] = v
	}
	r.PositionCorr = Gaps{corr[0], corr[1], corr[2]}
}
