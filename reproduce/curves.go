package reproduce

// The training curves: the reward-hacking monitor's readings of every RL
// stage from metrics.jsonl, and the plots drawn from them.

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"gonum.org/v1/plot"

	"github.com/calibrl/calibrl/figure"
	"github.com/calibrl/calibrl/train"
)

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
	for _, arm := range r.rlArms() {
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
