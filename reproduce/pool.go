package reproduce

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/metric"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/task"
)

// The verdict over whole pipelines. One reproduce run is one pipeline: its
// logs, tokenizer, base and simulator are trained once, so its intervals
// cover the problems and not the training runs. Several runs with other
// top-level seeds are independent pipelines; Pool reads them, finished,
// and states every claim pooled over them with a two-level bootstrap
// (pipelines, then problems within each: metric.TwoLevelBootstrap),
// Bonferroni-corrected over the verdict's claims, beside each pipeline's
// own verdict.

// PooledClaim is one claim over several pipelines.
type PooledClaim struct {
	Claim string `json:"claim"`
	Paper string `json:"paper"`
	// Difference is the mean over pipelines of each one's paired
	// difference (itself averaged over its RL seeds and problems).
	Difference float64 `json:"difference"`
	// CI95 is the two-level bootstrap's 95% interval; CIAdjusted the same
	// bootstrap at the Bonferroni level for Claims claims (Level).
	CI95       [2]float64 `json:"ci95"`
	CIAdjusted [2]float64 `json:"ci_adjusted"`
	Level      float64    `json:"level"`
	// Holds is whether CIAdjusted excludes 0 above.
	Holds bool `json:"holds"`
	// Pipelines is each pipeline's difference and PipelineHolds its own
	// verdict (its problem-level 95% interval above 0), in Seeds' order.
	Pipelines     []float64 `json:"pipelines"`
	PipelineHolds []bool    `json:"pipeline_holds"`
}

// PooledArm is one arm's score over the pipelines.
type PooledArm struct {
	Arm string `json:"arm"`
	// Value is the mean over pipelines of the arm's held-out score (the
	// mean over its RL seeds and problems); Pipelines each pipeline's.
	Value     float64   `json:"value"`
	Pipelines []float64 `json:"pipelines"`
}

// Pooled is the verdict of one decoding over several pipelines.
type Pooled struct {
	Decoding string        `json:"decoding"`
	Seeds    []uint64      `json:"seeds"`
	Arms     []PooledArm   `json:"arms"`
	Claims   []PooledClaim `json:"claims"`
}

// Pool reads the finished runs cfgs describe (one pipeline each, the
// same task and preset, other seeds) and returns the pooled verdict of
// each decoding. It trains nothing: a run whose evaluations are missing is
// an error naming it.
func Pool(cfgs []Config) ([]Pooled, error) {
	if len(cfgs) == 0 {
		return nil, fmt.Errorf("reproduce pool: no runs")
	}
	runs, err := openRuns(cfgs)
	defer closeRuns(runs)
	if err != nil {
		return nil, err
	}
	var out []Pooled
	for _, d := range runs[0].decodings() {
		p, err := pool(runs, d)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// openRuns opens the runs cfgs describe, which must share the task; the
// caller closes those opened, even on an error.
func openRuns(cfgs []Config) ([]*run, error) {
	var runs []*run
	for _, cfg := range cfgs {
		r, err := openRun(cfg)
		if err != nil {
			return runs, err
		}
		runs = append(runs, r)
		if r.cfg.Task != runs[0].cfg.Task {
			return runs, fmt.Errorf("reproduce pool: %s plays %s, %s plays %s: pipelines must share the task", cfg.Out, r.cfg.Task, runs[0].cfg.Out, runs[0].cfg.Task)
		}
	}
	return runs, nil
}

func closeRuns(runs []*run) {
	for _, r := range runs {
		r.f.Close()
	}
}

func pool(runs []*run, d decoding) (Pooled, error) {
	evals := make([]map[string][]evaluation, len(runs))
	for i, r := range runs {
		e, err := r.loadEvals(d)
		if err != nil {
			return Pooled{}, fmt.Errorf("reproduce pool: %s: %w", r.cfg.Out, err)
		}
		evals[i] = e
	}
	return poolEvals(runs, evals, d)
}

// poolEvals pools the pipelines' evaluations under decoding d.
func poolEvals(runs []*run, evals []map[string][]evaluation, d decoding) (Pooled, error) {
	p := Pooled{Decoding: d.name}
	for _, r := range runs {
		p.Seeds = append(p.Seeds, r.cfg.Seed)
	}
	family := task.Family(runs[0].cfg.Task)
	for _, arm := range runs[0].arms() {
		pa := PooledArm{Arm: arm}
		for i := range runs {
			var s float64
			for k := range evals[i][arm] {
				s += mean(evals[i][arm][k].scores(runs[i].measure()))
			}
			v := s / float64(len(evals[i][arm]))
			pa.Pipelines = append(pa.Pipelines, v)
			pa.Value += v / float64(len(runs))
		}
		p.Arms = append(p.Arms, pa)
	}
	var todo [][2]string
	for _, c := range claims {
		if len(evals[0][c[0]]) > 0 && len(evals[0][c[1]]) > 0 {
			todo = append(todo, c)
		}
	}
	level := metric.Bonferroni(0.95, len(todo))
	for _, c := range todo {
		better, worse := c[0], c[1]
		pc, err := poolClaim(runs, evals, better, worse, level)
		if err != nil {
			return Pooled{}, err
		}
		pc.Paper = claimPaper(family, better, worse)
		p.Claims = append(p.Claims, pc)
	}
	return p, nil
}

// poolClaim pools better − worse over the pipelines: each pipeline's
// paired difference per problem, averaged over its RL seeds, into the
// two-level bootstrap at 95% and at level (the claim's corrected level),
// beside each pipeline's own difference and verdict.
func poolClaim(runs []*run, evals []map[string][]evaluation, better, worse string, level float64) (PooledClaim, error) {
	pc := PooledClaim{Claim: better + " > " + worse, Level: level}
	var diffs [][]float64
	for i, r := range runs {
		n := r.seeds()
		dp := make([]float64, len(evals[i][better][0].eps))
		for k := range n {
			a, b := seedScores(runs[i].measure(), evals[i][better], k), seedScores(runs[i].measure(), evals[i][worse], k)
			for j := range dp {
				dp[j] += (a[j] - b[j]) / float64(n)
			}
		}
		diffs = append(diffs, dp)
		one := Comparison{Claim: pc.Claim}
		if err := r.pairedDifference(&one, evals[i][better], evals[i][worse]); err != nil {
			return PooledClaim{}, err
		}
		pc.Pipelines, pc.PipelineHolds = append(pc.Pipelines, one.Difference), append(pc.PipelineHolds, one.Holds)
	}
	var err error
	if pc.Difference, pc.CI95[0], pc.CI95[1], err = metric.TwoLevelBootstrap(diffs, bootstrapResamples, 0.95, bootstrapSeed); err != nil {
		return PooledClaim{}, fmt.Errorf("reproduce pool: %s: %w", pc.Claim, err)
	}
	if _, pc.CIAdjusted[0], pc.CIAdjusted[1], err = metric.TwoLevelBootstrap(diffs, bootstrapResamples, level, bootstrapSeed); err != nil {
		return PooledClaim{}, fmt.Errorf("reproduce pool: %s: %w", pc.Claim, err)
	}
	pc.Holds = pc.CIAdjusted[0] > 0
	return pc, nil
}

// PoolOracleGaps reads the finished runs cfgs describe (one pipeline each,
// the same task) and returns each of arms' gap to the oracle-interactive
// arm under the named decoding, pooled over the pipelines as Pool pools a
// claim (the mean of each pipeline's paired gap, its two-level bootstrap
// 95% interval, each pipeline's gap), uncorrected (Level 0.95), and in
// reward units as OracleGaps: the horizon study's gaps over its seeds.
func PoolOracleGaps(cfgs []Config, decodingName string, arms []string) ([]PooledClaim, error) {
	d, err := decodingNamed(decodingName)
	if err != nil {
		return nil, err
	}
	runs, err := openRuns(cfgs)
	defer closeRuns(runs)
	if err != nil {
		return nil, err
	}
	evals := make([]map[string][]evaluation, len(runs))
	for i, r := range runs {
		if evals[i], err = r.loadEvals(d); err != nil {
			return nil, fmt.Errorf("reproduce pool: %s: %w", r.cfg.Out, err)
		}
	}
	var out []PooledClaim
	for _, arm := range arms {
		pc, err := poolClaim(runs, evals, ArmOracle, arm, 0.95)
		if err != nil {
			return nil, err
		}
		pc.Paper = "the gap to the oracle policy"
		sc := runs[0].measure().Scale
		toReward(sc, &pc.Difference, &pc.CI95[0], &pc.CI95[1], &pc.CIAdjusted[0], &pc.CIAdjusted[1])
		toReward(sc, pointers(pc.Pipelines)...)
		out = append(out, pc)
	}
	return out, nil
}

// WritePooled writes the pooled verdicts into dir: pooled.json and
// pooled.md (a table per decoding: every claim pooled, its corrected
// interval, and each pipeline's difference and verdict).
func WritePooled(dir string, pooled []Pooled) error {
	f, err := runfolder.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.WriteJSON("pooled.json", pooled); err != nil {
		return err
	}
	return atomicfile.Write(f.Path("pooled.md"), func(w io.Writer) error { return pooledMarkdown(w, pooled) })
}

func pooledMarkdown(w io.Writer, pooled []Pooled) error {
	if len(pooled) == 0 {
		return nil
	}
	seeds := make([]string, len(pooled[0].Seeds))
	for i, s := range pooled[0].Seeds {
		seeds[i] = fmt.Sprint(s)
	}
	fmt.Fprintf(w, "# The verdict over %d pipelines (seeds %s)\n\n", len(seeds), strings.Join(seeds, ", "))
	fmt.Fprintln(w, "Each pipeline is a whole reproduce run with its own logs, tokenizer, base, simulator and RL arms. A pooled difference is the mean over pipelines of each one's paired difference (itself averaged over its RL seeds and held-out problems). Its interval is a two-level percentile bootstrap: the pipelines drawn with replacement, then each drawn pipeline's problems with replacement (2000 resamples, seed 1), so it covers the variation between training runs as well as between problems. A claim holds when its interval, Bonferroni-corrected for the number of claims in the table, excludes 0 above; the uncorrected 95% interval stands beside it. Each pipeline's own verdict (its problem-level 95% interval, as its report states it) follows.")
	for _, p := range pooled {
		fmt.Fprintf(w, "\n## %s\n\n", p.Decoding)
		fmt.Fprintf(w, "| arm | pooled | %s |\n| --- | --- |%s\n", strings.Join(prefixed("seed ", seeds), " | "), repeatCell(len(seeds)))
		for _, a := range p.Arms {
			fmt.Fprintf(w, "| %s | %.3f |", a.Arm, a.Value)
			for _, v := range a.Pipelines {
				fmt.Fprintf(w, " %.3f |", v)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
		level := 0.0
		if len(p.Claims) > 0 {
			level = p.Claims[0].Level
		}
		fmt.Fprintf(w, "| claim | paper | difference | 95%% interval | %.2f%% interval (Bonferroni, %d claims) | holds? | %s |\n", 100*level, len(p.Claims), strings.Join(prefixed("seed ", seeds), " | "))
		fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- |%s\n", repeatCell(len(seeds)))
		for _, c := range p.Claims {
			verdict := "no"
			switch {
			case c.Holds:
				verdict = "yes"
			case c.CIAdjusted[1] < 0:
				verdict = "no: reversed"
			}
			fmt.Fprintf(w, "| %s | %s | %+.3f | [%+.3f, %+.3f] | [%+.3f, %+.3f] | %s |", c.Claim, c.Paper, c.Difference, c.CI95[0], c.CI95[1], c.CIAdjusted[0], c.CIAdjusted[1], verdict)
			for i, v := range c.Pipelines {
				mark := "no"
				if c.PipelineHolds[i] {
					mark = "yes"
				}
				fmt.Fprintf(w, " %+.3f (%s) |", v, mark)
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

func prefixed(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}

// RunPipelines runs (or resumes) one whole pipeline per seed, each in its
// own folder (outOf(seed)), one after another, each with cfg.Jobs stages
// side by side, then pools them into dir. A pipeline already finished is
// read, not re-run; an interrupted one resumes where it stopped.
func RunPipelines(ctx context.Context, cfg Config, seeds []uint64, outOf func(uint64) string, dir string) ([]Pooled, error) {
	if len(seeds) < 2 {
		return nil, fmt.Errorf("reproduce: pooling wants at least 2 pipeline seeds, got %d", len(seeds))
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	var cfgs []Config
	for _, s := range seeds {
		c := cfg
		c.Seed, c.Out = s, outOf(s)
		c.Log = cfg.Log.With("pipeline", s)
		if _, err := Run(ctx, c); err != nil {
			return nil, fmt.Errorf("reproduce: pipeline seed %d: %w", s, err)
		}
		cfgs = append(cfgs, c)
	}
	pooled, err := Pool(cfgs)
	if err != nil {
		return nil, err
	}
	return pooled, WritePooled(dir, pooled)
}
