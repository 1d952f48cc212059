package horizon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/calibrl/calibrl/metric"
	"github.com/calibrl/calibrl/reproduce"
)

// This file checks the learned study's measured gaps against the bound the
// simulator's measured error implies. A log-log slope says how a gap grows
// but not whether it stays under R_max·Σ_t (H−t)·δ_t; for that each arm's
// δ_t is read from its run folder (reproduce's fidelity stage: the
// simulator against the human proxy under that arm's own conversations,
// fidelity/ARM/seed-K.json) and the bound computed at its H.

// RMax is the largest reward of one conversation in the learned study: a
// success is 0 or 1 and BLEU/100 lies in [0, 1] (the scale of the rows'
// RealReward and of the gaps).
const RMax = 1.0

// MinLead is the oracle arm's smallest lead over the base by which a gap is
// normalised: below it the ratio is noise over noise, and reported n/a.
const MinLead = 0.02

// Decodings are the evaluations' decodings the bound check covers, as
// reproduce names them: the policy as it samples (eval/) and its mode
// (eval-greedy/).
var Decodings = []string{"sampled", "greedy"}

// MeasuredBound is R_max·Σ_{t=0}^{H−1} (H−t)·δ_t for a δ vector measured
// over user turns 0 … len(delta)−1. Turns t ≥ len(delta), which the
// measurement did not cover, carry the last measured value δ_{len−1}
// (the simulator's error is assumed to stay where it was last seen);
// carried counts them, so that a report can say which bounds rest on it.
func MeasuredBound(delta []float64, h int, rMax float64) (bound float64, carried int, err error) {
	if len(delta) == 0 {
		return 0, 0, errors.New("horizon: bound: no measured δ_t")
	}
	if h < 1 {
		return 0, 0, fmt.Errorf("horizon: bound: H = %d, want ≥ 1", h)
	}
	for t, d := range delta {
		if !(d >= 0 && d <= 1) {
			return 0, 0, fmt.Errorf("horizon: bound: δ_%d = %v is not a total-variation distance", t, d)
		}
	}
	var sum float64
	for t := range h {
		sum += float64(h-t) * delta[min(t, len(delta)-1)]
	}
	return rMax * sum, max(0, h-len(delta)), nil
}

// BoundCheck is one arm's measured gap to the oracle arm at one H under one
// decoding, beside the bound from its measured δ_t. In a single study its
// Seeds are the RL seeds; pooled over top-level seeds, the studies'.
type BoundCheck struct {
	H        int    `json:"h"`
	Arm      string `json:"arm"`
	Decoding string `json:"decoding"`
	// Gap is the oracle arm's reward minus this arm's (paired, averaged
	// over seeds); GapCI95 its interval; Seeds each seed's gap.
	Gap     float64    `json:"gap"`
	GapCI95 [2]float64 `json:"gap_ci95"`
	Seeds   []float64  `json:"seeds"`
	// Lead is the oracle arm's reward minus the base's under the same
	// decoding; Normalised is Gap/Lead, absent when Lead ≤ MinLead.
	Lead       float64  `json:"lead"`
	Normalised *float64 `json:"normalised,omitempty"`
	// Bound is R_max·Σ_t (H−t)·δ_t from the arm's measured δ_t (sampled
	// conversations: reproduce measures no greedy δ_t), the mean over
	// seeds of BoundSeeds; Carried counts the turns t < H past the
	// measured δ that carry its last value (MeasuredBound).
	Bound      float64   `json:"bound"`
	BoundSeeds []float64 `json:"bound_seeds"`
	Carried    int       `json:"carried_turns"`
	// Respects is Gap ≤ Bound.
	Respects bool `json:"respects"`
	// PerHistoryBound is the bound from the calibrated simulator's
	// per-history δ_t instead (PerHistoryDelta: reproduce's gate record
	// fidelity/sim.json, the scripted agents' validation histories),
	// absent where the run holds no record; pooled, the studies' mean.
	PerHistoryBound *float64 `json:"per_history_bound,omitempty"`
}

// newBoundCheck fills the derived fields of a check from its measured ones.
func newBoundCheck(c BoundCheck) BoundCheck {
	if c.Lead > MinLead {
		n := c.Gap / c.Lead
		c.Normalised = &n
	}
	c.Bound = metric.Mean(c.BoundSeeds)
	c.Respects = c.Gap <= c.Bound
	return c
}

// verdict is the table's last cell: whether the gap respects the bound,
// and how much that says.
func (c BoundCheck) verdict() string {
	switch {
	case c.Respects && c.Bound >= RMax:
		return "yes (vacuous: bound ≥ R_max)"
	case c.Respects:
		return "yes"
	case c.GapCI95[0] <= c.Bound:
		return "no (bound within the 95% CI)"
	default:
		return "no"
	}
}

// armBounds are arm's bound at horizon h from each RL seed's δ_t in run
// folder dir (seeds of them), and the turns carried past the measurement.
func armBounds(dir, arm string, h, seeds int) ([]float64, int, error) {
	var bounds []float64
	carried := 0
	for k := range seeds {
		file := filepath.Join(dir, "fidelity", arm, fmt.Sprintf("seed-%d.json", k))
		delta, err := readDelta(file)
		if err != nil {
			return nil, 0, err
		}
		b, c, err := MeasuredBound(delta, h, RMax)
		if err != nil {
			return nil, 0, fmt.Errorf("horizon: %s: %w", file, err)
		}
		bounds, carried = append(bounds, b), max(carried, c)
	}
	return bounds, carried, nil
}

// readDelta is the δ_t of one fidelity file.
func readDelta(file string) ([]float64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("horizon: measured δ_t: %w", err)
	}
	var g reproduce.SimToReal
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("horizon: measured δ_t: %s: %w", file, err)
	}
	return g.Delta, nil
}

// PerHistoryDelta is the δ_t the per-history bound uses, read from a
// reproduce run folder's gate record: the simulator's per-history excess
// distance to the human proxy by user turn (fidelity.HistoryReport), each
// clipped at 0 (an excess below 0 is sampling noise, and a distance is
// not negative), over the turns that had histories. ok is false when the
// run has no record (the gate was off, or the run predates it).
func PerHistoryDelta(dir string) (delta []float64, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, "fidelity", "sim.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("horizon: per-history δ_t: %w", err)
	}
	var rec reproduce.SimFidelity
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, false, fmt.Errorf("horizon: per-history δ_t: %s: %w", dir, err)
	}
	for _, t := range rec.Sim.ByTurn {
		if t.Histories == 0 {
			break
		}
		delta = append(delta, min(1, max(0, t.Excess)))
	}
	return delta, len(delta) > 0, nil
}

// checkArms are the arms whose gap to the oracle the bound checks read,
// the base first: the oracle's gap to it is the lead the others are
// normalised by.
var checkArms = []string{reproduce.ArmBase, reproduce.ArmStatic, reproduce.ArmNaive, reproduce.ArmCalibrated}

// runChecks are the bound checks of one reproduce run folder at horizon h,
// both decodings, for the static, naive and calibrated arms, with its
// gaps under each decoding (the base's first: the oracle's lead).
func runChecks(rc reproduce.Config, h int) ([]BoundCheck, error) {
	var out []BoundCheck
	bounds := map[string][]float64{}
	carried := map[string]int{}
	var perHistory *float64
	if delta, ok, err := PerHistoryDelta(rc.Out); err != nil {
		return nil, err
	} else if ok {
		b, _, err := MeasuredBound(delta, h, RMax)
		if err != nil {
			return nil, fmt.Errorf("horizon H=%d: per-history: %w", h, err)
		}
		perHistory = &b
	}
	for _, dec := range Decodings {
		gaps, err := reproduce.OracleGapsOf(rc, dec, checkArms)
		if err != nil {
			return nil, fmt.Errorf("horizon H=%d %s: %w", h, dec, err)
		}
		lead := gaps[0].Difference
		for _, g := range gaps[1:] {
			if bounds[g.Than] == nil {
				if bounds[g.Than], carried[g.Than], err = armBounds(rc.Out, g.Than, h, len(g.Seeds)); err != nil {
					return nil, fmt.Errorf("horizon H=%d: %w", h, err)
				}
			}
			out = append(out, newBoundCheck(BoundCheck{H: h, Arm: g.Than, Decoding: dec, Gap: g.Difference, GapCI95: g.CI95,
				Seeds: g.Seeds, Lead: lead, BoundSeeds: bounds[g.Than], Carried: carried[g.Than], PerHistoryBound: perHistory}))
		}
	}
	return out, nil
}

// findCheck is the check of arm at h under decoding among checks.
func findCheck(checks []BoundCheck, h int, arm, decoding string) (BoundCheck, bool) {
	for _, c := range checks {
		if c.H == h && c.Arm == arm && c.Decoding == decoding {
			return c, true
		}
	}
	return BoundCheck{}, false
}
