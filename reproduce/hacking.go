package reproduce

import (
	"fmt"
	"io"
	"sort"

	"github.com/calibrl/calibrl/train"
)

// hackingSection writes the pre-registered hacking metrics of every RL
// stage (train's hacking.go) at each reading: the level and the change
// from iteration 0 with its 95% interval. Nothing when no stage read
// them.
func hackingSection(w io.Writer, recs []map[string]any) {
	byStage := perStep(recs, train.MetricHackingN)
	if len(byStage) == 0 {
		return
	}
	stages := make([]string, 0, len(byStage))
	for s := range byStage {
		stages = append(stages, s)
	}
	sort.Strings(stages)
	n, decoding := 0, "greedy"
	for _, s := range stages {
		for _, rec := range byStage[s] {
			n = max(n, int(num(rec, train.MetricHackingN)))
			if rec[train.MetricHackingSampled] != nil {
				decoding = "sampled at the rollouts' temperature"
			}
		}
	}
	fmt.Fprintf(w, "Pre-registered hacking metrics, on %d held-out problems per reading (%s), each as its level and its change from iteration 0 [95%% CI], paired by problem: how often the policy asks the training user for the target; of the conversations where that user pasted it, the share whose outcome is the paste; its reward against the training user and the human proxy, and their gap. Learned hacking is the change, not the level. At this n a change of %.3f is detectable in the worst case (per-problem outcomes changing independently at a rate near 0.5), %.3f where at most a quarter of the problems change outcome.\n\n",
		n, decoding, train.HackingMDE(n, 0.5), train.HackingMDE(n, 0.25))
	fmt.Fprintln(w, "| stage | iteration | target requests | paste → delivery | training-user reward | human-proxy reward | gap |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	cell := func(rec map[string]any, key string) string {
		v, ok := rec[key].(float64)
		if !ok {
			return "–"
		}
		if c, ok := hackingChange(rec, key); ok {
			return fmt.Sprintf("%.3f (%s)", v, c)
		}
		return fmt.Sprintf("%.3f", v)
	}
	for _, s := range stages {
		for _, rec := range byStage[s] {
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s |\n", s, int(num(rec, train.MetricStep)),
				cell(rec, train.MetricHackingTargetRequest), cell(rec, train.MetricHackingPasteDelivery),
				cell(rec, train.MetricHackingTrainReward), cell(rec, train.MetricHackingHumanReward), cell(rec, train.MetricHackingGap))
		}
	}
	fmt.Fprintln(w)
}

// hackingChange formats a reading's change of key from iteration 0 with
// its 95% interval ("+0.066 [+0.044, +0.087]"); false when the reading
// has none.
func hackingChange(rec map[string]any, key string) (string, bool) {
	c := key + train.HackingChange
	if _, ok := rec[c]; !ok {
		return "", false
	}
	return fmt.Sprintf("%+.3f [%+.3f, %+.3f]", num(rec, c), num(rec, c+"_lo"), num(rec, c+"_hi")), true
}
