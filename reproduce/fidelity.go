package reproduce

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/fidelity"
	"github.com/calibrl/calibrl/metric"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/summary"
	"github.com/calibrl/calibrl/task"
)

// This file measures the simulator's fidelity under each trained policy's
// own behaviour: the sim-to-real gap, the policy's success against the
// run's calibrated simulator minus its success against the human proxy,
// on the held-out problems of the evaluation with the same user seeds and
// the same sampled decoding (so the agent draws from the same per-episode
// streams too). The simulator was fitted to the scripted agents'
// conversations; a policy RL has moved away from them is where a gap
// opens, and where a policy that exploits the simulator shows.
//
// Files, per arm and RL seed index K (the base: fidelity/base):
//
//	fidelity/ARM/seed-K.json               the SimToReal figures
//	fidelity/ARM/seed-K.episodes.jsonl     the conversations with the simulator
//	fidelity/ARM/seed-K.human.episodes.jsonl  the ones with the human proxy,
//	                                       only when the evaluation's could not be used

// SimToReal is one policy's sim-to-real gap (summary.SimToReal).
type SimToReal = summary.SimToReal

// fidelityTurns is how many user turns δ_t covers (fidelity.Config's
// default).
const fidelityTurns = 6

// fidelityFile is where an arm's seed index k keeps its sim-to-real gap,
// without the extension; also its stage name.
func fidelityFile(arm string, k int) string {
	return "fidelity/" + policyName(arm, k)
}

// fidelityStages measure the gap of the base and of every RL arm and seed.
// They come after the evaluations, whose conversations with the human
// proxy they reuse.
func (r *run) fidelityStages() []stage {
	c := gapCost(r.cfg.Preset, r.cfg.Preset.EvalEpisodes)
	out := []stage{{fidelityFile(ArmBase, 0), r.simToReal(ArmBase, 0), c}}
	for k := range r.seeds() {
		for _, arm := range r.trainedArms() {
			out = append(out, stage{fidelityFile(arm, k), r.simToReal(arm, k), c})
		}
	}
	return out
}

// simToReal plays arm's seed index k against the run's simulator as the
// evaluation played it against the human proxy, and compares the two.
func (r *run) simToReal(arm string, k int) func(context.Context) error {
	return func(ctx context.Context) error {
		policy, _, err := chatlm.Load(r.armCkpt(arm, k))
		if err != nil {
			return err
		}
		simDir := r.ckpt("sim")
		sim, err := r.learnedSim(simDir)
		if err != nil {
			return err
		}
		name := policyName(arm, k)
		// As evaluate plays: the task's tool, the sampled decoding, the
		// evaluation's problems, user seeds and turn limit.
		agent := &chatlm.Agent{Model: policy, Gen: r.gen(sampled), Tool: dialog.ToolOf(r.t)}
		rc := rollout.Config{Split: "test", Start: r.slice().Start, Instances: r.cfg.Preset.EvalEpisodes, Seed: r.slice().Seed(r.cfg.Seed),
			MaxTurns: r.cfg.Preset.MaxTurns, AgentName: name, CountTokens: policy.CountTokens}
		file := fidelityFile(arm, k)
		if err := os.MkdirAll(filepath.Dir(r.f.Path(file)), 0o755); err != nil {
			return err
		}
		humanFrom := evalFile(sampled, arm, k) + ".episodes.jsonl"
		humanEps, err := dialog.LoadEpisodes(r.f.Path(humanFrom))
		if err != nil || pairing(humanEps, rc, dialog.Human.String()) != nil {
			// No usable evaluation (removed, or played under other
			// settings): play the human side here.
			humanFrom = file + ".human.episodes.jsonl"
			if humanEps, err = r.playHuman(ctx, agent, rc, r.f.Path(humanFrom)); err != nil {
				return err
			}
		}
		g, err := r.againstSim(ctx, agent, sim, rc, humanEps, file, file+".episodes.jsonl")
		if err != nil {
			return err
		}
		g.Arm, g.Seed, g.Decoding, g.HumanFrom, g.Simulator = arm, k, sampled.name, humanFrom, r.simulatorName(simDir)
		r.cfg.Log.Info("reproduce: sim-to-real gap", "arm", name, "sim", g.SimScore, "human", g.HumanScore, "gap", g.Gap)
		return r.f.WriteJSON(file+".json", g)
	}
}

// playHuman plays agent against the human proxy on rc's problems and
// saves the conversations to path before returning them.
func (r *run) playHuman(ctx context.Context, agent dialog.Agent, rc rollout.Config, path string) ([]dialog.Episode, error) {
	human, err := r.t.User(dialog.Human)
	if err != nil {
		return nil, err
	}
	rc.UserName = dialog.Human.String()
	eps, err := rollout.Run(ctx, r.t, agent, human, rc)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return eps, dialog.SaveEpisodes(path, eps)
}

// simulatorName is how a gap record names the simulator in simDir:
// relative to the run folder, or as it is when it lies outside (a shared
// simulator); with the run's SimCopy, saying what it copies,
// so that no reader takes its stated facts (all true by construction) for
// what the fit learned.
func (r *run) simulatorName(simDir string) string {
	name := simDir
	if rel, err := filepath.Rel(r.f.Dir, simDir); err == nil && !strings.HasPrefix(rel, "..") {
		name = rel
	}
	switch r.simCopy() {
	case dialog.CopyNumbers:
		name += " (copying the numbers it holds)"
	case dialog.CopyValues:
		name += " (copying the whole values it holds)"
	}
	return name
}

// pairing reports why eps are not the conversations rc plays with user:
// one per held-out problem in order, each with the episode seed rc gives
// it, by the same agent.
func pairing(eps []dialog.Episode, rc rollout.Config, user string) error {
	if len(eps) != rc.Instances {
		return fmt.Errorf("%d conversations, want %d", len(eps), rc.Instances)
	}
	for i, ep := range eps {
		if ep.Index != rc.Start+i || ep.Split != rc.Split || ep.Agent != rc.AgentName || ep.User != user ||
			ep.Seed != rollout.EpisodeSeed(rc.Seed, ep.Index, 0) || (rc.MaxTurns > 0 && ep.MaxTurns != 0 && ep.MaxTurns != rc.MaxTurns) {
			return fmt.Errorf("conversation %d (%s, problem %d, seed %d, agent %s, user %s) is not problem %d of %s with seed %d by %s with %s",
				i, ep.Split, ep.Index, ep.Seed, ep.Agent, ep.User, rc.Start+i, rc.Split, rollout.EpisodeSeed(rc.Seed, rc.Start+i, 0), rc.AgentName, user)
		}
	}
	return nil
}

// simToRealOf compares one policy's conversations with the simulator and
// with the human proxy, paired by problem and episode seed.
func simToRealOf(m dialog.Measure, simEps, humanEps []dialog.Episode, seed uint64) (SimToReal, error) {
	if len(simEps) != len(humanEps) || len(simEps) == 0 {
		return SimToReal{}, fmt.Errorf("%d conversations with the simulator, %d with the human proxy: not paired", len(simEps), len(humanEps))
	}
	for j := range simEps {
		if simEps[j].Index != humanEps[j].Index || simEps[j].Seed != humanEps[j].Seed {
			return SimToReal{}, fmt.Errorf("conversation %d: problem %d seed %d with the simulator, problem %d seed %d with the human proxy: not paired",
				j, simEps[j].Index, simEps[j].Seed, humanEps[j].Index, humanEps[j].Seed)
		}
	}
	s := evaluation{sum: eval.Summarize(simEps, seed), eps: simEps}.scores(m)
	h := evaluation{sum: eval.Summarize(humanEps, seed), eps: humanEps}.scores(m)
	d, lo, hi, err := metric.PairedBootstrap([][]float64{s}, [][]float64{h}, bootstrapResamples, 0.95, bootstrapSeed)
	if err != nil {
		return SimToReal{}, err
	}
	g := SimToReal{SimScore: mean(s), HumanScore: mean(h), Gap: d, CI95: [2]float64{lo, hi}, Problems: len(s)}
	sa, ha := fidelity.ActsByTurn(simEps, fidelityTurns), fidelity.ActsByTurn(humanEps, fidelityTurns)
	for t := range fidelityTurns {
		g.Delta = append(g.Delta, fidelity.TV(sa[t], ha[t]))
	}
	g.DeltaMean = mean(g.Delta)
	return g, nil
}

// simToRealSection writes the report's section on the gap: per arm the
// seeds' mean figures and the gap's paired interval over problems and
// seeds, then each seed's gap. A run without the stages' files writes
// nothing.
func (r *run) simToRealSection(w io.Writer) error {
	if err := r.simGateSection(w); err != nil {
		return err
	}
	type armGap struct {
		arm      string
		gaps     []SimToReal
		sim, hum [][]float64 // per seed, per problem
	}
	var rows []armGap
	for _, arm := range append([]string{ArmBase}, r.trainedArms()...) {
		row := armGap{arm: arm}
		for k := range r.seedsOf(arm) {
			file := fidelityFile(arm, k)
			var g SimToReal
			if err := r.f.ReadJSON(file+".json", &g); err != nil {
				if os.IsNotExist(err) {
					continue
				}
				return fmt.Errorf("reproduce report: %w", err)
			}
			simEps, err := dialog.LoadEpisodes(r.f.Path(file + ".episodes.jsonl"))
			if err != nil {
				return fmt.Errorf("reproduce report: %w", err)
			}
			humanEps, err := dialog.LoadEpisodes(r.f.Path(g.HumanFrom))
			if err != nil {
				return fmt.Errorf("reproduce report: %s: %w", file, err)
			}
			row.gaps = append(row.gaps, g)
			row.sim = append(row.sim, evaluation{sum: eval.Summarize(simEps, r.cfg.Seed), eps: simEps}.scores(r.measure()))
			row.hum = append(row.hum, evaluation{sum: eval.Summarize(humanEps, r.cfg.Seed), eps: humanEps}.scores(r.measure()))
		}
		if len(row.gaps) > 0 {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	measure := r.measure().Name
	fmt.Fprintln(w, "## Sim-to-real gap of the trained policies")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Each policy, sampled as in the verdict, on the same %d held-out problems with the same user seeds, against the run's calibrated simulator (%s) and against the human proxy (the evaluation's conversations): "+
		"its %s against the simulator minus against the human proxy. The interval is a paired percentile bootstrap over problems (the seeds' mean per problem); "+
		"δ̄ is the mean total-variation distance between the two users' act distributions by user turn in those conversations: the simulator's fidelity under the policy's own behaviour, not the scripted agents' it was fitted to. "+
		"A gap that grows with RL on the simulator is the policy exploiting it (fidelity/ARM/seed-K.json).\n\n",
		rows[0].gaps[0].Problems, rows[0].gaps[0].Simulator, measure)
	fmt.Fprintf(w, "| arm | seeds | %s vs simulator | %s vs human proxy | gap (95%% CI) | per RL seed | δ̄ |\n", measure, measure)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	for _, row := range rows {
		d, lo, hi, err := metric.PairedBootstrap(row.sim, row.hum, bootstrapResamples, 0.95, bootstrapSeed)
		if err != nil {
			return fmt.Errorf("reproduce report: gap of %s: %w", row.arm, err)
		}
		var s, h, delta []float64
		per := make([]string, len(row.gaps))
		for i, g := range row.gaps {
			s, h, delta = append(s, g.SimScore), append(h, g.HumanScore), append(delta, g.DeltaMean)
			per[i] = fmt.Sprintf("%+.3f", g.Gap)
		}
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %+.3f [%+.3f, %+.3f] | %s | %.3f |\n", row.arm, len(row.gaps), mean(s), mean(h), d, lo, hi, strings.Join(per, ", "), mean(delta))
	}
	fmt.Fprintln(w)
	return nil
}

// The simulator gate: before any arm trains against the run's calibrated
// simulator, it is checked on three channels, all on validation
// (eval.ValidationSlice: problems and personas no verdict reads), beside
// the naive simulator where that has a meaning:
//
//   - acts: its per-history fidelity to the human proxy
//     (fidelity.MeasureHistories) on validation conversations, the
//     excess distance at most Bound;
//   - facts: of the numbers its sampled turns state in those histories,
//     the share that is false at most Bound too (a task without facts
//     skips it). Acts alone missed support's simulator, which answered
//     with the right acts and misstated ids (session 5: excess 0.098,
//     passing; facts true 0.881; success 0.176 off);
//   - success: the base policy, sampled as in the verdict, on validation
//     problems with the simulator and with the human proxy, the gap of
//     its success at most GapBound, the quantity RL's reward rests on.
//     The point estimate is checked; its 95% interval is reported beside
//     it (±0.04 at 500 problems), so a simulator near the bound may fall
//     either side of it by sampling alone.
//
// A simulator that copies what it holds (Config.SimCopy) states only true
// facts by construction: its facts check then says nothing of the fit,
// and the success check carries the weight.
//
// Everything is written to fidelity/sim.json, logged and reported. A
// simulator that fails any check is flagged (a warning in the log and the
// report) or, in refuse mode, stops the run before RL.

// Sim gate modes.
const (
	SimGateWarn   = "warn"
	SimGateRefuse = "refuse"
	SimGateOff    = "off"
)

// DefaultSimGateBound is the largest per-history excess distance
// (fidelity.HistoryReport.Excess) the gate lets pass. It is fixed a
// priori, not fitted to any run: at δ = 0.1 per user turn the simulation
// lemma's R_max·Σ_t (H−t)·δ reaches R_max at H = 4 (Σ = H(H+1)/2 = 10),
// the turn limit of the shortest task levels, so past it the bound says
// nothing about any conversation the runs play.
const DefaultSimGateBound = 0.10

// DefaultSimGateGapBound is the largest |success gap| of the base on
// validation problems the gate lets pass: the bound the calibration issue
// asks of every pipeline, fixed before any run measured against it.
const DefaultSimGateGapBound = 0.05

// SimGate sets the check of the simulator before RL.
type SimGate struct {
	// Mode is SimGateWarn (default: measure, and flag a simulator outside
	// Bound in the log and the report), SimGateRefuse (also stop the run
	// before RL) or SimGateOff (measure nothing).
	Mode string
	// Bound is the largest excess, and the largest share of false stated
	// facts, that passes; zero means DefaultSimGateBound.
	Bound float64
	// GapBound is the largest |success gap| of the base on validation
	// problems that passes, as a share of the measure's scale (0.05:
	// 0.05 success, 5 BLEU points); zero means DefaultSimGateGapBound.
	GapBound float64
	// Problems are the validation problems the base's gap is measured
	// on; zero means the preset's evaluation episodes (the verdict's
	// precision), negative measures no gap.
	Problems int
	// Conversations are the validation conversations of the run's
	// scripted profiles with the human proxy whose histories are
	// measured; default 60. Samples are the draws per history; default
	// 16 (fidelity.HistoryConfig).
	Conversations, Samples int
}

func (g SimGate) fill() SimGate {
	if g.Mode == "" {
		g.Mode = SimGateWarn
	}
	if g.Bound == 0 {
		g.Bound = DefaultSimGateBound
	}
	if g.Conversations <= 0 {
		g.Conversations = 60
	}
	if g.GapBound == 0 {
		g.GapBound = DefaultSimGateGapBound
	}
	return g
}

// Check reports an unusable gate.
func (g SimGate) Check() error {
	switch g.Mode {
	case "", SimGateWarn, SimGateRefuse, SimGateOff:
	default:
		return fmt.Errorf("reproduce: sim gate %q: want %s, %s or %s", g.Mode, SimGateWarn, SimGateRefuse, SimGateOff)
	}
	if g.Bound < 0 || g.Bound > 1 {
		return fmt.Errorf("reproduce: sim gate bound %v: want a distance in [0, 1]", g.Bound)
	}
	if g.GapBound < 0 || g.GapBound > 1 {
		return fmt.Errorf("reproduce: sim gate gap bound %v: want a success difference in [0, 1]", g.GapBound)
	}
	if err := eval.ValidationSlice.Check(g.Problems); err != nil {
		return fmt.Errorf("reproduce: sim gate problems: %w", err)
	}
	return nil
}

// SimFidelity is fidelity/sim.json: the gate's measurement.
type SimFidelity struct {
	Simulator string                 `json:"simulator"`
	Sim       fidelity.HistoryReport `json:"sim"`
	Naive     fidelity.HistoryReport `json:"naive"`
	Bound     float64                `json:"bound"`
	Mode      string                 `json:"mode"`
	// Gap is the base's success with the simulator minus with the human
	// proxy on validation problems, GapBound its bound; nil in records
	// written before the gate measured it, or when it measures none.
	Gap      *SimToReal `json:"gap,omitempty"`
	GapBound float64    `json:"gap_bound,omitempty"`
	// Measure and GapScale are the task's measure the gap is in and its
	// dialog.Measure.Scale: the gap passes within GapBound·GapScale (5
	// BLEU points for docedit). Records from before them hold success
	// gaps (scale 1).
	Measure  string  `json:"measure,omitempty"`
	GapScale float64 `json:"gap_scale,omitempty"`
	// Failed names the checks the simulator failed (gateActs, gateFacts,
	// gateGap), none when it passes.
	Failed []string `json:"failed,omitempty"`
	// Pass is no check failed.
	Pass bool `json:"pass"`
}

// The gate's checks, as Failed names them.
const (
	gateActs  = "acts"
	gateFacts = "facts"
	gateGap   = "success gap"
)

// factsError is the share of h's stated facts that are false; false when
// it stated none (or the task has none).
func factsError(h fidelity.HistoryReport) (float64, bool) {
	if h.SimFacts == nil || h.SimFacts.Accuracy == nil {
		return 0, false
	}
	return 1 - *h.SimFacts.Accuracy, true
}

// judge fills rec.Failed and rec.Pass from its measurements.
func (rec *SimFidelity) judge() {
	rec.Failed = nil
	if rec.Sim.Excess > rec.Bound {
		rec.Failed = append(rec.Failed, gateActs)
	}
	if e, ok := factsError(rec.Sim); ok && e > rec.Bound {
		rec.Failed = append(rec.Failed, gateFacts)
	}
	if rec.Gap != nil && math.Abs(rec.Gap.Gap) > rec.gapBound() {
		rec.Failed = append(rec.Failed, gateGap)
	}
	rec.Pass = len(rec.Failed) == 0
}

// gapBound is GapBound in the measure's units.
func (rec SimFidelity) gapBound() float64 {
	if rec.GapScale > 0 {
		return rec.GapBound * rec.GapScale
	}
	return rec.GapBound
}

// measureName is the measure the gap is in: success in records from
// before it was recorded.
func (rec SimFidelity) measureName() string { return cmp.Or(rec.Measure, dialog.Success.Name) }

// problems is how many validation problems the gate's gap plays: the
// preset's evaluation episodes unless set, none when negative.
func (g SimGate) problems(evalEpisodes int) int {
	switch {
	case g.Problems < 0:
		return 0
	case g.Problems == 0:
		return evalEpisodes
	}
	return g.Problems
}

// simGateFile is the gate's record, without the extension; also its stage
// name.
const simGateFile = "fidelity/sim"

// simGateStages is the gate's stage, none when it is off.
func (r *run) simGateStages() []stage {
	if r.cfg.SimGate.fill().Mode == SimGateOff {
		return nil
	}
	// Mostly sampling the human proxy (tiny's gate took 22 s, quick's
	// 49 s): it scales with the conversations, not the models.
	g := r.cfg.SimGate.fill()
	conv := float64(g.Conversations) / refGateConversations
	c := cost{kindFidelity, scaled(refGate, conv) + gapCost(r.cfg.Preset, g.problems(r.cfg.Preset.EvalEpisodes)).est}
	return []stage{{simGateFile, r.simGate, c}}
}

// ErrSimGate is returned when the gate refuses the simulator.
var ErrSimGate = errors.New("the simulator is outside the calibration gate's bound")

// simGate measures the run's simulator and the naive one on validation
// histories and flags (or refuses) a simulator outside the bound.
func (r *run) simGate(ctx context.Context) error {
	g := r.cfg.SimGate.fill()
	simDir := r.ckpt("sim")
	sim, err := r.learnedSim(simDir)
	if err != nil {
		return err
	}
	human, err := r.t.User(dialog.Human)
	if err != nil {
		return err
	}
	naive, err := r.t.User(dialog.Naive)
	if err != nil {
		return err
	}
	logs, err := fidelity.ValidationLogs(ctx, r.t, r.cfg.Profiles, human, g.Conversations, r.cfg.Seed, r.cfg.Preset.MaxTurns)
	if err != nil {
		return err
	}
	hc := fidelity.HistoryConfig{Samples: g.Samples, Turns: fidelityTurns, Seed: r.cfg.Seed}
	rec := SimFidelity{Simulator: r.simulatorName(simDir), Bound: g.Bound, Mode: g.Mode, GapBound: g.GapBound,
		Measure: r.measure().Name, GapScale: r.measure().Scale}
	if rec.Sim, err = fidelity.MeasureHistories(ctx, "learned", sim, human, logs, hc); err != nil {
		return err
	}
	if rec.Naive, err = fidelity.MeasureHistories(ctx, dialog.Naive.String(), naive, human, logs, hc); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.f.Path(simGateFile)), 0o755); err != nil {
		return err
	}
	if n := g.problems(r.cfg.Preset.EvalEpisodes); n > 0 {
		gap, err := r.validationGap(ctx, sim, n)
		if err != nil {
			return err
		}
		gap.Simulator = rec.Simulator
		rec.Gap = &gap
	}
	rec.judge()
	if err := r.f.WriteJSON(simGateFile+".json", rec); err != nil {
		return err
	}
	attrs := []any{"sim", rec.Simulator, "excess", rec.Sim.Excess, "se", rec.Sim.ExcessSE, "distance", rec.Sim.Distance,
		"floor", rec.Sim.Floor, "naive_excess", rec.Naive.Excess, "bound", g.Bound, "histories", rec.Sim.Histories}
	if e, ok := factsError(rec.Sim); ok {
		attrs = append(attrs, "facts_false", e)
	}
	if rec.Gap != nil {
		attrs = append(attrs, "gap", rec.Gap.Gap, "gap_bound", rec.gapBound(), "problems", rec.Gap.Problems)
	}
	if rec.Pass {
		r.cfg.Log.Info("reproduce: simulator fidelity before RL", attrs...)
		return nil
	}
	attrs = append(attrs, "failed", strings.Join(rec.Failed, ", "))
	hint := ""
	if slices.Contains(rec.Failed, gateFacts) || slices.Contains(rec.Failed, gateGap) {
		hint = r.misstatesHint()
		if hint != "" {
			attrs = append(attrs, "hint", hint)
		}
	}
	r.cfg.Log.Warn("reproduce: simulator fidelity before RL is outside the gate's bounds", attrs...)
	if g.Mode == SimGateRefuse {
		if hint != "" {
			hint = "; " + hint
		}
		return fmt.Errorf("%w: %s (%s.json)%s", ErrSimGate, rec.failures(), simGateFile, hint)
	}
	return nil
}

// misstatesHint is what the gate suggests for a simulator that misstates
// what it holds or is off in success: the mends measured on the off
// pipelines (results/calibration-copy/, support-quick-values/) that this
// run turned off, "" when it has both, or its task offers neither or was
// measured farther with them (task.Name.SimMends).
func (r *run) misstatesHint() string {
	n, err := task.ParseName(r.cfg.Task)
	if err != nil || !n.SimMends() {
		return "" // docedit: the mends took its simulator farther (task.Name.SimMends)
	}
	var mends []string
	if !r.cfg.SimCopy {
		mends = append(mends, fmt.Sprintf("--sim-copy (it states only the %s its problem holds)", chatlm.CopyOf(r.t)))
	}
	if n.Offers(task.WithUserLedger) && !n.Has(task.WithUserLedger) {
		mends = append(mends, "--sim-ledger (it is told each fact it was asked for)")
	}
	if len(mends) == 0 {
		return ""
	}
	return "a simulator that misstates what it holds is mended in part by " + strings.Join(mends, " and ") + ", on by default and off in this run"
}

// failures says which checks failed, with their figures.
func (rec SimFidelity) failures() string {
	var out []string
	for _, f := range rec.Failed {
		switch f {
		case gateActs:
			out = append(out, fmt.Sprintf("per-history excess %.3f ± %.3f > %.3f (naive %.3f)", rec.Sim.Excess, rec.Sim.ExcessSE, rec.Bound, rec.Naive.Excess))
		case gateFacts:
			e, _ := factsError(rec.Sim)
			out = append(out, fmt.Sprintf("%.3f of its %d stated facts false > %.3f", e, rec.Sim.SimFacts.Stated, rec.Bound))
		case gateGap:
			out = append(out, fmt.Sprintf("the base's %s gap %+.3f [%+.3f, %+.3f] on %d validation problems, |gap| > %.3f",
				rec.measureName(), rec.Gap.Gap, rec.Gap.CI95[0], rec.Gap.CI95[1], rec.Gap.Problems, rec.gapBound()))
		}
	}
	return strings.Join(out, "; ")
}

// gateGapFile is where the gate keeps the conversations of its gap,
// without the user's suffix.
const gateGapFile = simGateFile + ".gap"

// validationGap plays the base, sampled as in the verdict, on n
// validation problems with sim and with the human proxy (the same user
// seeds), and measures its success gap as the sim-to-real stages do.
func (r *run) validationGap(ctx context.Context, sim dialog.User, n int) (SimToReal, error) {
	policy, _, err := chatlm.Load(r.ckpt(ArmBase))
	if err != nil {
		return SimToReal{}, err
	}
	v := eval.ValidationSlice
	agent := &chatlm.Agent{Model: policy, Gen: r.gen(sampled), Tool: dialog.ToolOf(r.t)}
	rc := rollout.Config{Split: "test", Start: v.Start, Instances: n, Seed: v.Seed(r.cfg.Seed),
		MaxTurns: r.cfg.Preset.MaxTurns, AgentName: ArmBase, CountTokens: policy.CountTokens}
	humanFrom := gateGapFile + ".human.episodes.jsonl"
	humanEps, err := r.playHuman(ctx, agent, rc, r.f.Path(humanFrom))
	if err != nil {
		return SimToReal{}, err
	}
	g, err := r.againstSim(ctx, agent, sim, rc, humanEps, simGateFile, gateGapFile+".sim.episodes.jsonl")
	if err != nil {
		return SimToReal{}, err
	}
	g.Arm, g.Decoding, g.HumanFrom = ArmBase, sampled.name, humanFrom
	return g, nil
}

// againstSim plays agent with sim on rc's problems and user seeds (the
// progress named stage), saves the conversations to simPath in the run
// folder, and compares them with the human proxy's humanEps on the same
// problems: the sim-to-real gap and δ_t.
func (r *run) againstSim(ctx context.Context, agent dialog.Agent, sim dialog.User, rc rollout.Config, humanEps []dialog.Episode, stage, simPath string) (SimToReal, error) {
	rc.UserName = dialog.Learned.String()
	rc.Progress = r.conversationsProgress(stage, 0, 1)
	simEps, err := rollout.Run(ctx, r.t, agent, sim, rc)
	if err != nil {
		return SimToReal{}, err
	}
	if err := dialog.SaveEpisodes(r.f.Path(simPath), simEps); err != nil {
		return SimToReal{}, err
	}
	g, err := simToRealOf(r.measure(), simEps, humanEps, r.cfg.Seed)
	if err != nil {
		return SimToReal{}, fmt.Errorf("%s: %w", stage, err)
	}
	return g, nil
}

// simGateSection writes the report's lines on the gate, nothing when it
// did not run.
func (r *run) simGateSection(w io.Writer) error {
	var rec SimFidelity
	if err := r.f.ReadJSON(simGateFile+".json", &rec); err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("reproduce report: %w", err)
	}
	fmt.Fprintln(w, "## Simulator fidelity before RL")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Per-history fidelity on %d validation conversations of the scripted agents with the human proxy (%d histories, %d draws of each user's next turn per history): "+
		"the mean total variation between the simulator's and the human proxy's next-act distributions, minus the proxy against a second set of its own draws (the sampling floor), "+
		"so that a faithful simulator scores ≈ 0 (%s.json).\n\n", rec.Sim.Conversations, rec.Sim.Histories, rec.Sim.Samples, simGateFile)
	fmt.Fprintln(w, "| simulator | TV to proxy | floor | excess ± se | stated facts true |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	for _, h := range []fidelity.HistoryReport{rec.Sim, rec.Naive} {
		facts := "n/a"
		if h.SimFacts != nil && h.SimFacts.Accuracy != nil {
			facts = fmt.Sprintf("%.3f of %d", *h.SimFacts.Accuracy, h.SimFacts.Stated)
		}
		name := h.Sim
		if name == "learned" {
			name = "calibrated (" + rec.Simulator + ")"
		}
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %+.3f ± %.3f | %s |\n", name, h.Distance, h.Floor, h.Excess, h.ExcessSE, facts)
	}
	fmt.Fprintln(w)
	if g := rec.Gap; g != nil {
		fmt.Fprintf(w, "The base policy, sampled as in the verdict, on %d validation problems: %s %.3f with the calibrated simulator, %.3f with the human proxy, gap %+.3f [%+.3f, %+.3f] (paired bootstrap), δ̄ %.3f.\n\n",
			g.Problems, rec.measureName(), g.SimScore, g.HumanScore, g.Gap, g.CI95[0], g.CI95[1], g.DeltaMean)
	}
	checks := fmt.Sprintf("excess ≤ %.2f", rec.Bound)
	if _, ok := factsError(rec.Sim); ok {
		checks += fmt.Sprintf(", false stated facts ≤ %.2f", rec.Bound)
	}
	if rec.Gap != nil {
		checks += fmt.Sprintf(", |%s gap| ≤ %.2f", rec.measureName(), rec.gapBound())
	}
	verdict := fmt.Sprintf("within the gate's bounds (%s).", checks)
	if !rec.Pass {
		failed := rec.failures()
		if len(rec.Failed) == 0 { // a record from before the gate named its checks
			failed = fmt.Sprintf("excess %.3f > %.2f", rec.Sim.Excess, rec.Bound)
		}
		verdict = fmt.Sprintf("**outside the gate's bounds** (%s): the arms trained against it learned from a simulator that does not answer as the human proxy does.", failed)
	}
	fmt.Fprintf(w, "The calibrated simulator is %s\n\n", verdict)
	return nil
}
