package reproduce

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
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

// claims are paperClaims, then each crossed optimizer's (crossedClaims).
// A run reports those whose both arms it trains, so a run with the
// default arms reports paperClaims' alone.
var claims, crossedNotes = crossedClaims(paperClaims)

// paperClaims are every ordering the paper states, "first beats second",
// those that fail here included (static > base, calibrated > oracle), then
// the checks it does not state (oracle > base: that RL works at all).
var paperClaims = [][2]string{
	{ArmCalibrated, ArmStatic}, {ArmCalibrated, ArmNaive}, {ArmCalibrated, ArmBase},
	{ArmNaive, ArmStatic}, {ArmStatic, ArmBase}, {ArmCalibrated, ArmOracle},
	{ArmOracle, ArmBase},
	// Static context RL with the continuation reward (Config.StaticRewards),
	// when the run trains it beside the outcome one: does interactive RL
	// also beat the static arm whose reward trains asking turns? The
	// paper's summary gives one static figure, which stands beside
	// ArmStatic, so this claim's Paper cell has the calibrated arm's alone.
	{ArmCalibrated, ArmStaticContinuation},
	// Filtered behaviour cloning (Config.FilteredBC), when the run trains
	// it: does RL beat the cheap alternative, and does that beat the base?
	{ArmCalibrated, ArmFilteredBC}, {ArmFilteredBC, ArmBase},
	// Online recalibration (Config.Recalibrate), when the run trains it:
	// against the calibrated arm and the oracle, against its control (as
	// many extra human conversations, off-policy: is it the policy's data
	// or more data?), and whether that extra data alone helps.
	{ArmRecalibrated, ArmCalibrated}, {ArmRecalibrated, ArmOracle},
	{ArmRecalibrated, ArmRefitControl}, {ArmRefitControl, ArmCalibrated},
}

// crossedClaims are claims followed by each crossed optimizer's but
// GRPO's (crossings), with the Paper cell of each of those: the partner
// ordering under the optimizer (calibrated > static, > naive, > oracle;
// naive > static; static > base where it has a static form, against GRPO's
// static arm where not), whether it beats the base and filtered BC, and
// whether it beats GRPO with the calibrated partner.
func crossedClaims(claims [][2]string) ([][2]string, map[[2]string]string) {
	out := slices.Clone(claims)
	notes := map[[2]string]string{}
	for _, c := range crossings[1:] {
		cal, naive, oracle := partnerCalibrated.name+c.suffix, partnerNaive.name+c.suffix, partnerOracle.name+c.suffix
		static := ArmStatic
		if c.static != nil {
			static += c.staticSuffix
		}
		own := [][2]string{{cal, static}, {cal, naive}, {cal, ArmBase}, {naive, static}}
		if c.static != nil {
			own = append(own, [2]string{static, ArmBase})
		}
		own = append(own, [2]string{cal, oracle}, [2]string{oracle, ArmBase}, [2]string{cal, ArmCalibrated}, [2]string{cal, ArmFilteredBC})
		for _, cl := range own {
			notes[cl] = "not in the paper: its arms trained by " + c.name
		}
		out = append(out, own...)
	}
	return out, notes
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
		for k := range r.seedsOf(arm) {
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
	return OracleGapsOf(cfg, sampled.name, oracleGapArms)
}

// oracleGapArms are the arms whose gap OracleGaps measures, in its order.
var oracleGapArms = []string{ArmStatic, ArmNaive, ArmCalibrated}

// OracleGapsOf is OracleGaps under the named decoding ("sampled", as
// OracleGaps, or "greedy") for the given arms. The horizon study asks for
// the base too: the oracle's gap to it is the oracle's lead, by which the
// other gaps are normalised.
func OracleGapsOf(cfg Config, decodingName string, arms []string) ([]Comparison, error) {
	d, err := decodingNamed(decodingName)
	if err != nil {
		return nil, err
	}
	r, err := openRun(cfg)
	if err != nil {
		return nil, err
	}
	defer r.f.Close()
	evals, err := r.loadEvals(d)
	if err != nil {
		return nil, err
	}
	return r.oracleGaps(evals, arms)
}

// decodingNamed is the evaluation decoding called name.
func decodingNamed(name string) (decoding, error) {
	for _, d := range []decoding{sampled, greedy} {
		if d.name == name {
			return d, nil
		}
	}
	return decoding{}, fmt.Errorf("reproduce: no decoding %q (sampled or greedy)", name)
}

// oracleGaps are OracleGaps' comparisons of paired evaluations.
func (r *run) oracleGaps(evals map[string][]evaluation, arms []string) ([]Comparison, error) {
	var out []Comparison
	for _, arm := range arms {
		cmp := Comparison{Claim: ArmOracle + " > " + arm, Than: arm, Paper: "the gap to the oracle policy"}
		if err := r.pairedDifference(&cmp, evals[ArmOracle], evals[arm]); err != nil {
			return nil, err
		}
		// scores are in the measure's unit (BLEU points); the reward is
		// the measure over its scale.
		sc := r.measure().Scale
		toReward(sc, &cmp.Difference, &cmp.CI95[0], &cmp.CI95[1])
		toReward(sc, pointers(cmp.Seeds)...)
		out = append(out, cmp)
	}
	return out, nil
}

// toReward divides each value, in a measure's unit, by its scale sc.
func toReward(sc float64, xs ...*float64) {
	if sc == 1 {
		return
	}
	for _, x := range xs {
		*x /= sc
	}
}

// pointers are pointers to xs' elements.
func pointers(xs []float64) []*float64 {
	out := make([]*float64, len(xs))
	for i := range xs {
		out[i] = &xs[i]
	}
	return out
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
