package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/runreport"
)

func newReportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report RUNDIR",
		Short: "Render a reproduce run folder as report.html: verdict, seeds, training curves, fidelity, transcripts",
		Long: `report renders a finished reproduce run folder as one self-contained HTML
page, RUNDIR/report.html (reproduce writes it at the end of every run; this
re-renders it, for instance for a run made before the page existed):

  - the verdict on the paper's claims (summary.json "comparisons": the
    paired difference, its 95% interval, whether it holds, the paper's
    figures), each arm's figures and the spread of its RL seeds;
    secondary evaluations that summary.json holds (another decoding, such
    as greedy) get the same tables;
  - the training curves of every RL arm and seed from metrics.jsonl
    (monitor rewards against the training user and the human proxy, batch
    reward, KL to the base), each on a y axis fitted to its data;
  - the simulator's fidelity, when the run folder has fidelity/;
  - the first held-out problems under every arm side by side (seed 0),
    each user message marked with its dialogue act, each conversation
    with its success or failure.

Inline CSS and SVG only: no script, and nothing is fetched from anywhere.`,
		Example: `  calibrl report runs/mathchat-quick-seed1
  calibrl report results/mathchat-quick-calculator --out /tmp/quick.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := out
			if path == "" {
				path = filepath.Join(args[0], runreport.File)
			}
			if err := refuseRunFile(args[0], path); err != nil {
				return err
			}
			if err := runreport.WriteFile(args[0], path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", path)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the page's path (default RUNDIR/report.html)")
	return cmd
}

// refuseRunFile refuses a page path that is the run folder itself or a
// file of it other than its page (manifest.json, metrics.jsonl, an
// episodes file): the page would be written over what it is rendered
// from.
func refuseRunFile(dir, out string) error {
	if err := refuseInputs(out, input{"RUNDIR", dir}); err != nil {
		return err
	}
	if _, err := os.Stat(out); err != nil || filepath.Base(out) == runreport.File {
		return nil // a new file, or the page itself
	}
	d, err1 := filepath.EvalSymlinks(dir)
	o, err2 := filepath.EvalSymlinks(out)
	if err1 != nil || err2 != nil {
		return nil
	}
	d, _ = filepath.Abs(d)
	o, _ = filepath.Abs(o)
	if rel, err := filepath.Rel(d, o); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("--out %s is a file of the run folder %s: the page would replace what it is rendered from; choose another path", out, dir)
	}
	return nil
}
