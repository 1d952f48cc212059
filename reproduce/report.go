package reproduce

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/figure"
	"github.com/calibrl/calibrl/metric"
	"github.com/calibrl/calibrl/runreport"
	"github.com/calibrl/calibrl/summary"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

// The rows of summary.json are defined once, in package summary, which
// the report renderer reads them with.
type (
	Row        = summary.Row
	Figures    = summary.Figures
	SeedRow    = summary.SeedRow
	Comparison = summary.Comparison
)

// The paired bootstrap of the comparisons: its resamples and seed (fixed,
// so that summary.json is deterministic).
const (
	bootstrapResamples = 2000
	bootstrapSeed      = 1
)

// claims are every ordering the paper states, "first beats second", those
// that fail here included (static > base, calibrated > oracle), then the
// checks it does not state (oracle > base: that RL works at all).
var claims = [][2]string{
	{ArmCalibrated, ArmStatic}, {ArmCalibrated, ArmNaive}, {ArmCalibrated, ArmBase},
	{ArmNaive, ArmStatic}, {ArmStatic, ArmBase}, {ArmCalibrated, ArmOracle},
	{ArmOracle, ArmBase},
	// Filtered behaviour cloning (Config.FilteredBC), when the run trains
	// it: does RL beat the cheap alternative, and does that beat the base?
	{ArmCalibrated, ArmFilteredBC}, {ArmFilteredBC, ArmBase},
	// Online recalibration (Config.Recalibrate), when the run trains it.
	{ArmRecalibrated, ArmCalibrated}, {ArmRecalibrated, ArmOracle},
}

// evaluation is one arm's (and seed's) held-out evaluation.
type evaluation struct {
	sum eval.Summary
	eps []dialog.Episode
}

// scores are the episodes' values of the task's measure m (success, or
// docedit's BLEU).
func (e evaluation) scores(m dialog.Measure) []float64 {
	out := make([]float64, len(e.eps))
	for i, ep := range e.eps {
		out[i] = m.Of(ep)
	}
	return out
}

// measure is what the run's task judges its episodes by.
func (r *run) measure() dialog.Measure { return task.MeasureOf(r.cfg.Task) }

func (r *run) loadEval(d decoding, arm string, k int) (evaluation, error) {
	file := evalFile(d, arm, k)
	var e evaluation
	if err := r.f.ReadJSON(file+".json", &e.sum); err != nil {
		return e, fmt.Errorf("reproduce report: %w", err)
	}
	eps, err := dialog.LoadEpisodes(r.f.Path(file + ".episodes.jsonl"))
	if err != nil {
		return e, fmt.Errorf("reproduce report: %w", err)
	}
	e.eps = eps
	return e, nil
}

// report reads the evaluations and training results and writes
// summary.json (sampled), summary-greedy.json, report.md and the plots.
func (r *run) report() ([]Row, error) {
	rows, err := r.summarize(sampled)
	if err != nil {
		return nil, err
	}
	greedyRows, err := r.summarize(greedy)
	if err != nil {
		return nil, err
	}
	if err := r.f.WriteJSON("summary.json", rows); err != nil {
		return nil, err
	}
	if err := r.f.WriteJSON("summary-greedy.json", greedyRows); err != nil {
		return nil, err
	}
	var bestRows []Row
	if slices.Contains(r.decodings(), best) {
		if bestRows, err = r.summarize(best); err != nil {
			return nil, err
		}
		if err := r.f.WriteJSON("summary-best.json", bestRows); err != nil {
			return nil, err
		}
	}
	recs, err := r.f.ReadMetrics()
	if err != nil {
		return nil, err
	}
	curves := curvesOf(recs)
	diag := r.diagnostics(recs)
	if err := r.plots(rows, curves); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(r.f.Path("report.md"), func(w io.Writer) error { return r.markdown(w, rows, greedyRows, bestRows, curves, diag, recs) }); err != nil {
		return nil, err
	}
	// The same run as one page for a browser, read back from the files
	// just written (so `calibrl report` re-renders it identically).
	if err := runreport.Write(r.f.Dir); err != nil {
		return nil, err
	}
	return rows, nil
}

// summarize reads every arm's evaluations under decoding d and makes the
// arms' rows with the paired comparisons.
func (r *run) summarize(d decoding) ([]Row, error) {
	evals, err := r.loadEvals(d)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, arm := range r.arms() {
		row := r.row(arm, evals[arm])
		row.Decoding = d.name
		rows = append(rows, row)
	}
	if err := r.compare(rows, evals); err != nil {
		return nil, err
	}
	return rows, nil
}

// loadEvals reads every arm's evaluations under decoding d (the base's
// one, each RL arm's per seed) and checks that they are paired.
func (r *run) loadEvals(d decoding) (map[string][]evaluation, error) {
	evals := map[string][]evaluation{}
	for _, arm := range r.arms() {
		n := r.seeds()
		if arm == ArmBase {
			n = 1
		}
		for k := range n {
			e, err := r.loadEval(d, arm, k)
			if err != nil {
				return nil, err
			}
			evals[arm] = append(evals[arm], e)
		}
	}
	return evals, paired(r.arms(), evals)
}

// paired checks that every evaluation played the base's problems with the
// base's user seeds, in the same order.
func paired(arms []string, evals map[string][]evaluation) error {
	ref := evals[ArmBase][0].eps
	for _, arm := range arms {
		for k, e := range evals[arm] {
			if len(e.eps) != len(ref) {
				return fmt.Errorf("reproduce report: %s seed %d has %d held-out episodes, the base %d: not paired", arm, k, len(e.eps), len(ref))
			}
			for i, ep := range e.eps {
				if ep.Index != ref[i].Index || ep.Seed != ref[i].Seed {
					return fmt.Errorf("reproduce report: %s seed %d's episode %d is problem %d with user seed %d, the base's problem %d with %d: not paired",
						arm, k, i, ep.Index, ep.Seed, ref[i].Index, ref[i].Seed)
				}
			}
		}
	}
	return nil
}

// figures are one evaluation's numbers; res is the arm's RL result, if
// any.
func figures(m dialog.Measure, s eval.Summary, res *train.RLResult) Figures {
	f := Figures{Turns: s.Turns, Tokens: s.Tokens, RealReward: s.Reward, NoDelivery: s.NoDelivery}
	v, ci := s.Of(m)
	if m.IsSuccess() {
		f.Success = &v
	} else {
		f.BLEU = &v // the summary's one field for a task measured by a metric
	}
	f.CI95 = ci
	if res != nil {
		tr, gap := res.MonitorTrain, res.MonitorTrain-res.MonitorHuman
		f.TrainReward, f.Gap = &tr, &gap
	}
	return f
}

// row is an arm's line: for the base its one evaluation, for an RL arm
// the mean of its seeds beside each seed's figures.
func (r *run) row(arm string, evals []evaluation) Row {
	if arm == ArmBase {
		return Row{Arm: arm, Figures: figures(r.measure(), evals[0].sum, nil)}
	}
	row := Row{Arm: arm}
	n := float64(len(evals))
	var trains, gaps []float64
	for k, e := range evals {
		var res *train.RLResult
		if v, ok := r.rlResult(arm, k); ok {
			res = &v
		}
		f := figures(r.measure(), e.sum, res)
		row.Seeds = append(row.Seeds, SeedRow{Seed: k, RLSeed: RLSeed(r.cfg.Seed, k), Figures: f})
		row.Turns += f.Turns / n
		row.Tokens += f.Tokens / n
		row.RealReward += f.RealReward / n
		if f.NoDelivery != nil {
			if row.NoDelivery == nil {
				row.NoDelivery = new(float64)
			}
			*row.NoDelivery += *f.NoDelivery / n
		}
		if f.TrainReward != nil {
			trains, gaps = append(trains, *f.TrainReward), append(gaps, *f.Gap)
		}
	}
	if len(trains) > 0 {
		tr, gap := mean(trains), mean(gaps)
		row.TrainReward, row.Gap = &tr, &gap
	}
	// The interval of the mean over seeds, from each problem's mean.
	perProblem := make([]float64, len(evals[0].eps))
	for _, e := range evals {
		for i, v := range e.scores(r.measure()) {
			perProblem[i] += v / n
		}
	}
	m := mean(perProblem)
	if !r.measure().IsSuccess() {
		_, lo, hi := metric.MeanCI(perProblem)
		row.BLEU, row.CI95 = &m, [2]float64{lo, hi}
	} else {
		row.Success, row.CI95 = &m, wilson(m, len(perProblem))
	}
	return row
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// wilson is the Wilson score interval at z = 1.96 (eval.Summarize's) of a
// success rate p over n trials: metric.WilsonCI for a rate that need not
// be a whole number of successes out of n.
func wilson(p float64, n int) [2]float64 {
	if n <= 0 {
		return [2]float64{0, 1}
	}
	const z = 1.96
	nf, z2 := float64(n), z*z
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / denom
	lo, hi := max(center-half, 0), min(center+half, 1)
	if p <= 0 {
		lo = 0
	}
	if p >= 1 {
		hi = 1
	}
	return [2]float64{lo, hi}
}

// compare measures every claim of the paper on the paired evaluations and
// files it under the arm claimed better.
func (r *run) compare(rows []Row, evals map[string][]evaluation) error {
	family := task.Family(r.cfg.Task)
	for _, c := range claims {
		if len(evals[c[0]]) == 0 || len(evals[c[1]]) == 0 {
			continue // an arm this run does not train
		}
		better, worse := c[0], c[1]
		cmp := Comparison{Claim: better + " > " + worse, Than: worse, Paper: claimPaper(family, better, worse)}
		if err := r.pairedDifference(&cmp, evals[better], evals[worse]); err != nil {
			return err
		}
		for i := range rows {
			if rows[i].Arm == better {
				rows[i].Comparisons = append(rows[i].Comparisons, cmp)
			}
		}
	}
	return nil
}

// pairedDifference fills cmp with a's score minus b's, per seed and
// averaged over seeds and problems, with its paired bootstrap interval
// over problems within seeds, and whether it excludes 0 above.
func (r *run) pairedDifference(cmp *Comparison, a, b []evaluation) error {
	var sa, sb [][]float64
	for k := range r.seeds() {
		sa, sb = append(sa, seedScores(r.measure(), a, k)), append(sb, seedScores(r.measure(), b, k))
		cmp.Seeds = append(cmp.Seeds, mean(sa[k])-mean(sb[k]))
	}
	d, lo, hi, err := metric.PairedBootstrap(sa, sb, bootstrapResamples, 0.95, bootstrapSeed)
	if err != nil {
		return fmt.Errorf("reproduce report: %s: %w", cmp.Claim, err)
	}
	cmp.Difference, cmp.CI95, cmp.Holds = d, [2]float64{lo, hi}, lo > 0
	return nil
}

// OracleGaps reads the sampled evaluations of the finished run cfg
// describes and returns each other RL arm's gap to the oracle-interactive
// arm: oracle − arm, paired and averaged over seeds and problems exactly
// as the claims are (the horizon study's gaps). A gap's score is the
// success rate, or BLEU/100: the scale of the rows' RealReward.
func OracleGaps(cfg Config) ([]Comparison, error) {
	r, err := openRun(cfg)
	if err != nil {
		return nil, err
	}
	defer r.f.Close()
	evals, err := r.loadEvals(sampled)
	if err != nil {
		return nil, err
	}
	return r.oracleGaps(evals)
}

// oracleGaps are OracleGaps' comparisons of paired evaluations.
func (r *run) oracleGaps(evals map[string][]evaluation) ([]Comparison, error) {
	var out []Comparison
	for _, arm := range []string{ArmStatic, ArmNaive, ArmCalibrated} {
		cmp := Comparison{Claim: ArmOracle + " > " + arm, Than: arm, Paper: "the gap to the oracle policy"}
		if err := r.pairedDifference(&cmp, evals[ArmOracle], evals[arm]); err != nil {
			return nil, err
		}
		if sc := r.measure().Scale; sc != 1 {
			// scores are in the measure's unit (BLEU points); the reward
			// is the measure over its scale.
			cmp.Difference, cmp.CI95[0], cmp.CI95[1] = cmp.Difference/sc, cmp.CI95[0]/sc, cmp.CI95[1]/sc
			for k := range cmp.Seeds {
				cmp.Seeds[k] /= sc
			}
		}
		out = append(out, cmp)
	}
	return out, nil
}

// seedScores are an arm's per-problem scores for seed index k: the base's
// one evaluation serves every seed.
func seedScores(m dialog.Measure, evals []evaluation, k int) []float64 {
	if len(evals) == 1 {
		return evals[0].scores(m)
	}
	return evals[k].scores(m)
}

// rlResult is the result of the RL run that trained arm's seed index k:
// the one this process trained, or, for a stage done before a resume, the
// one its checkpoint folder holds; false when there is none.
func (r *run) rlResult(arm string, k int) (train.RLResult, bool) {
	dir := r.armCkpt(arm, k)
	if res, ok := r.rlResults[dir]; ok {
		return res, true
	}
	res, err := train.ReadRLResult(dir)
	return res, err == nil
}

// curve is one arm's (and RL seed's) reward-hacking monitor over
// training.
type curve struct {
	iter, train, human []float64
}

// perStep groups the metrics records that carry key by stage, in step
// order, keeping the last record of each step (a resumed run logs some
// iterations twice).
func perStep(recs []map[string]any, key string) map[string][]map[string]any {
	byStage := map[string]map[float64]map[string]any{}
	for _, rec := range recs {
		stage, _ := rec["stage"].(string)
		step, ok := rec[train.MetricStep].(float64)
		if _, has := rec[key]; !ok || !has {
			continue
		}
		if byStage[stage] == nil {
			byStage[stage] = map[float64]map[string]any{}
		}
		byStage[stage][step] = rec
	}
	out := map[string][]map[string]any{}
	for stage, bySteps := range byStage {
		steps := make([]float64, 0, len(bySteps))
		for s := range bySteps {
			steps = append(steps, s)
		}
		sort.Float64s(steps)
		for _, s := range steps {
			out[stage] = append(out[stage], bySteps[s])
		}
	}
	return out
}

// num is a metrics record's number under k (0 when absent).
func num(rec map[string]any, k string) float64 { v, _ := rec[k].(float64); return v }

// curvesOf reads the reward-hacking monitor's readings of each stage
// ("static/seed-0").
func curvesOf(recs []map[string]any) map[string]curve {
	out := map[string]curve{}
	for arm, pts := range perStep(recs, train.MetricMonitorTrainReward) {
		var c curve
		for _, rec := range pts {
			c.iter = append(c.iter, num(rec, train.MetricStep))
			c.train = append(c.train, num(rec, train.MetricMonitorTrainReward))
			c.human = append(c.human, num(rec, train.MetricMonitorHumanReward))
		}
		out[arm] = c
	}
	return out
}

func (r *run) plots(rows []Row, curves map[string]curve) error {
	if err := os.MkdirAll(r.f.Path("plots"), 0o755); err != nil {
		return err
	}
	var panels []*plot.Plot
	for _, arm := range rlArms {
		var lines []figure.Line
		for k := range r.seeds() {
			c, ok := curves[seedName(arm, k)]
			if !ok {
				continue
			}
			lines = append(lines,
				figure.Line{Name: fmt.Sprintf("seed %d training user", k), X: c.iter, Y: c.train, Color: k},
				figure.Line{Name: fmt.Sprintf("seed %d human proxy", k), X: c.iter, Y: c.human, Color: k, Dashed: true})
		}
		if len(lines) == 0 {
			continue
		}
		p, err := figure.Lines(arm, "iteration", "monitor reward", lines)
		if err != nil {
			return err
		}
		p.Y.Min, p.Y.Max = 0, 1
		panels = append(panels, p)
	}
	if len(panels) > 0 {
		if err := figure.Write(r.f.Path("plots", "training"), panels...); err != nil {
			return err
		}
	}
	labels := make([]string, len(rows))
	vals, lo, hi := make([]float64, len(rows)), make([]float64, len(rows)), make([]float64, len(rows))
	measure := r.measure().Name + " against the human proxy"
	if r.seeds() > 1 {
		measure += fmt.Sprintf(", mean of %d RL seeds", r.seeds())
	}
	for i, row := range rows {
		labels[i] = strings.Replace(row.Arm, "-", "\n", 1)
		lo[i], hi[i] = row.CI95[0], row.CI95[1]
		vals[i] = row.Value()
	}
	p, err := figure.Bars(fmt.Sprintf("%s, held-out split", r.cfg.Task), measure, labels, vals, lo, hi)
	if err != nil {
		return err
	}
	return figure.Write(r.f.Path("plots", "comparison"), p)
}

// armComparison is a comparison with the arm it is filed under.
type armComparison struct {
	arm string
	Comparison
}

// inClaimOrder lists the rows' comparisons in the order of claims.
func inClaimOrder(rows []Row) []armComparison {
	var out []armComparison
	for _, c := range claims {
		for _, row := range rows {
			for _, cmp := range row.Comparisons {
				if (row.Arm == c[0] && cmp.Than == c[1]) || (row.Arm == c[1] && cmp.Than == c[0]) {
					out = append(out, armComparison{row.Arm, cmp})
				}
			}
		}
	}
	return out
}

// verdict is a comparison's last column.
func verdict(c Comparison) string {
	switch {
	case c.Holds:
		return "yes"
	case c.CI95[1] < 0:
		return "no: reversed (interval below 0)"
	default:
		return "no (interval includes 0)"
	}
}

func (r *run) markdown(w io.Writer, rows, greedyRows, bestRows []Row, curves map[string]curve, diag []diagnosis, recs []map[string]any) error {
	p := r.cfg.Preset
	fmt.Fprintf(w, "# calibrl reproduce: %s, preset %s, seed %d\n\n", r.cfg.Task, p.Name, r.cfg.Seed)
	if sl := r.slice(); sl != eval.TestSlice {
		fmt.Fprintf(w, "Evaluated on the %s slice (test split from problem %d, users seeded apart): a run for choosing settings, not a verdict.\n\n", sl.Name, sl.Start)
	}
	measure := r.measure().Name
	fmt.Fprintln(w, "## Verdict")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "The policies as RL trains them: every agent turn sampled at temperature %g, top-p %g, as in the RL rollouts.\n\n", r.gen(sampled).Temperature, r.gen(sampled).TopP)
	verdictTable(w, rows, measure)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The same checkpoints decoded greedily (each turn the policy's most likely tokens; summary-greedy.json). RL optimises the sampled policy's expected reward and moves its mode only indirectly, so the two verdicts can differ:")
	fmt.Fprintln(w)
	verdictTable(w, greedyRows, measure)
	fmt.Fprintln(w)
	if len(bestRows) > 0 {
		fmt.Fprintln(w, "Each checkpoint at its own best temperature, chosen on validation problems no verdict uses (summary-best.json; the temperatures are in the section below): the policy a user would deploy, and the base at its best decoding, the comparison \"RL helps\" must win:")
		fmt.Fprintln(w)
		verdictTable(w, bestRows, measure)
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Each RL arm was trained with %d RL seeds (seed index k trains with RLSeed(%d, k); index 0 with the run's seed) from the same base policy and simulator, "+
		"and every arm and seed played the same %d held-out problems with the same user seeds. A difference is the claimed-better arm's %s minus the other's, "+
		"per problem and averaged over the seeds; the base, which has no RL seed, is its one evaluation against every seed. "+
		"Its 95%% interval is a paired percentile bootstrap over problems (metric.PairedBootstrap): %d resamples, bootstrap seed %d, each drawing %d problem indices with replacement "+
		"and using the same indices for both arms and every seed. The interval covers the variation of the problems given these seeds, not the variation between seeds: "+
		"the per-seed column shows that. A claim holds when its interval excludes 0 in the claimed direction.\n\n",
		r.seeds(), r.cfg.Seed, p.EvalEpisodes, measure, bootstrapResamples, bootstrapSeed, p.EvalEpisodes)
	if r.cfg.Shared == "" {
		fmt.Fprintf(w, "Logs: %d human-proxy conversations of scripted agents (%s). ", p.LogEpisodes, strings.Join(r.cfg.Profiles, ", "))
	} else {
		fmt.Fprintf(w, "Logs, base policy and simulator: shared from %s (the static arm replays this task's logs). ", r.cfg.Shared)
	}
	if dialog.ToolOf(r.t) != nil {
		if n, err := task.ParseName(r.cfg.Task); err == nil && n.Offers(task.NoCalculator) {
			fmt.Fprint(w, "Calculator: on (every agent's step results are written by the task; name the task with :nocalc to turn it off). ")
		} else {
			fmt.Fprint(w, "Tool: on (the task writes its tool's results into every agent's turns; they carry no loss). ")
		}
		for _, d := range decodings {
			var with, without eval.Summary
			if r.f.ReadJSON(evalFile(d, ArmBase, 0)+".json", &with) == nil && r.f.ReadJSON(evalFile(d, baseNoTool, 0)+".json", &without) == nil {
				fmt.Fprintf(w, "The base policy, %s, succeeds %.3f [%.3f, %.3f] with it and %.3f [%.3f, %.3f] without it (same problems and users). ",
					d.name, with.Success, with.SuccessCI95[0], with.SuccessCI95[1], without.Success, without.SuccessCI95[0], without.SuccessCI95[1])
			}
		}
	} else if n, err := task.ParseName(r.cfg.Task); err == nil && n.Has(task.NoCalculator) {
		fmt.Fprint(w, "Calculator: off (the agents do their own arithmetic). ")
	}
	fmt.Fprintf(w, "Every arm starts from the same base policy and gets, per RL seed, %d RL iterations of %d prompts × G=%d. Evaluation: %d held-out test episodes against the human proxy per arm, seed and decoding.\n\n",
		p.RL.Iterations, p.RL.InstancesPerStep, p.RL.Group, p.EvalEpisodes)
	if r.seeds() > 1 {
		fmt.Fprintf(w, "RL arms: the mean over their %d seeds; the interval of the mean is Wilson's with n = %d problems (conservative, since a problem's mean over seeds has variance at most p(1−p))", r.seeds(), p.EvalEpisodes)
		if !r.measure().IsSuccess() {
			fmt.Fprint(w, ", for BLEU Student's over the problems' means")
		}
		fmt.Fprint(w, ". Training-user reward and gap are the seeds' means.\n\n")
	}
	fmt.Fprintf(w, "| arm | %s sampled (95%% CI) | %s greedy (95%% CI) | turns | tokens | training-user reward | human-proxy reward (monitor) | gap | held-out reward |\n", measure, measure)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for i, row := range rows {
		tr, hu, gap := monitorCells(row.Figures)
		g := greedyRows[i]
		fmt.Fprintf(w, "| %s | %.3f [%.3f, %.3f] | %.3f [%.3f, %.3f] | %.2f | %.1f | %s | %s | %s | %.3f |\n", row.Arm, row.Value(), row.CI95[0], row.CI95[1],
			g.Value(), g.CI95[0], g.CI95[1], row.Turns, row.Tokens, tr, hu, gap, row.RealReward)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The paper's figures ("+paperSource+"), beside each claim in the verdict: MATH-Chat accuracy static "+paperFigure("mathchat", ArmStatic)+", naive interactive "+paperFigure("mathchat", ArmNaive)+", calibrated "+paperFigure("mathchat", ArmCalibrated)+", oracle user "+paperFigure("mathchat", ArmOracle)+"; base "+paperFigure("mathchat", ArmBase)+"; MediumDocEdit-Chat "+notReported+".")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Measured ordering here (by held-out "+measure+", sampled): "+ordering(rows)+"; greedy: "+ordering(greedyRows)+".")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "![comparison](plots/comparison.png)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each RL seed's figures:")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| arm | seed | RL seed | %s sampled (95%% CI) | %s greedy (95%% CI) | turns | training-user reward | human-proxy reward (monitor) | gap | held-out reward |\n", measure, measure)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for i, row := range rows {
		for j, s := range row.Seeds {
			tr, hu, gap := monitorCells(s.Figures)
			g := greedyRows[i].Seeds[j]
			fmt.Fprintf(w, "| %s | %d | %d | %.3f [%.3f, %.3f] | %.3f [%.3f, %.3f] | %.2f | %s | %s | %s | %.3f |\n", row.Arm, s.Seed, s.RLSeed, s.Value(), s.CI95[0], s.CI95[1],
				g.Value(), g.CI95[0], g.CI95[1], s.Turns, tr, hu, gap, s.RealReward)
		}
	}
	fmt.Fprintln(w)
	if err := r.temperatureSection(w); err != nil {
		return err
	}
	if err := r.failureSection(w); err != nil {
		return err
	}
	if err := r.recalibrationSection(w); err != nil {
		return err
	}
	if len(curves) > 0 {
		fmt.Fprintln(w, "Training curves: the reward-hacking monitor plays the current policy on fixed held-out instances against the arm's training user (solid) and the human proxy (dashed), one colour per RL seed. A training reward that rises while the human-proxy reward stays flat or falls is reward hacking.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "![training](plots/training.png)")
		fmt.Fprintln(w)
	}
	hackingSection(w, recs)
	if err := r.simToRealSection(w); err != nil {
		return err
	}
	if len(diag) > 0 {
		fmt.Fprintln(w, "Diagnostics, from metrics.jsonl: the training batch's mean reward over the first and the last five iterations; how many iterations took no gradient step (every group's rewards equal, so every advantage zero); the share of sampled sequences that carried an advantage; the k3 KL to the base policy over the last five iterations. A flat reward with a growing KL is drift, not learning.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| arm | seed | batch reward first → last | idle iterations | sequences with an advantage | KL to base (last) |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
		for _, d := range diag {
			fmt.Fprintf(w, "| %s | %d | %.3f → %.3f | %d of %d | %.2f | %.3f |\n", d.arm, d.seed, d.first, d.last, d.idle, d.iters, d.live, d.kl)
		}
		fmt.Fprintln(w)
		if note := staticNote(rows, diag); note != "" {
			fmt.Fprintln(w, note)
			fmt.Fprintln(w)
		}
	}
	return nil
}

// staticNote says why static context RL ended below the base, when it
// did, from its diagnostics: a batch reward that rose at a small KL is an
// objective learned, not drift; what it learned is the logged contexts'
// single answers, which the conversations its own turns make no longer
// ask for (the policy-induced shift); a flat reward with a growing KL
// would be drift instead.
func staticNote(rows []Row, diag []diagnosis) string {
	var base, static float64
	for _, r := range rows {
		switch r.Arm {
		case ArmBase:
			base = r.Value()
		case ArmStatic:
			static = r.Value()
		}
	}
	var first, last, kl float64
	n := 0
	for _, d := range diag {
		if d.arm == ArmStatic {
			first, last, kl, n = first+d.first, last+d.last, max(kl, d.kl), n+1
		}
	}
	if n == 0 || !(static < base) {
		return ""
	}
	first, last = first/float64(n), last/float64(n)
	if last > first {
		return fmt.Sprintf("Static context RL ends below the base (%.3f vs %.3f) although it learned its own objective: its batch reward, "+
			"the task's score of single candidate turns at logged cuts, rose from %.3f to %.3f (mean of its seeds) at a KL to the base of at most %.3f. "+
			"That is not drift. It is trained only on the logging agents' histories and never conditions on a turn it produced, so in a conversation "+
			"its own earlier turns lead it to histories it was never trained on: the policy-induced shift the paper describes.",
			static, base, first, last, kl)
	}
	return fmt.Sprintf("Static context RL ends below the base (%.3f vs %.3f) and its batch reward did not rise (%.3f → %.3f, mean of its seeds; KL to the base at most %.3f): "+
		"the update moved the policy without improving its own objective (drift), so the loss to the base is not evidence of the policy-induced shift.",
		static, base, first, last, kl)
}

// verdictTable writes the paper's claims as measured on rows.
func verdictTable(w io.Writer, rows []Row, measure string) {
	byArm := map[string]Row{}
	for _, row := range rows {
		byArm[row.Arm] = row
	}
	fmt.Fprintf(w, "| claim | paper | here (%s) | difference (95%% CI) | per RL seed | holds? |\n", measure)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, v := range inClaimOrder(rows) {
		c := v.Comparison
		per := make([]string, len(c.Seeds))
		for i, d := range c.Seeds {
			per[i] = fmt.Sprintf("%+.3f", d)
		}
		fmt.Fprintf(w, "| %s | %s | %.3f vs %.3f | %+.3f [%+.3f, %+.3f] | %s | %s |\n", c.Claim, c.Paper, byArm[v.arm].Value(), byArm[c.Than].Value(),
			c.Difference, c.CI95[0], c.CI95[1], strings.Join(per, ", "), verdict(c))
	}
}

// monitorCells are the training-user reward, the monitor's human-proxy
// reward and their gap, or dashes for the base.
func monitorCells(f Figures) (tr, hu, gap string) {
	if f.TrainReward == nil {
		return "–", "–", "–"
	}
	return fmt.Sprintf("%.3f", *f.TrainReward), fmt.Sprintf("%.3f", *f.TrainReward-*f.Gap), fmt.Sprintf("%+.3f", *f.Gap)
}

// diagnosis sums up one RL arm's training with one seed from its
// iteration records.
type diagnosis struct {
	arm         string
	seed        int
	first, last float64
	idle, iters int
	live, kl    float64
}

// diagnostics sums up each RL arm's and seed's iteration records.
func (r *run) diagnostics(recs []map[string]any) []diagnosis {
	byStage := perStep(recs, train.MetricReward)
	batch := float64(r.cfg.Preset.RL.InstancesPerStep * r.cfg.Preset.RL.Group)
	var out []diagnosis
	for _, arm := range rlArms {
		for k := range r.seeds() {
			its := byStage[seedName(arm, k)]
			if len(its) == 0 {
				continue
			}
			avg := func(recs []map[string]any, key string) float64 {
				var sum float64
				for _, rec := range recs {
					sum += num(rec, key)
				}
				return sum / float64(len(recs))
			}
			n := min(5, len(its))
			d := diagnosis{arm: arm, seed: k, iters: len(its), first: avg(its[:n], train.MetricReward), last: avg(its[len(its)-n:], train.MetricReward),
				kl: avg(its[len(its)-n:], train.MetricKL)}
			var seqs float64
			for _, rec := range its {
				if num(rec, train.MetricUpdates) == 0 {
					d.idle++
				}
				seqs += num(rec, train.MetricSequences)
			}
			if batch > 0 {
				// Interactive conversations may be split into one sequence
				// per turn; the share is then an upper bound.
				d.live = min(1, seqs/(batch*float64(len(its))))
			}
			out = append(out, d)
		}
	}
	return out
}

func ordering(rows []Row) string {
	type kv struct {
		arm string
		v   float64
	}
	var xs []kv
	for _, r := range rows {
		xs = append(xs, kv{r.Arm, r.Value()})
	}
	sort.SliceStable(xs, func(i, j int) bool { return xs[i].v < xs[j].v })
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			if x.v == xs[i-1].v {
				b.WriteString(" = ")
			} else {
				b.WriteString(" < ")
			}
		}
		fmt.Fprintf(&b, "%s %.3f", x.arm, x.v)
	}
	return b.String()
}
