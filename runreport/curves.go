package runreport

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Metric is one training curve's metrics.jsonl key, its column title and
// its charts' y label.
type Metric struct {
	Key, Title, YLabel string
}

// Metrics are the training curves, one column of small multiples each:
// the reward-hacking monitor against the arm's training user and against
// the human proxy (every MonitorEvery iterations), the training batch's
// mean reward and the k3 KL to the base policy (every iteration).
var Metrics = []Metric{
	{"monitor/train_user_reward", "monitor: training-user reward", "training-user reward"},
	{"monitor/human_reward", "monitor: human-proxy reward", "human-proxy reward"},
	{"rollout/reward_mean", "batch reward", "mean batch reward"},
	{"loss/kl", "KL to the base policy", "KL (k3 estimate)"},
}

// CurveRow is one RL arm's small multiples, one chart per Metrics entry
// (nil where the arm logged none of it).
type CurveRow struct {
	Arm    string
	Charts []*LineChart
}

// seedCurve is one stage's readings of one metric, in step order.
type seedCurve struct {
	seed int
	x, y []float64
}

// curveRows builds the training curves of every RL arm found in the
// metrics records (stages named "ARM/seed-K"), arms in the order of order
// and then by name. Each metric's charts share one y range, fitted to that
// metric's data over every arm and seed, so that a column compares arms at
// a glance and no axis is wider than its data needs.
func curveRows(recs []map[string]any, order []string) []CurveRow {
	// data[arm][metric] are the seeds' curves; a resumed run logs some
	// steps twice, the last record of a step wins.
	type key struct{ stage, metric string }
	last := map[key]map[float64]float64{}
	for _, rec := range recs {
		stage, _ := rec["stage"].(string)
		step, ok := rec["step"].(float64)
		if !ok || !strings.Contains(stage, "/seed-") {
			continue
		}
		for _, m := range Metrics {
			v, ok := rec[m.Key].(float64)
			if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			k := key{stage, m.Key}
			if last[k] == nil {
				last[k] = map[float64]float64{}
			}
			last[k][step] = v
		}
	}
	data := map[string]map[string][]seedCurve{}
	for k, bySteps := range last {
		arm, seedStr, _ := strings.Cut(k.stage, "/seed-")
		seed, err := strconv.Atoi(seedStr)
		if err != nil {
			continue
		}
		c := seedCurve{seed: seed}
		steps := make([]float64, 0, len(bySteps))
		for s := range bySteps {
			steps = append(steps, s)
		}
		sort.Float64s(steps)
		for _, s := range steps {
			c.x, c.y = append(c.x, s), append(c.y, bySteps[s])
		}
		if data[arm] == nil {
			data[arm] = map[string][]seedCurve{}
		}
		data[arm][k.metric] = append(data[arm][k.metric], c)
	}
	ranges := map[string]*[2]float64{}
	for _, byMetric := range data {
		for m, curves := range byMetric {
			for _, c := range curves {
				for _, v := range c.y {
					r := ranges[m]
					if r == nil {
						r = &[2]float64{v, v}
						ranges[m] = r
					}
					r[0], r[1] = math.Min(r[0], v), math.Max(r[1], v)
				}
			}
		}
	}
	var rows []CurveRow
	for _, arm := range armOrder(data, order) {
		row := CurveRow{Arm: arm}
		for _, m := range Metrics {
			curves := data[arm][m.Key]
			sort.Slice(curves, func(i, j int) bool { return curves[i].seed < curves[j].seed })
			lines := make([]Line, len(curves))
			for i, c := range curves {
				lines[i] = Line{Name: fmt.Sprintf("seed %d", c.seed), X: c.x, Y: c.y, Color: color(c.seed)}
			}
			row.Charts = append(row.Charts, newLineChart(arm+": "+m.Title, "iteration", m.YLabel, lines, ranges[m.Key]))
		}
		rows = append(rows, row)
	}
	return rows
}

// armOrder lists the keys of data in the order of order, then the others
// by name.
func armOrder[V any](data map[string]V, order []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range order {
		if _, ok := data[a]; ok && !seen[a] {
			out, seen[a] = append(out, a), true
		}
	}
	for _, a := range sortedKeys(data) {
		if !seen[a] {
			out = append(out, a)
		}
	}
	return out
}
