package horizon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/figure"
	"github.com/calibrl/calibrl/metric"
	"github.com/calibrl/calibrl/reproduce"
)

// One study trains its logs, base policy and simulator once (shared/), so
// its intervals cover the problems and the RL seeds but not the training
// of what every arm starts from. RunLearnedSeeds runs the whole study once
// per top-level seed and pools the gaps over them as reproduce pools its
// pipelines (a two-level bootstrap: seeds, then problems).

// PooledLearned is the learned study pooled over top-level seeds.
type PooledLearned struct {
	Task       string   `json:"task"`
	Preset     string   `json:"preset"`
	Iterations int      `json:"iterations"`
	Seeds      []uint64 `json:"seeds"`
	Horizons   []int    `json:"horizons"`
	// Runs are the studies' folders, in Seeds' order.
	Runs []string `json:"runs"`
	// Checks pool each arm's gap per H and decoding: the mean over seeds
	// of each study's gap, its two-level bootstrap 95% interval, each
	// seed's gap (Seeds) and bound (BoundSeeds, each the mean over that
	// study's RL seeds), the bound averaged over seeds, and the oracle's
	// lead averaged over seeds.
	Checks []BoundCheck `json:"bound_checks"`
}

// SeedDir is the folder of the study with top-level seed s inside out.
func SeedDir(out string, s uint64) string { return filepath.Join(out, fmt.Sprintf("seed-%d", s)) }

// RunLearnedSeeds runs (or resumes) the whole study once per seed, each in
// its own folder (SeedDir: the same layout as one study's), one after
// another, then writes the pooled report.md, result.json and plot into
// cfg.Out. Each seed's folder resumes on its own, so a call with other
// seeds goes on with the folders of those it shares and pools the seeds it
// is given. cfg.Seed is not used.
func RunLearnedSeeds(ctx context.Context, cfg LearnedConfig, seeds []uint64) (*PooledLearned, error) {
	if len(seeds) < 2 {
		return nil, fmt.Errorf("horizon: pooling wants at least 2 seeds, got %d", len(seeds))
	}
	// A single-seed study's report.md and result.json sit where the pooled
	// ones would go: refuse rather than overwrite what it measured.
	if _, err := os.Stat(cfg.sharedDir()); err == nil {
		return nil, fmt.Errorf("horizon: %s holds a single-seed study (%s): give --seeds a fresh --out", cfg.Out, cfg.sharedDir())
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	pooled := &PooledLearned{Task: cfg.Task, Preset: cfg.Preset.Name, Iterations: cfg.Preset.RL.Iterations, Seeds: seeds, Horizons: cfg.Horizons}
	var studies []*LearnedResult
	var cfgs []LearnedConfig
	for _, s := range seeds {
		c := cfg
		c.Seed, c.Out, c.Log = s, SeedDir(cfg.Out, s), cfg.Log.With("seed", s)
		c.Log.Info("horizon: learned study for one seed", "folder", c.Out)
		res, err := RunLearned(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("horizon: seed %d: %w", s, err)
		}
		studies, cfgs = append(studies, res), append(cfgs, c)
		pooled.Runs = append(pooled.Runs, c.Out)
	}
	checks, err := poolChecks(cfgs, studies)
	if err != nil {
		return nil, err
	}
	pooled.Checks = checks
	if err := pooled.write(cfg.Out); err != nil {
		return nil, err
	}
	cfg.Log.Info("horizon: learned study pooled over seeds", "report", filepath.Join(cfg.Out, "report.md"), "seeds", seeds)
	return pooled, nil
}

// poolChecks pools every H's gaps over the studies (reproduce's two-level
// bootstrap) beside each study's bound.
func poolChecks(cfgs []LearnedConfig, studies []*LearnedResult) ([]BoundCheck, error) {
	var out []BoundCheck
	for _, h := range cfgs[0].Horizons {
		var rcs []reproduce.Config
		for _, c := range cfgs {
			rcs = append(rcs, c.runConfig(h))
		}
		for _, dec := range Decodings {
			gaps, err := reproduce.PoolOracleGaps(rcs, dec, checkArms)
			if err != nil {
				return nil, fmt.Errorf("horizon H=%d %s: %w", h, dec, err)
			}
			lead := gaps[0].Difference
			for j, g := range gaps[1:] {
				c, err := pooledCheck(studies, h, checkArms[j+1], dec)
				if err != nil {
					return nil, err
				}
				c.Gap, c.GapCI95, c.Seeds, c.Lead = g.Difference, g.CI95, g.Pipelines, lead
				out = append(out, newBoundCheck(c))
			}
		}
	}
	return out, nil
}

// pooledCheck is arm's check at h under decoding with each study's bound.
func pooledCheck(studies []*LearnedResult, h int, arm, decoding string) (BoundCheck, error) {
	c := BoundCheck{H: h, Arm: arm, Decoding: decoding}
	var perHistory []float64
	for i, res := range studies {
		one, ok := findCheck(res.Checks, h, arm, decoding)
		if !ok {
			return BoundCheck{}, fmt.Errorf("horizon: study %d has no %s check of %s at H=%d", i, decoding, arm, h)
		}
		c.BoundSeeds, c.Carried = append(c.BoundSeeds, one.Bound), max(c.Carried, one.Carried)
		if one.PerHistoryBound != nil {
			perHistory = append(perHistory, *one.PerHistoryBound)
		}
	}
	if len(perHistory) == len(studies) {
		b := metric.Mean(perHistory)
		c.PerHistoryBound = &b
	}
	return c, nil
}

func (p *PooledLearned) write(dir string) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, "result.json"), append(data, '\n')); err != nil {
		return fmt.Errorf("horizon: %w", err)
	}
	bp, err := BoundPlot(p.Checks, Decodings[0])
	if err != nil {
		return err
	}
	if err := figure.Write(filepath.Join(dir, LearnedPlotName), bp); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, "report.md"), p.markdown)
}

func (p *PooledLearned) markdown(w io.Writer) error {
	seeds := make([]string, len(p.Seeds))
	for i, s := range p.Seeds {
		seeds[i] = fmt.Sprint(s)
	}
	fmt.Fprintf(w, "# Horizon study (learned models) over %d seeds: %s, preset %s, %d RL iterations per arm and seed\n\n", len(p.Seeds), p.Task, p.Preset, p.Iterations)
	fmt.Fprintf(w, "The whole study ran once per top-level seed (%s), each with its own logs, base policy and simulator (seed-S/shared/) and its own arms at every H (seed-S/hH/); each seed's report is seed-S/report.md. ", strings.Join(seeds, ", "))
	fmt.Fprintln(w, "A pooled gap is the mean over seeds of each study's gap to the oracle-interactive arm (itself paired by problem and averaged over its RL seeds); its interval is a two-level percentile bootstrap, the seeds drawn with replacement, then each drawn seed's problems (reproduce's pooled verdict), so it covers the training of the base and simulator as well as the problems. The per-seed columns give each seed's gap and its bound (the mean over its RL seeds); the bound column is their mean.")
	fmt.Fprintln(w)
	writeBoundSection(w, p.Checks, true)
	fmt.Fprintf(w, "![gaps and bounds](%s.png)\n", LearnedPlotName)
	return nil
}
