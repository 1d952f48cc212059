package horizon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/figure"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/reproduce"
)

// LearnedConfig sets the learned-model study. One base policy and one
// calibrated simulator are trained on logs that mix every horizon (the
// preset's log budget shared out evenly), so that between horizons only H
// changes; then, per horizon H, every arm is trained from that base with
// the preset's RL budget on the task's "hH" level (grown to need about H
// turns) with a turn limit of H, and evaluated against the human proxy.
// Each arm is trained with one RL seed per H (whatever Preset.RLSeeds
// says): the study's question is the trend over H, and its budget is that
// of one seed.
type LearnedConfig struct {
	Task     string
	Preset   preset.Preset
	Horizons []int
	Seed     uint64
	// Out holds one reproduce run folder per horizon (h2/, h4/, …) and the
	// study's report.md, result.json and plot.
	Out string
	Log *slog.Logger
}

// LearnedPlotName is the base name of the learned study's figure.
const LearnedPlotName = "horizon_learned"

// LearnedArm is one regime's gap to the oracle-interactive arm per H.
type LearnedArm struct {
	Arm string    `json:"arm"`
	H   []int     `json:"h"`
	Gap []float64 `json:"gap"`
	// GapCI95 is each gap's 95% interval, from the two arms' own held-out
	// intervals (diffCI).
	GapCI95 [][2]float64 `json:"gap_ci95"`
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
	Iterations int                     `json:"iterations"`
	Horizons   []int                   `json:"horizons"`
	Rows       map[int][]reproduce.Row `json:"rows"`
	Arms       []LearnedArm            `json:"arms"`
	Oracle     map[int]float64         `json:"oracle"`
	Runs       map[int]string          `json:"runs"`
}

// RunLearned trains and evaluates every arm at every horizon (each run
// resumable on its own), then fits each regime's gap to the oracle arm on
// log-log axes. A gap is the oracle arm's held-out reward minus the arm's;
// gaps that are not positive cannot be fitted and are reported as such.
func RunLearned(ctx context.Context, cfg LearnedConfig) (*LearnedResult, error) {
	if len(cfg.Horizons) < 3 {
		return nil, errors.New("horizon: the learned study needs at least three horizons")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	base, _, _ := strings.Cut(cfg.Task, ":")
	res := &LearnedResult{Task: base, Preset: cfg.Preset.Name, Iterations: cfg.Preset.RL.Iterations, Horizons: cfg.Horizons,
		Rows: map[int][]reproduce.Row{}, Oracle: map[int]float64{}, Runs: map[int]string{}}
	cfg.Preset = withContext(cfg.Preset, slices.Max(cfg.Horizons))
	shared := filepath.Join(cfg.Out, "shared")
	prep := reproduce.PrepareConfig{Preset: cfg.Preset, Out: shared, Seed: cfg.Seed, Log: cfg.Log}
	for _, h := range cfg.Horizons {
		prep.Tasks, prep.MaxTurns = append(prep.Tasks, fmt.Sprintf("%s:h%d", base, h)), append(prep.MaxTurns, h)
	}
	cfg.Log.Info("horizon: learned study: logs, base policy and simulator for every H", "folder", shared)
	if err := reproduce.Prepare(ctx, prep); err != nil {
		return nil, fmt.Errorf("horizon: %w", err)
	}
	for _, h := range cfg.Horizons {
		p := cfg.Preset
		p.MaxTurns = h // the logs', the RL rollouts' and the evaluations' turn limit
		p.RLSeeds = 1
		dir := filepath.Join(cfg.Out, fmt.Sprintf("h%d", h))
		cfg.Log.Info("horizon: learned study", "H", h, "run", dir)
		rows, err := reproduce.Run(ctx, reproduce.Config{Task: fmt.Sprintf("%s:h%d", base, h), Preset: p, Out: dir, Seed: cfg.Seed, Log: cfg.Log, Shared: shared})
		if err != nil {
			return nil, fmt.Errorf("horizon H=%d: %w", h, err)
		}
		res.Rows[h], res.Runs[h] = rows, dir
		res.Oracle[h] = reward(rows, reproduce.ArmOracle)
	}
	for _, arm := range []string{reproduce.ArmStatic, reproduce.ArmNaive, reproduce.ArmCalibrated} {
		la := LearnedArm{Arm: arm}
		var fh []int
		var fg []float64
		for _, h := range cfg.Horizons {
			gap := res.Oracle[h] - reward(res.Rows[h], arm)
			la.H, la.Gap = append(la.H, h), append(la.Gap, gap)
			oLo, oHi := rewardCI(res.Rows[h], reproduce.ArmOracle)
			aLo, aHi := rewardCI(res.Rows[h], arm)
			lo, hi := diffCI(res.Oracle[h], oLo, oHi, reward(res.Rows[h], arm), aLo, aHi)
			la.GapCI95 = append(la.GapCI95, [2]float64{lo, hi})
			if gap > 0 {
				fh, fg = append(fh, h), append(fg, gap)
			}
		}
		if len(fh) >= 3 {
			if f, err := FitLogLog(fh, fg); err == nil {
				la.Fit = &f
			} else {
				la.Note = err.Error()
			}
		} else {
			la.Note = fmt.Sprintf("only %d of %d horizons have a positive gap: no slope", len(fh), len(cfg.Horizons))
		}
		res.Arms = append(res.Arms, la)
	}
	return res, res.write(cfg.Out)
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

// rewardCI is the 95% interval of an arm's held-out reward.
func rewardCI(rows []reproduce.Row, arm string) (lo, hi float64) {
	for _, r := range rows {
		if r.Arm == arm {
			if r.BLEU != nil {
				return r.CI95[0] / 100, r.CI95[1] / 100
			}
			return r.CI95[0], r.CI95[1]
		}
	}
	return 0, 0
}

// diffCI is the 95% interval of a − b from the two independent estimates'
// own intervals: the MOVER method (Zou & Donner 2008), which with Wilson
// intervals is Newcombe's hybrid score interval for a difference of
// proportions.
func diffCI(a, aLo, aHi, b, bLo, bHi float64) (lo, hi float64) {
	d := a - b
	return d - math.Hypot(a-aLo, bHi-b), d + math.Hypot(aHi-a, b-bLo)
}

// reward is an arm's held-out reward (success rate, or BLEU/100).
func reward(rows []reproduce.Row, arm string) float64 {
	for _, r := range rows {
		if r.Arm == arm {
			return r.RealReward
		}
	}
	return 0
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
	plotted := false
	if len(series) > 0 {
		if p, err := GapPlot("gap to the oracle-interactive arm (held-out, human proxy)", series); err == nil {
			if err := figure.Write(filepath.Join(dir, LearnedPlotName), p); err != nil {
				return err
			}
			plotted = true
		}
	}
	return atomicfile.Write(filepath.Join(dir, "report.md"), func(w io.Writer) error { return r.markdown(w, plotted) })
}

func (r *LearnedResult) markdown(w io.Writer, plotted bool) error {
	fmt.Fprintf(w, "# Horizon study (learned models): %s, preset %s, %d RL iterations per arm\n\n", r.Task, r.Preset, r.Iterations)
	fmt.Fprintln(w, "One base policy and one calibrated simulator were trained on logs mixing every horizon (shared/); at each H every arm was trained from that base on the task grown to need about H turns, with a turn limit of H, and evaluated against the human proxy on held-out instances. The gap is the oracle-interactive arm's held-out reward minus the arm's.")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| H | oracle |")
	for _, a := range r.Arms {
		fmt.Fprintf(w, " %s gap (95%% CI) |", a.Arm)
	}
	fmt.Fprint(w, "\n| --- | --- |")
	for range r.Arms {
		fmt.Fprint(w, " --- |")
	}
	fmt.Fprintln(w)
	for i, h := range r.Horizons {
		fmt.Fprintf(w, "| %d | %.3f |", h, r.Oracle[h])
		for _, a := range r.Arms {
			fmt.Fprintf(w, " %+.3f [%+.3f, %+.3f] |", a.Gap[i], a.GapCI95[i][0], a.GapCI95[i][1])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	for _, a := range r.Arms {
		if a.Fit != nil {
			fmt.Fprintf(w, "- %s: slope of log(gap) on log(H) %s (95%% CI)\n", a.Arm, ci(*a.Fit))
		} else {
			fmt.Fprintf(w, "- %s: %s\n", a.Arm, a.Note)
		}
	}
	if plotted {
		fmt.Fprintf(w, "\n![gaps](%s.png)\n", LearnedPlotName)
	}
	return nil
}
