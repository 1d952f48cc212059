package reproduce

import (
	"fmt"
	"io"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// failureClassifier is what a task offers when it can say why a
// conversation failed (mathchat.Task: never asks, answers before all
// facts, miscopies, ...). The report's table of classes per arm and
// decoding shows which failures RL changes and which it leaves: when the
// greedy mode does not move, the classes say what the mode still does.
type failureClassifier interface {
	FailureClasses() []string
	FailuresOf(ep *dialog.Episode) []string
}

// failureCounts is one arm's episodes (all seeds) in each class, and how
// many episodes and failures that is.
type failureCounts struct {
	episodes, failed int
	in               map[string]int
}

// countFailures classifies every episode of evals.
func countFailures(c failureClassifier, evals []evaluation) failureCounts {
	n := failureCounts{in: map[string]int{}}
	for _, e := range evals {
		for i := range e.eps {
			n.episodes++
			classes := c.FailuresOf(&e.eps[i])
			if !e.eps[i].Success {
				n.failed++
			}
			for _, k := range classes {
				n.in[k]++
			}
		}
	}
	return n
}

// failureSection writes, for a task that classifies its failures, one
// table per decoding: each arm's share of episodes (over its seeds) that
// failed, and that showed each class. A failed episode can show several.
func (r *run) failureSection(w io.Writer) error {
	c, ok := r.t.(failureClassifier)
	if !ok {
		return nil
	}
	classes := c.FailureClasses()
	fmt.Fprintln(w, "## Why conversations fail")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each arm's held-out episodes (all its seeds) by what went wrong, as shares of its episodes; a failed conversation can show several classes, read from its transcript with the users' own reading of the agent's messages (the task's failure classifier). A class RL does not move is what it leaves of the base's mode.")
	for _, d := range r.decodings() {
		evals, err := r.loadEvals(d)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s:\n\n", d.name)
		fmt.Fprintf(w, "| arm | failed | %s |\n", strings.Join(classes, " | "))
		fmt.Fprintf(w, "| --- | --- |%s\n", repeatCell(len(classes)))
		for _, arm := range r.arms() {
			n := countFailures(c, evals[arm])
			if n.episodes == 0 {
				continue
			}
			fmt.Fprintf(w, "| %s | %.3f |", arm, float64(n.failed)/float64(n.episodes))
			for _, k := range classes {
				fmt.Fprintf(w, " %.3f |", float64(n.in[k])/float64(n.episodes))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	return nil
}
