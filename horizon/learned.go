package horizon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/figure"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/reproduce"
	"github.com/calibrl/calibrl/task"
)

// LearnedConfig sets the learned-model study. One base policy and one
// calibrated simulator are trained on logs that mix every horizon (the
// preset's log budget shared out evenly), so that between horizons only H
// changes; then, per horizon H, every arm is trained from that base with
// the preset's RL budget on the task's "hH" level (grown to need about H
// turns) with a turn limit of H, once per RL seed (Preset.RLSeeds), and
// evaluated against the human proxy on the same held-out problems with
// the same user seeds, so that each arm's gap to the oracle arm is paired.
type LearnedConfig struct {
	Task     string
	Preset   preset.Preset
	Horizons []int
	Seed     uint64
	// Out holds one reproduce run folder per horizon (h2/, h4/, …) and the
	// study's report.md, result.json and plot.
	Out string
	Log *slog.Logger
	// Jobs is reproduce's: how many independent stages run side by side
	// (≤ 0: reproduce.DefaultJobs).
	Jobs int
}

// LearnedPlotName is the base name of the learned study's figure.
const LearnedPlotName = "horizon_learned"

// LearnedArm is one regime's gap to the oracle-interactive arm per H.
type LearnedArm struct {
	Arm string    `json:"arm"`
	H   []int     `json:"h"`
	Gap []float64 `json:"gap"`
	// GapCI95 is each gap's 95% interval: the oracle arm and this one
	// play the same held-out problems with the same user seeds, so the
	// gap is paired, averaged over RL seeds, with a bootstrap over
	// problems within seeds (reproduce.OracleGaps). Seeds holds each RL
	// seed index's gap.
	GapCI95 [][2]float64 `json:"gap_ci95"`
	Seeds   [][]float64  `json:"seeds"`
	// Bound is each H's R_max·Σ_t (H−t)·δ_t from the arm's measured δ_t
	// (its BoundCheck's), beside the gap it bounds.
	Bound []float64 `json:"bound"`
	// Fit is the least-squares slope of log(gap) on log(H) over the
	// horizons whose gap is positive; nil when fewer than three are.
	Fit  *Fit   `json:"fit,omitempty"`
	Note string `json:"note,omitempty"`
}

// LearnedResult is the study's outcome.
type LearnedResult struct {
	Task   string `json:"task"`
	Preset string `json:"preset"`
	// Iterations is every arm's RL budget at every H.
	Iterations int `json:"iterations"`
	// Horizons are the finished horizons, Pending those still to run
	// (an interrupted study's result so far).
	Horizons   []int                   `json:"horizons"`
	Pending    []int                   `json:"pending,omitempty"`
	Rows       map[int][]reproduce.Row `json:"rows"`
	Arms       []LearnedArm            `json:"arms"`
	Oracle     map[int]float64         `json:"oracle"`
	OracleCI95 [][2]float64            `json:"oracle_ci95"`
	Runs       map[int]string          `json:"runs"`
	// Synthetic is the synthetic study (DefaultSyntheticConfig) at the
	// same horizons: the theory's lines the plot draws beside the arms.
	Synthetic       []Series  `json:"synthetic"`
	SyntheticSlopes SlopeFits `json:"synthetic_slopes"`
	// Checks hold each arm's gap beside the bound from its measured δ_t,
	// per H and decoding (bound.go).
	Checks []BoundCheck `json:"bound_checks"`
}

// RunLearned trains and evaluates every arm at every horizon (each run
// resumable on its own), then fits each regime's gap to the oracle arm on
// log-log axes. A gap is the oracle arm's held-out reward minus the arm's;
// gaps that are not positive cannot be fitted and are reported as such.
// The study takes hours, so after every finished H it writes the result
// so far (Pending names the horizons still to run): an interrupted study
// shows what it has measured, and the same command goes on from there.
func RunLearned(ctx context.Context, cfg LearnedConfig) (*LearnedResult, error) {
	if len(cfg.Horizons) < 2 {
		// Two suffice for the bound check; the slope needs three and says
		// so in its note.
		return nil, errors.New("horizon: the learned study needs at least two horizons")
	}
	// The converse of RunLearnedSeeds' check: a pooled study's folder
	// would get a single-seed report over its pooled one.
	if seeded, _ := filepath.Glob(filepath.Join(cfg.Out, "seed-*", "shared")); len(seeded) > 0 {
		return nil, fmt.Errorf("horizon: %s holds a study over seeds (%s): resume it with the same --seeds, or give one seed a fresh --out", cfg.Out, filepath.Dir(seeded[0]))
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	res := &LearnedResult{Task: cfg.Task, Preset: cfg.Preset.Name, Iterations: cfg.Preset.RL.Iterations,
		Rows: map[int][]reproduce.Row{}, Oracle: map[int]float64{}, Runs: map[int]string{}}
	// The synthetic study at the same horizons, its lines drawn beside
	// the learned gaps; it fits slopes, so it needs three.
	if len(cfg.Horizons) >= 3 {
		sc := DefaultSyntheticConfig()
		sc.Horizons = cfg.Horizons
		syn, err := RunSynthetic(sc)
		if err != nil {
			return nil, fmt.Errorf("horizon: synthetic lines: %w", err)
		}
		res.Synthetic, res.SyntheticSlopes = syn.Series(), syn.Slopes
	}
	cfg.Preset = withContext(cfg.Preset, slices.Max(cfg.Horizons))
	shared := cfg.sharedDir()
	prep := reproduce.PrepareConfig{Preset: cfg.Preset, Out: shared, Seed: cfg.Seed, Log: cfg.Log, Jobs: cfg.Jobs}
	for _, h := range cfg.Horizons {
		prep.Tasks, prep.MaxTurns = append(prep.Tasks, LevelTask(cfg.Task, h)), append(prep.MaxTurns, h)
	}
	cfg.Log.Info("horizon: learned study: logs, base policy and simulator for every H", "folder", shared)
	if err := reproduce.Prepare(ctx, prep); err != nil {
		return nil, fmt.Errorf("horizon: %w", err)
	}
	gaps := map[int][]reproduce.Comparison{}
	for i, h := range cfg.Horizons {
		rc := cfg.runConfig(h)
		cfg.Log.Info("horizon: learned study", "H", h, "run", rc.Out)
		rows, err := reproduce.Run(ctx, rc)
		if err != nil {
			return nil, fmt.Errorf("horizon H=%d: %w", h, err)
		}
		if gaps[h], err = reproduce.OracleGaps(rc); err != nil {
			return nil, fmt.Errorf("horizon H=%d: %w", h, err)
		}
		checks, err := runChecks(rc, h)
		if err != nil {
			return nil, err
		}
		res.Checks = append(res.Checks, checks...)
		res.Rows[h], res.Runs[h] = rows, rc.Out
		res.Oracle[h] = reward(rows, reproduce.ArmOracle)
		lo, hi := rewardCI(rows, reproduce.ArmOracle)
		res.OracleCI95 = append(res.OracleCI95, [2]float64{lo, hi})
		res.Horizons, res.Pending = cfg.Horizons[:i+1], cfg.Horizons[i+1:]
		res.fitArms(gaps)
		if err := res.write(cfg.Out); err != nil {
			return nil, err
		}
		if len(res.Pending) > 0 {
			cfg.Log.Info("horizon: learned study: result so far", "report", filepath.Join(cfg.Out, "report.md"), "pending", res.Pending)
		}
	}
	return res, nil
}

// sharedDir holds the logs, base policy and simulator every H shares.
func (cfg LearnedConfig) sharedDir() string { return filepath.Join(cfg.Out, "shared") }

// runConfig is the reproduce run of horizon h: the hH level, a turn limit
// of h (the logs', the RL rollouts' and the evaluations'), the context of
// the study's longest horizon, the shared base and simulator.
func (cfg LearnedConfig) runConfig(h int) reproduce.Config {
	p := withContext(cfg.Preset, slices.Max(cfg.Horizons))
	p.MaxTurns = h
	return reproduce.Config{Task: LevelTask(cfg.Task, h), Preset: p, Out: filepath.Join(cfg.Out, fmt.Sprintf("h%d", h)),
		Seed: cfg.Seed, Log: cfg.Log, Shared: cfg.sharedDir(), Jobs: cfg.Jobs}
}

// LevelTask is the task the study plays at horizon h for task, "mathchat"
// or "mathchat:OPTION" (":ledger", ":nocalc"): its hH level with the same
// option, "mathchat:h8:ledger".
func LevelTask(name string, h int) string {
	n, err := task.ParseName(name)
	if err != nil {
		return name // a bad name is left for Lookup to report
	}
	return n.AtLevel(fmt.Sprintf("h%d", h)).String()
}

// fitArms sets each regime's gaps over the finished horizons and fits
// their slope where at least three are positive.
func (r *LearnedResult) fitArms(gaps map[int][]reproduce.Comparison) {
	r.Arms = nil
	for i, arm := range []string{reproduce.ArmStatic, reproduce.ArmNaive, reproduce.ArmCalibrated} {
		la := LearnedArm{Arm: arm}
		var fh []int
		var fg []float64
		for _, h := range r.Horizons {
			g := gaps[h][i]
			la.H, la.Gap, la.GapCI95, la.Seeds = append(la.H, h), append(la.Gap, g.Difference), append(la.GapCI95, g.CI95), append(la.Seeds, g.Seeds)
			if c, ok := findCheck(r.Checks, h, arm, Decodings[0]); ok {
				la.Bound = append(la.Bound, c.Bound)
			}
			if g.Difference > 0 {
				fh, fg = append(fh, h), append(fg, g.Difference)
			}
		}
		if len(fh) >= 3 {
			if f, err := FitLogLog(fh, fg); err == nil {
				la.Fit = &f
			} else {
				la.Note = err.Error()
			}
		} else {
			la.Note = fmt.Sprintf("only %d of %d horizons have a positive gap: no slope", len(fh), len(r.Horizons))
		}
		r.Arms = append(r.Arms, la)
	}
}

// withContext is p with models that read a whole conversation of the hH
// level: the quick preset's 512 tokens hold mathchat's h8 (the careful
// agent's conversations with the human proxy, through the quick
// tokenizer: the policy's view median 319 tokens, p90 358; the
// simulator's, with the oracle context, 420 and 460) but not h16 (602 and
// 666; 801 and 864), so past H = 8 the study's models read 1024.
func withContext(p preset.Preset, h int) preset.Preset {
	if h > 8 {
		p.Policy.Context = max(p.Policy.Context, 1024)
		p.Sim.Context = max(p.Sim.Context, 1024)
	}
	return p
}

// row is an arm's row among rows (false when it has none).
func row(rows []reproduce.Row, arm string) (reproduce.Row, bool) {
	for _, r := range rows {
		if r.Arm == arm {
			return r, true
		}
	}
	return reproduce.Row{}, false
}

// rewardCI is the 95% interval of an arm's held-out reward.
func rewardCI(rows []reproduce.Row, arm string) (lo, hi float64) {
	r, _ := row(rows, arm)
	if r.BLEU != nil {
		return r.CI95[0] / 100, r.CI95[1] / 100
	}
	return r.CI95[0], r.CI95[1]
}

// reward is an arm's held-out reward (success rate, or BLEU/100).
func reward(rows []reproduce.Row, arm string) float64 {
	r, _ := row(rows, arm)
	return r.RealReward
}

func (r *LearnedResult) write(dir string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, "result.json"), append(data, '\n')); err != nil {
		return err
	}
	var series []Series
	for _, a := range r.Arms {
		s := Series{Name: a.Arm}
		for i, h := range a.H {
			if a.Gap[i] > 0 {
				s.H, s.Gap = append(s.H, h), append(s.Gap, a.Gap[i])
			}
		}
		if len(s.H) > 0 {
			series = append(series, s)
		}
	}
	var panels []*plot.Plot
	if len(series) > 0 {
		for _, s := range r.Synthetic {
			series = append(series, Series{Name: "synthetic " + s.Name, H: s.H, Gap: s.Gap, Dashed: true})
		}
		if p, err := GapPlot("gap to the oracle-interactive arm (held-out, human proxy)", series); err == nil {
			panels = append(panels, p)
		}
	}
	if len(r.Checks) > 0 {
		p, err := BoundPlot(r.Checks, Decodings[0])
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	plotted := len(panels) > 0
	if plotted {
		if err := figure.Write(filepath.Join(dir, LearnedPlotName), panels...); err != nil {
			return err
		}
	}
	return atomicfile.Write(filepath.Join(dir, "report.md"), func(w io.Writer) error { return r.markdown(w, plotted) })
}

func (r *LearnedResult) markdown(w io.Writer, plotted bool) error {
	fmt.Fprintf(w, "# Horizon study (learned models): %s, preset %s, %d RL iterations per arm and seed\n\n", r.Task, r.Preset, r.Iterations)
	if len(r.Pending) > 0 {
		fmt.Fprintf(w, "**The result so far**: H = %s not yet run. The same command goes on from here (every finished stage is kept).\n\n", joinInts(r.Pending))
	}
	fmt.Fprintln(w, "One base policy and one calibrated simulator were trained on logs mixing every horizon (shared/); at each H every arm was trained from that base on the task's hH level (problems that withhold about 3H/4 numbers, so that they need about H turns), with a turn limit of H, once per RL seed, and evaluated against the human proxy on the same held-out problems with the same user seeds. The gap is the oracle-interactive arm's held-out reward minus the arm's, paired by problem, averaged over RL seeds, with a bootstrap 95% interval over problems within seeds.")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| H | oracle (95% CI) |")
	for _, a := range r.Arms {
		fmt.Fprintf(w, " %s gap (95%% CI) |", a.Arm)
	}
	fmt.Fprint(w, "\n| --- | --- |")
	for range r.Arms {
		fmt.Fprint(w, " --- |")
	}
	fmt.Fprintln(w)
	for i, h := range r.Horizons {
		fmt.Fprintf(w, "| %d | %.3f", h, r.Oracle[h])
		if i < len(r.OracleCI95) {
			fmt.Fprintf(w, " [%.3f, %.3f]", r.OracleCI95[i][0], r.OracleCI95[i][1])
		}
		fmt.Fprint(w, " |")
		for _, a := range r.Arms {
			fmt.Fprintf(w, " %+.3f [%+.3f, %+.3f] |", a.Gap[i], a.GapCI95[i][0], a.GapCI95[i][1])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Rewards lie in [0, 1], so no gap can exceed the oracle arm's reward: an arm whose reward is near 0 at some H can only follow the oracle's line past it. Each arm's held-out reward against the human proxy (sampled; an RL arm's is the mean over its seeds) and its mean turns per conversation:")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| H |")
	first := r.Rows[r.Horizons[0]]
	for _, a := range first {
		fmt.Fprintf(w, " %s |", a.Arm)
	}
	fmt.Fprint(w, "\n| --- |")
	for range first {
		fmt.Fprint(w, " --- |")
	}
	fmt.Fprintln(w)
	for _, h := range r.Horizons {
		fmt.Fprintf(w, "| %d |", h)
		for _, a := range first {
			if x, ok := row(r.Rows[h], a.Arm); ok {
				fmt.Fprintf(w, " %.3f (%.2f turns) |", x.RealReward, x.Turns)
			} else {
				fmt.Fprint(w, " – |")
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Slopes of log(gap) on log(H), 95% CI, over the horizons with a positive gap (the paper predicts about 2 for static and naive training, about 1 for calibrated):")
	fmt.Fprintln(w)
	for _, a := range r.Arms {
		if a.Fit != nil {
			fmt.Fprintf(w, "- %s: %s\n", a.Arm, ci(*a.Fit))
		} else {
			fmt.Fprintf(w, "- %s: %s\n", a.Arm, a.Note)
		}
	}
	if len(r.Synthetic) > 0 {
		sl := r.SyntheticSlopes
		fmt.Fprintf(w, "- the synthetic study at the same horizons (dashed on the plot): static %s, interactive %s, simulator %s\n", ci(sl.Static), ci(sl.Interactive), ci(sl.Simulator))
	}
	fmt.Fprintln(w)
	writeBoundSection(w, r.Checks, false)
	if plotted {
		fmt.Fprintf(w, "![gaps](%s.png)\n", LearnedPlotName)
	}
	return nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
