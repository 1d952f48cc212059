package reproduce

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

// Doses runs the dose-response study: the pipeline of cfg once at the
// task's own rates (OUT/1x) and once per dose, each a set of task options
// that change only the naive simulator or the reward ("leak=0x",
// "syc=2x", "leak=2x:syc=2x", "reward=acceptance"; task.StripDoses), in
// OUT/DOSE. The runs share one set of logs, base policy and simulator
// (OUT/shared, made by Prepare: the human proxy's conversations do not
// depend on the naive simulator's rates), so the naive arm's difference
// between doses is the dose's alone. OUT/doses.md tabulates every
// setting, whatever it shows: the base's and the naive arm's human-proxy
// scores, and the naive arm's last hacking-metrics reading. Every
// arm is trained in every run (the other arms do not depend on the dose,
// so their rows repeat: a check of the sharing, at a cost).
func Doses(ctx context.Context, cfg Config, doses []string) error {
	base := task.StripDoses(cfg.Task)
	dosed := make(map[string]string, len(doses))
	for _, d := range doses {
		// WithDoses refuses anything but doses, so the dosed name
		// strips back to base.
		name, err := task.WithDoses(base, d)
		if err == nil {
			_, err = task.Lookup(name)
		}
		if err != nil {
			return fmt.Errorf("reproduce: dose %q: %w", d, err)
		}
		dosed[d] = name
	}
	shared := filepath.Join(cfg.Out, "shared")
	if err := Prepare(ctx, PrepareConfig{Tasks: []string{base}, MaxTurns: []int{cfg.Preset.MaxTurns}, Preset: cfg.Preset,
		Out: shared, Seed: cfg.Seed, Log: cfg.Log, Progress: cfg.Progress, Jobs: cfg.Jobs}); err != nil {
		return fmt.Errorf("reproduce: doses: %w", err)
	}
	type result struct {
		dose string
		rows []Row
		recs []map[string]any
	}
	var results []result
	for _, d := range append([]string{""}, doses...) {
		rc := cfg
		rc.Task, rc.Shared, rc.Out = base, shared, filepath.Join(cfg.Out, doseFolder(d))
		if d != "" {
			rc.Task = dosed[d]
		}
		rows, err := Run(ctx, rc)
		if err != nil {
			return fmt.Errorf("reproduce: dose %q: %w", d, err)
		}
		f := &runfolder.Folder{Dir: rc.Out}
		recs, err := f.ReadMetrics()
		if err != nil {
			return fmt.Errorf("reproduce: dose %q: %w", d, err)
		}
		results = append(results, result{d, rows, recs})
	}
	return atomicfile.Write(filepath.Join(cfg.Out, "doses.md"), func(w io.Writer) error {
		fmt.Fprintf(w, "# Dose-response: %s, %s preset, seed %d\n\n", base, cfg.Preset.Name, cfg.Seed)
		fmt.Fprintln(w, "Each row is one whole run sharing the logs, base policy and simulator (shared/); the dose multiplies the naive simulator's rates (leak: leakage and over-sharing; syc: sycophancy; each capped at 1), or judges the reward by the user's acceptance. The base (shared, so the same in every row) and the naive arm: each one's score against the human proxy on the held-out problems [95% CI], and the naive arm's last hacking-metrics reading (iteration, change of the target-request rate and of the training-user − human-proxy gap from iteration 0 [95% CI], paste → delivery).")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| dose | base vs human proxy | naive arm vs human proxy | target requests Δ | gap Δ | paste → delivery | run |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
		for _, r := range results {
			score := map[string]string{ArmBase: "–", ArmNaive: "–"}
			for _, row := range r.rows {
				if _, ok := score[row.Arm]; ok {
					score[row.Arm] = fmt.Sprintf("%.3f [%.3f, %.3f]", row.Figures.Value(), row.CI95[0], row.CI95[1])
				}
			}
			req, gap, paste := lastHacking(r.recs, seedName(ArmNaive, 0))
			name := r.dose
			if name == "" {
				name = "1x (the task's rates)"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", name, score[ArmBase], score[ArmNaive], req, gap, paste, doseFolder(r.dose))
		}
		fmt.Fprintln(w)
		return nil
	})
}

// doseFolder is the run folder of a dose under the study's.
func doseFolder(dose string) string {
	if dose == "" {
		return "1x"
	}
	return strings.NewReplacer(":", "_", "=", "-").Replace(dose)
}

// lastHacking formats a stage's last hacking-metrics reading: the change
// of the target-request rate and of the gap, and paste → delivery.
func lastHacking(recs []map[string]any, stage string) (req, gap, paste string) {
	req, gap, paste = "–", "–", "–"
	pts := perStep(recs, train.MetricHackingN)[stage]
	if len(pts) == 0 {
		return
	}
	rec := pts[len(pts)-1]
	change := func(k string) string {
		c := k + train.HackingChange
		if _, ok := rec[c]; !ok {
			return "–"
		}
		return fmt.Sprintf("%+.3f [%+.3f, %+.3f] at %d", num(rec, c), num(rec, c+"_lo"), num(rec, c+"_hi"), int(num(rec, train.MetricStep)))
	}
	req, gap = change(train.MetricHackingTargetRequest), change(train.MetricHackingGap)
	if v, ok := rec[train.MetricHackingPasteDelivery].(float64); ok {
		paste = fmt.Sprintf("%.3f", v)
	}
	return
}
