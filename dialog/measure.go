package dialog

// Measure is what a task's episodes are judged by, as the task declares
// it (package task's registry): success, or one of the task's
// Score.Metrics with its unit and direction. Reports, summaries and the
// command line ask the task for its Measure instead of guessing the kind
// from which metrics an episode happens to carry.
type Measure struct {
	// Name is the measure as reports print it: "success", "BLEU".
	Name string
	// Metric is the Score.Metrics key the measure reads; "" for success.
	Metric string
	// Unit says the scale of a value: "rate" (0 to 1) or "points"
	// (0 to 100).
	Unit string
	// Scale is the value of a reward of 1 in the measure's unit (1 for a
	// rate, 100 for points): a task's reward is its measure over Scale.
	Scale float64
	// LowerIsBetter is set for measures where less is better (an error
	// rate); false for success and BLEU.
	LowerIsBetter bool
}

// Success is the measure of tasks judged by success alone.
var Success = Measure{Name: "success", Unit: "rate", Scale: 1}

// IsSuccess reports whether m is success rather than a task metric.
func (m Measure) IsSuccess() bool { return m.Metric == "" }

// Of is episode ep's value of m: 1 or 0 for success, else its metric.
func (m Measure) Of(ep Episode) float64 {
	if m.IsSuccess() {
		if ep.Success {
			return 1
		}
		return 0
	}
	return ep.Metrics[m.Metric]
}

// The Score.Metrics keys that more than one package names: the tasks that
// score text (docedit) write them, and eval.Summary repeats them in fields
// of their own for scripts.
const (
	MetricBLEU      = "bleu"      // sacreBLEU sentence BLEU, 0–100
	MetricChrF      = "chrf"      // chrF, 0–100
	MetricDelivered = "delivered" // 1 when the agent delivered an outcome, else 0
)
