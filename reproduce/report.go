package reproduce

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/figure"
	"github.com/calibrl/calibrl/train"
)

// Row is one arm's line of summary.json.
type Row struct {
	Arm string `json:"arm"`
	// Success (mathchat) or BLEU (docedit) against the human proxy on the
	// held-out split, with its 95% interval.
	Success *float64   `json:"success,omitempty"`
	BLEU    *float64   `json:"bleu,omitempty"`
	CI95    [2]float64 `json:"ci95"`
	Turns   float64    `json:"turns"`
	Tokens  float64    `json:"tokens"`
	// TrainReward is the last reward-hacking monitor's mean reward against
	// the arm's training user (nil for the base, which has none).
	TrainReward *float64 `json:"train_reward"`
	// RealReward is the mean reward against the human proxy on the
	// held-out split.
	RealReward float64 `json:"real_reward"`
	// Gap is TrainReward − the monitor's human reward on the same
	// instances: how much the training user flatters the policy.
	Gap *float64 `json:"gap"`
}

// report reads the evaluations and training results and writes
// summary.json, report.md and the plots.
func (r *run) report() ([]Row, error) {
	var rows []Row
	var sums []eval.Summary
	for _, arm := range Arms {
		var s eval.Summary
		if err := r.f.ReadJSON(filepath.Join("eval", arm+".json"), &s); err != nil {
			return nil, fmt.Errorf("reproduce report: %w", err)
		}
		row := Row{Arm: arm, Turns: s.Turns, Tokens: s.Tokens, RealReward: s.Reward}
		if s.BLEU != nil {
			v := *s.BLEU
			row.BLEU = &v
			row.CI95 = [2]float64{s.Metrics["bleu_ci95_lo"], s.Metrics["bleu_ci95_hi"]}
		} else {
			v := s.Success
			row.Success = &v
			row.CI95 = s.SuccessCI95
		}
		if res, ok := r.rlResult(arm); ok {
			tr, gap := res.MonitorTrain, res.MonitorTrain-res.MonitorHuman
			row.TrainReward, row.Gap = &tr, &gap
		}
		rows = append(rows, row)
		sums = append(sums, s)
	}
	if err := r.f.WriteJSON("summary.json", rows); err != nil {
		return nil, err
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
	if err := atomicfile.Write(r.f.Path("report.md"), func(w io.Writer) error { return r.markdown(w, rows, sums, curves, diag) }); err != nil {
		return nil, err
	}
	return rows, nil
}

func (r *run) rlResult(arm string) (train.GRPOResult, bool) {
	var res train.GRPOResult
	algo := "grpo"
	if arm == ArmStatic {
		algo = "static"
	}
	data, err := os.ReadFile(filepath.Join(r.ckpt(arm), algo+"_result.json"))
	if err != nil || json.Unmarshal(data, &res) != nil {
		return res, false
	}
	return res, true
}

// curve is one arm's reward-hacking monitor over training.
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
		step, ok := rec["step"].(float64)
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

// curvesOf reads the reward-hacking monitor's readings of each arm.
func curvesOf(recs []map[string]any) map[string]curve {
	out := map[string]curve{}
	for arm, pts := range perStep(recs, "monitor/train_user_reward") {
		var c curve
		for _, rec := range pts {
			c.iter = append(c.iter, num(rec, "step"))
			c.train = append(c.train, num(rec, "monitor/train_user_reward"))
			c.human = append(c.human, num(rec, "monitor/human_reward"))
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
	for i, arm := range Arms[1:] {
		c, ok := curves[arm]
		if !ok {
			continue
		}
		p, err := figure.Lines(arm, "iteration", "monitor reward", []figure.Line{
			{Name: "training user", X: c.iter, Y: c.train, Color: i},
			{Name: "human proxy", X: c.iter, Y: c.human, Color: i, Dashed: true},
		})
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
	metric := "success against the human proxy"
	for i, row := range rows {
		labels[i] = strings.Replace(row.Arm, "-", "\n", 1)
		lo[i], hi[i] = row.CI95[0], row.CI95[1]
		if row.BLEU != nil {
			vals[i], metric = *row.BLEU, "BLEU against the human proxy"
		} else {
			vals[i] = *row.Success
		}
	}
	p, err := figure.Bars(fmt.Sprintf("%s, held-out split", r.cfg.Task), metric, labels, vals, lo, hi)
	if err != nil {
		return err
	}
	return figure.Write(r.f.Path("plots", "comparison"), p)
}

func (r *run) markdown(w io.Writer, rows []Row, sums []eval.Summary, curves map[string]curve, diag []diagnosis) error {
	p := r.cfg.Preset
	fmt.Fprintf(w, "# calibrl reproduce: %s, preset %s, seed %d\n\n", r.cfg.Task, p.Name, r.cfg.Seed)
	if r.cfg.Shared == "" {
		fmt.Fprintf(w, "Logs: %d human-proxy conversations of scripted agents (%s). ", p.LogEpisodes, strings.Join(r.cfg.Profiles, ", "))
	} else {
		fmt.Fprintf(w, "Logs, base policy and simulator: shared from %s (the static arm replays this task's logs). ", r.cfg.Shared)
	}
	fmt.Fprintf(w, "Every arm starts from the same base policy and gets %d RL iterations of %d prompts × G=%d. Evaluation: %d held-out test episodes against the human proxy.\n\n",
		p.RL.Iterations, p.RL.InstancesPerStep, p.RL.Group, p.EvalEpisodes)
	metric := "success"
	if rows[0].BLEU != nil {
		metric = "BLEU"
	}
	fmt.Fprintf(w, "| arm | %s (95%% CI) | turns | tokens | training-user reward | human-proxy reward (monitor) | gap | held-out reward |\n", metric)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for i, row := range rows {
		v := 0.0
		if row.BLEU != nil {
			v = *row.BLEU
		} else {
			v = *row.Success
		}
		tr, hu, gap := "–", "–", "–"
		if row.TrainReward != nil {
			tr = fmt.Sprintf("%.3f", *row.TrainReward)
			hu = fmt.Sprintf("%.3f", *row.TrainReward-*row.Gap)
			gap = fmt.Sprintf("%+.3f", *row.Gap)
		}
		fmt.Fprintf(w, "| %s | %.3f [%.3f, %.3f] | %.2f | %.1f | %s | %s | %s | %.3f |\n", row.Arm, v, row.CI95[0], row.CI95[1], row.Turns, row.Tokens, tr, hu, gap, sums[i].Reward)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The paper's ordering (Gemma-3-4B policy, Qwen2.5-7B simulator): MATH-Chat accuracy base 82.3 < static 85.0 < naive interactive 89.3 < calibrated 91.5 (oracle user 89.7); MediumDocEdit-Chat BLEU base 32.2, static 33.8, naive interactive 26.1 (reward hacking), calibrated 34.6.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Measured ordering here (by held-out "+metric+"): "+ordering(rows)+".")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "![comparison](plots/comparison.png)")
	fmt.Fprintln(w)
	if len(curves) > 0 {
		fmt.Fprintln(w, "Training curves: the reward-hacking monitor plays the current policy on fixed held-out instances against the arm's training user (solid) and the human proxy (dashed). A training reward that rises while the human-proxy reward stays flat or falls is reward hacking.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "![training](plots/training.png)")
		fmt.Fprintln(w)
	}
	if len(diag) > 0 {
		fmt.Fprintln(w, "Diagnostics, from metrics.jsonl: the training batch's mean reward over the first and the last five iterations; how many iterations took no gradient step (every group's rewards equal, so every advantage zero); the share of sampled sequences that carried an advantage; the k3 KL to the base policy over the last five iterations. A flat reward with a growing KL is drift, not learning.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| arm | batch reward first → last | idle iterations | sequences with an advantage | KL to base (last) |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
		for _, d := range diag {
			fmt.Fprintf(w, "| %s | %.3f → %.3f | %d of %d | %.2f | %.3f |\n", d.arm, d.first, d.last, d.idle, d.iters, d.live, d.kl)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// diagnosis sums up one RL arm's training from its iteration records.
type diagnosis struct {
	arm         string
	first, last float64
	idle, iters int
	live, kl    float64
}

// diagnostics sums up each RL arm's iteration records.
func (r *run) diagnostics(recs []map[string]any) []diagnosis {
	byArm := perStep(recs, "rollout/reward_mean")
	batch := float64(r.cfg.Preset.RL.InstancesPerStep * r.cfg.Preset.RL.Group)
	var out []diagnosis
	for _, arm := range Arms[1:] {
		its := byArm[arm]
		if len(its) == 0 {
			continue
		}
		avg := func(recs []map[string]any, k string) float64 {
			var sum float64
			for _, rec := range recs {
				sum += num(rec, k)
			}
			return sum / float64(len(recs))
		}
		k := min(5, len(its))
		d := diagnosis{arm: arm, iters: len(its), first: avg(its[:k], "rollout/reward_mean"), last: avg(its[len(its)-k:], "rollout/reward_mean"),
			kl: avg(its[len(its)-k:], "loss/kl")}
		var seqs float64
		for _, rec := range its {
			if num(rec, "train/updates") == 0 {
				d.idle++
			}
			seqs += num(rec, "train/sequences")
		}
		if batch > 0 {
			// Interactive conversations may be split into one sequence per
			// turn; the share is then an upper bound.
			d.live = min(1, seqs/(batch*float64(len(its))))
		}
		out = append(out, d)
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
		v := math.NaN()
		if r.BLEU != nil {
			v = *r.BLEU
		} else if r.Success != nil {
			v = *r.Success
		}
		xs = append(xs, kv{r.Arm, v})
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
