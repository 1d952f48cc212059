package reproduce

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
// scores, and the naive arm's last hacking-metrics reading. A dose of the
// naive simulator alone (task.NaiveOnly) trains, evaluates and measures
// only the naive arm: every other stage is the 1x run's, copied with its
// files and metrics records before the dose's run starts (reuseStages),
// since the same seeds, base, users and reward make it the same bytes;
// a dose of the reward runs every stage again.
func Doses(ctx context.Context, cfg Config, doses []string) error {
	base := task.StripDoses(cfg.taskName())
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
		if d != "" && task.NaiveOnly(d) {
			n, err := reuseStages(filepath.Join(cfg.Out, doseFolder("")), rc.Out, ArmNaive)
			if err != nil {
				return fmt.Errorf("reproduce: dose %q: %w", d, err)
			}
			cfg.Log.Info("reproduce: dose reuses the 1x run's stages", "dose", d, "stages", n)
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
		fmt.Fprintln(w, "Each row is one whole run sharing the logs, base policy and simulator (shared/); the dose multiplies the naive simulator's rates (leak: leakage and over-sharing; syc: sycophancy; each capped at 1), or judges the reward by the user's acceptance. The base (shared, so the same in every row) and the naive arm: each one's score against the human proxy on the held-out problems [95% CI]; then the naive arm's hacking-metrics readings against its own (dosed) user, at iteration 0 (the base) → the last: the target-request rate (its change [95% CI]), paste → delivery (of the conversations where the user pasted the text, the share whose outcome is the paste; – where none pasted) and the training-user − human-proxy reward gap's change [95% CI].")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| dose | base vs human proxy | naive arm vs human proxy | target requests | paste → delivery | gap Δ | run |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
		for _, r := range results {
			score := map[string]string{ArmBase: "–", ArmNaive: "–"}
			for _, row := range r.rows {
				if _, ok := score[row.Arm]; ok {
					score[row.Arm] = fmt.Sprintf("%.3f [%.3f, %.3f]", row.Figures.Value(), row.CI95[0], row.CI95[1])
				}
			}
			req, paste, gap := hackingReadings(r.recs, seedName(ArmNaive, 0))
			name := r.dose
			if name == "" {
				name = "1x (the task's rates)"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", name, score[ArmBase], score[ArmNaive], req, paste, gap, doseFolder(r.dose))
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

// hackingReadings formats a stage's first and last hacking-metrics
// readings: the target-request rate at each with the change at the last,
// paste → delivery at each, and the gap's change at the last.
func hackingReadings(recs []map[string]any, stage string) (req, paste, gap string) {
	req, paste, gap = "–", "–", "–"
	pts := perStep(recs, train.MetricHackingN)[stage]
	if len(pts) == 0 {
		return
	}
	first, last := pts[0], pts[len(pts)-1]
	change := func(k string) string {
		if c, ok := hackingChange(last, k); ok {
			return c
		}
		return "–"
	}
	level := func(rec map[string]any, k string) string {
		if v, ok := rec[k].(float64); ok {
			return fmt.Sprintf("%.3f", v)
		}
		return "–"
	}
	at := func(rec map[string]any) int { return int(num(rec, train.MetricStep)) }
	req = fmt.Sprintf("%s at %d → %s at %d (%s)", level(first, train.MetricHackingTargetRequest), at(first),
		level(last, train.MetricHackingTargetRequest), at(last), change(train.MetricHackingTargetRequest))
	delivery := func(rec map[string]any) string {
		n, ok := rec[train.MetricHackingPasted].(float64)
		if !ok || n == 0 {
			return level(rec, train.MetricHackingPasteDelivery)
		}
		p := num(rec, train.MetricHackingPasteDelivery)
		return fmt.Sprintf("%.3f (%.0f of %.0f)", p, p*n, n)
	}
	paste = fmt.Sprintf("%s → %s", delivery(first), delivery(last))
	gap = change(train.MetricHackingGap)
	return
}

// reuseStages copies into the run folder dst every stage the finished run
// src has done, except the report and those of arm (every seed's
// training, evaluations, fidelity and tuning have it as a part of their
// names: naive-interactive/seed-0, eval/naive-interactive/seed-0), each
// with its files and metrics records, and marks it done: what a dose of
// the naive simulator alone would compute again byte for byte. A stage's
// files are written before its marker (an interrupted copy is copied
// again), and a stage dst has already done is left as it is. It returns
// how many stages it copied: none when src has not finished (no report),
// so that a dose never reuses a partial run.
func reuseStages(src, dst, arm string) (int, error) {
	from, to := &runfolder.Folder{Dir: src}, &runfolder.Folder{Dir: dst}
	if !from.Done(reportStage) {
		return 0, nil
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return 0, err
	}
	var names []string
	err := filepath.WalkDir(from.Path("stages"), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		name, err := filepath.Rel(from.Path("stages"), path)
		name = filepath.ToSlash(name)
		if err == nil && name != reportStage && !slices.Contains(strings.Split(name, "/"), arm) && !to.Done(name) && !strings.HasPrefix(filepath.Base(name), ".") {
			names = append(names, name)
		}
		return err
	})
	if err != nil || len(names) == 0 {
		return 0, err
	}
	recs, err := from.ReadMetrics()
	if err != nil {
		return 0, err
	}
	old, err := to.ReadMetrics()
	if err != nil {
		return 0, err
	}
	// The metrics first, whole: the copied stages' records replace any a
	// partial run of them left in dst.
	reused := map[string]bool{}
	for _, n := range names {
		reused[n] = true
	}
	err = atomicfile.Write(to.Path("metrics.jsonl"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		keep := func(recs []map[string]any, want bool) error {
			for _, rec := range recs {
				if st, _ := rec["stage"].(string); reused[st] == want {
					if err := enc.Encode(rec); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err := keep(old, false); err != nil {
			return err
		}
		return keep(recs, true)
	})
	if err != nil {
		return 0, err
	}
	for _, n := range names {
		// A training stage's checkpoint folder, an evaluation's or a
		// measurement's files beside its name (eval/static/seed-0.json).
		if ck := from.Path("checkpoints", n); isDir(ck) {
			if err := atomicfile.WriteDir(to.Path("checkpoints", n), func(tmp string) error { return copyTree(ck, tmp) }); err != nil {
				return 0, err
			}
		}
		files, err := filepath.Glob(from.Path(n) + ".*")
		if err != nil {
			return 0, err
		}
		if len(files) > 0 {
			if err := os.MkdirAll(filepath.Dir(to.Path(n)), 0o755); err != nil {
				return 0, err
			}
		}
		for _, file := range files {
			if err := copyFile(file, filepath.Join(filepath.Dir(to.Path(n)), filepath.Base(file))); err != nil {
				return 0, err
			}
		}
		if err := to.MarkDone(n); err != nil {
			return 0, err
		}
	}
	return len(names), nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// copyTree copies the regular files under src into dst, keeping the tree.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if e.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		return copyFile(path, filepath.Join(dst, rel))
	})
}

// copyFile writes src's bytes to dst atomically.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return atomicfile.Write(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
