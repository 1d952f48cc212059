package reproduce

// report.md: the verdict tables, the arms' figures, and what each run's
// training did (the static arm's note, the diagnostics of every RL stage).

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

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

// pipelineNote is what a report says under its title about the pipeline
// it is: one of several pooled in pooledIn, or one alone, whose verdict is
// not the method's.
func pipelineNote(recipe, presetName, pooledIn string) string {
	if pooledIn != "" {
		return fmt.Sprintf("One pipeline of several: the verdict over pipelines, each one's beside it, is %s.", filepath.Join(pooledIn, "pooled.md"))
	}
	return fmt.Sprintf("One pipeline (one seed's logs, base and simulator): its verdict is this pipeline's, not the method's. Pipelines of one recipe differ (a simulator fitted on other logs can be 0.15 off the human proxy), so a claim about the method needs several: `calibrl reproduce %s --preset %s --pipelines 1,2,3` runs three and pools them with pipelines as the unit (pooled.md).", recipe, presetName)
}

func (r *run) markdown(w io.Writer, rows, greedyRows, bestRows []Row, curves map[string]curve, diag []diagnosis, recs []map[string]any) error {
	p := r.cfg.Preset
	fmt.Fprintf(w, "# calibrl reproduce: %s, preset %s, seed %d\n\n", r.cfg.Task, p.Name, r.cfg.Seed)
	if sl := r.slice(); sl != eval.TestSlice {
		fmt.Fprintf(w, "Evaluated on the %s slice (test split from problem %d, users seeded apart): a run for choosing settings, not a verdict.\n\n", sl.Name, sl.Start)
	}
	fmt.Fprintf(w, "%s\n\n", pipelineNote(r.cfg.recipeFlags(), p.Name, r.cfg.PooledIn))
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
			// The RL seed in hex: its 19 decimal digits read as noise.
			fmt.Fprintf(w, "| %s | %d | %#x | %.3f [%.3f, %.3f] | %.3f [%.3f, %.3f] | %.2f | %s | %s | %s | %.3f |\n", row.Arm, s.Seed, s.RLSeed, s.Value(), s.CI95[0], s.CI95[1],
				g.Value(), g.CI95[0], g.CI95[1], s.Turns, tr, hu, gap, s.RealReward)
		}
	}
	fmt.Fprintln(w)
	if err := r.temperatureSection(w); err != nil {
		return err
	}
	if err := r.curveSection(w, recs); err != nil {
		return err
	}
	if err := r.failureSection(w); err != nil {
		return err
	}
	if err := r.recalibrationSection(w, rows); err != nil {
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
	for _, arm := range r.rlArms() {
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
