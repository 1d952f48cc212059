package reproduce

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"strings"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/metric"
	"github.com/calibrl/calibrl/progress"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/task"
)

// The verdict over whole pipelines. One reproduce run is one pipeline: its
// logs, tokenizer, base and simulator are trained once, so its intervals
// cover the problems and not the training runs. Several runs with other
// top-level seeds are independent pipelines; Pool reads them, finished,
// and states every claim pooled over them with a random-effects interval
// whose unit is the pipeline (metric.PipelineInterval: Student's t on
// pipelines − 1 degrees of freedom, plus the covariance the pipelines'
// shared test problems induce), Bonferroni-corrected over every claim the
// verdict reports (all its decodings'), beside each pipeline's own
// verdict. The former interval, the two-level bootstrap (pipelines, then
// problems within each: metric.TwoLevelBootstrap), stands beside it for
// comparison: with three pipelines and a between-pipeline spread of 0.04
// it misses a true difference of 0 in about 15% of studies at 95%
// (metric's TestFalseHold).

// PooledClaim is one claim over several pipelines.
type PooledClaim struct {
	Claim string `json:"claim"`
	Paper string `json:"paper"`
	// Difference is the mean over pipelines of each one's paired
	// difference (itself averaged over its RL seeds and problems).
	Difference float64 `json:"difference"`
	// CI95 is the random-effects interval at 95% (PoolOracleGaps: the
	// two-level bootstrap's, see there); CIAdjusted the same at the
	// Bonferroni level for every claim reported (Level).
	CI95       [2]float64 `json:"ci95"`
	CIAdjusted [2]float64 `json:"ci_adjusted"`
	Level      float64    `json:"level"`
	// Holds is whether CIAdjusted excludes 0 above.
	Holds bool `json:"holds"`
	// Tau is the estimated spread of the difference between pipelines,
	// SE the pooled difference's standard error, Shared the part of its
	// variance the shared problems make (metric.PipelineEstimate).
	Tau    float64 `json:"tau"`
	SE     float64 `json:"se"`
	Shared float64 `json:"shared"`
	// Bootstrap95 and BootstrapAdjusted are the two-level bootstrap's
	// intervals at 95% and at Level: the former verdict, for comparison.
	Bootstrap95       [2]float64 `json:"bootstrap_ci95"`
	BootstrapAdjusted [2]float64 `json:"bootstrap_ci_adjusted"`
	// PipelinesNeeded is how many pipelines the interval at Level needs
	// to hold with 80% chance if the true difference were Difference and
	// the spread Tau (metric.PipelinesFor; 0: more than
	// maxPlannedPipelines, or no difference to find): the plan of a
	// follow-up, not a verdict.
	PipelinesNeeded int `json:"pipelines_needed"`
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
	Decoding string `json:"decoding"`
	// Reported is the number of claims the Bonferroni level covers:
	// every decoding's, since the verdict reports them all.
	Reported int           `json:"reported"`
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
	decs := runs[0].decodings()
	evals := make([][]map[string][]evaluation, len(decs))
	for j, d := range decs {
		evals[j] = make([]map[string][]evaluation, len(runs))
		for i, r := range runs {
			if evals[j][i], err = r.loadEvals(d); err != nil {
				return nil, fmt.Errorf("reproduce pool: %s: %w", r.cfg.Out, err)
			}
		}
	}
	return poolDecodings(runs, decs, evals)
}

// poolDecodings pools each decoding's evaluations (evals[j] are decs[j]'s,
// one map per pipeline), Bonferroni-corrected over the claims of every
// decoding: the verdict reports them all, so it corrects for them all.
func poolDecodings(runs []*run, decs []decoding, evals [][]map[string][]evaluation) ([]Pooled, error) {
	m := 0
	for j := range decs {
		m += len(pooledClaims(evals[j][0]))
	}
	var out []Pooled
	for j, d := range decs {
		p, err := poolEvals(runs, evals[j], d, m)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// pooledClaims are the claims whose both arms the pipeline evaluated.
func pooledClaims(evals map[string][]evaluation) [][2]string {
	var todo [][2]string
	for _, c := range claims {
		if len(evals[c[0]]) > 0 && len(evals[c[1]]) > 0 {
			todo = append(todo, c)
		}
	}
	return todo
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

// poolEvals pools the pipelines' evaluations under decoding d, its
// claims Bonferroni-corrected for reported claims in all.
func poolEvals(runs []*run, evals []map[string][]evaluation, d decoding, reported int) (Pooled, error) {
	p := Pooled{Decoding: d.name, Reported: reported}
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
	level := metric.Bonferroni(0.95, reported)
	for _, c := range pooledClaims(evals[0]) {
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
// random-effects interval and the two-level bootstrap, each at 95% and at
// level (the claim's corrected level), beside each pipeline's own
// difference and verdict. The pipelines must have played the same
// problems in the same order: their shared problems are part of the
// interval.
func poolClaim(runs []*run, evals []map[string][]evaluation, better, worse string, level float64) (PooledClaim, error) {
	pc := PooledClaim{Claim: better + " > " + worse, Level: level}
	var diffs [][]float64
	for i, r := range runs {
		if err := sameProblems(runs, evals, i, better); err != nil {
			return PooledClaim{}, err
		}
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
	re95, err := metric.PipelineInterval(diffs, 0.95)
	if err != nil {
		return PooledClaim{}, fmt.Errorf("reproduce pool: %s: %w", pc.Claim, err)
	}
	reAdj, err := metric.PipelineInterval(diffs, level)
	if err != nil {
		return PooledClaim{}, fmt.Errorf("reproduce pool: %s: %w", pc.Claim, err)
	}
	pc.Difference, pc.CI95, pc.CIAdjusted = re95.Diff, [2]float64{re95.Lo, re95.Hi}, [2]float64{reAdj.Lo, reAdj.Hi}
	pc.Tau, pc.SE, pc.Shared = re95.Tau, re95.SE, re95.Shared
	if _, pc.Bootstrap95[0], pc.Bootstrap95[1], err = metric.TwoLevelBootstrap(diffs, bootstrapResamples, 0.95, bootstrapSeed); err != nil {
		return PooledClaim{}, fmt.Errorf("reproduce pool: %s: %w", pc.Claim, err)
	}
	if _, pc.BootstrapAdjusted[0], pc.BootstrapAdjusted[1], err = metric.TwoLevelBootstrap(diffs, bootstrapResamples, level, bootstrapSeed); err != nil {
		return PooledClaim{}, fmt.Errorf("reproduce pool: %s: %w", pc.Claim, err)
	}
	pc.Holds = pc.CIAdjusted[0] > 0
	if pc.PipelinesNeeded, err = pipelinesNeeded(re95, level); err != nil {
		return PooledClaim{}, fmt.Errorf("reproduce pool: %s: %w", pc.Claim, err)
	}
	return pc, nil
}

// sameProblems checks that pipeline i's evaluation of arm played the
// first pipeline's problems in its order.
func sameProblems(runs []*run, evals []map[string][]evaluation, i int, arm string) error {
	a, b := evals[0][arm][0].eps, evals[i][arm][0].eps
	if len(a) != len(b) {
		return fmt.Errorf("reproduce pool: %s played %d problems, %s %d: pipelines must play the same problems", runs[i].cfg.Out, len(b), runs[0].cfg.Out, len(a))
	}
	for j := range a {
		if a[j].Index != b[j].Index {
			return fmt.Errorf("reproduce pool: %s's episode %d is problem %d, %s's problem %d: pipelines must play the same problems", runs[i].cfg.Out, j, b[j].Index, runs[0].cfg.Out, a[j].Index)
		}
	}
	return nil
}

// The power plan of a claim: the chance its corrected interval should
// hold (80%, the usual design target), the most pipelines it looks at,
// and its simulations (seeded: the same plan every time).
const (
	plannedPower        = 0.8
	maxPlannedPipelines = 32 // as many as --pipelines takes
	plannedSims         = 2000
)

// pipelinesNeeded is PooledClaim.PipelinesNeeded for the estimate e.
func pipelinesNeeded(e metric.PipelineEstimate, level float64) (int, error) {
	effect := math.Abs(e.Diff)
	se := math.Sqrt(e.Within)
	if effect == 0 || !(se > 0) {
		return 0, nil
	}
	return metric.PipelinesFor(effect, e.Tau, se, min(e.Shared, e.Within), level, plannedPower, maxPlannedPipelines, plannedSims, 1)
}

// PoolOracleGaps reads the finished runs cfgs describe (one pipeline each,
// the same task) and returns each of arms' gap to the oracle-interactive
// arm under the named decoding, pooled over the pipelines as Pool pools a
// claim (the mean of each pipeline's paired gap, each pipeline's gap),
// uncorrected (Level 0.95), and in reward units as OracleGaps: the
// horizon study's gaps over its seeds. Its CI95 and CIAdjusted are the
// two-level bootstrap's, as the horizon studies were reported with: with
// their two seeds the random-effects interval would take Student's t on
// 1 degree of freedom, 12.7 at 95% (its SE and Tau are given, in reward
// units).
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
		pc.CI95, pc.CIAdjusted = pc.Bootstrap95, pc.BootstrapAdjusted
		sc := runs[0].measure().Scale
		toReward(sc, &pc.Difference, &pc.CI95[0], &pc.CI95[1], &pc.CIAdjusted[0], &pc.CIAdjusted[1], &pc.Bootstrap95[0], &pc.Bootstrap95[1], &pc.BootstrapAdjusted[0], &pc.BootstrapAdjusted[1], &pc.Tau, &pc.SE)
		pc.Shared /= sc * sc
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
	k := len(seeds)
	fmt.Fprintf(w, "# The verdict over %d pipelines (seeds %s)\n\n", k, strings.Join(seeds, ", "))
	fmt.Fprintf(w, "Each pipeline is a whole reproduce run with its own logs, tokenizer, base, simulator and RL arms. A pooled difference is the mean over pipelines of each one's paired difference (itself averaged over its RL seeds and held-out problems). Its interval is a random-effects interval with the pipeline as the unit: the pipelines' differences' standard error, plus the covariance their shared test problems induce (SE² = s²/k + c), times Student's t on %d degrees of freedom (k − 1), so %d pipelines that disagree give a wide interval. A claim holds when its interval, Bonferroni-corrected over the %d claims of every decoding this verdict reports, excludes 0 above; the uncorrected 95%% interval stands beside it, and τ, the estimated spread of the difference between pipelines. The former interval, a two-level percentile bootstrap (pipelines drawn with replacement, then each one's problems; 2000 resamples, seed 1), follows for comparison: with 3 pipelines, 500 shared problems and a between-pipeline spread of 0.04 it misses a true difference of 0 several times more often than its level (metric's TestFalseHold). \"Pipelines for 80%%\" is how many pipelines the corrected interval needs to hold with 80%% chance were the true difference the pooled one and the spread τ: the size of a follow-up, not a verdict. Each pipeline's own verdict (its problem-level 95%% interval, as its report states it) follows.\n", k-1, k, pooled[0].Reported)
	for _, p := range pooled {
		fmt.Fprintf(w, "\n## %s\n\n", p.Decoding)
		fmt.Fprintf(w, "| arm | pooled | %s |\n| --- | --- |%s\n", strings.Join(prefixed("seed ", seeds), " | "), repeatCell(k))
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
		fmt.Fprintf(w, "| claim | paper | difference | τ | 95%% interval | %.2f%% interval (Bonferroni, %d claims) | holds? | pipelines for 80%% | two-level bootstrap 95%% | two-level bootstrap %.2f%% | %s |\n", 100*level, p.Reported, 100*level, strings.Join(prefixed("seed ", seeds), " | "))
		fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |%s\n", repeatCell(k))
		for _, c := range p.Claims {
			verdict := "no"
			switch {
			case c.Holds:
				verdict = "yes"
			case c.CIAdjusted[1] < 0:
				verdict = "no: reversed"
			}
			need := fmt.Sprint(c.PipelinesNeeded)
			switch {
			case c.Difference == 0:
				need = "–" // no difference to find
			case c.PipelinesNeeded == 0:
				need = fmt.Sprintf("> %d", maxPlannedPipelines)
			}
			fmt.Fprintf(w, "| %s | %s | %+.3f | %.3f | [%+.3f, %+.3f] | [%+.3f, %+.3f] | %s | %s | [%+.3f, %+.3f] | [%+.3f, %+.3f] |", c.Claim, c.Paper, c.Difference, c.Tau,
				c.CI95[0], c.CI95[1], c.CIAdjusted[0], c.CIAdjusted[1], verdict, need, c.Bootstrap95[0], c.Bootstrap95[1], c.BootstrapAdjusted[0], c.BootstrapAdjusted[1])
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

// pipelineProgress passes the i-th pipeline's progress on to prog as
// part of the whole: its stages named by its folder ("seed-S/stage" for
// the command's OUT/seed-S) and counted among
// every pipeline's (stage k of n is stage i·n + k of n·len(seeds): the
// pipelines share one plan), its plan sent for it and every pipeline
// after it, so that the run's ETA covers them all.
func pipelineProgress(prog progress.Func, seeds []uint64, outOf func(uint64) string, i int) progress.Func {
	if prog == nil {
		return nil
	}
	prefix := func(s uint64) string { return filepath.Base(outOf(s)) + "/" }
	return func(e progress.Event) {
		if e.Stage != "" {
			e.Stage = prefix(seeds[i]) + e.Stage
		}
		if e.Of > 0 {
			e.Index += i * e.Of
			e.Of *= len(seeds)
		}
		if len(e.Plan) > 0 {
			var all []progress.Planned
			for _, s := range seeds[i:] {
				for _, p := range e.Plan {
					p.Stage = prefix(s) + p.Stage
					all = append(all, p)
				}
			}
			e.Plan = all
		}
		prog(e)
	}
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
	for i, s := range seeds {
		c := cfg
		c.Seed, c.Out, c.PooledIn = s, outOf(s), dir
		c.Log = cfg.Log.With("pipeline", s)
		c.Progress = pipelineProgress(cfg.Progress, seeds, outOf, i)
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
