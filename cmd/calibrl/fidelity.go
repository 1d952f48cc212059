package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/fidelity"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

func newFidelityCmd() *cobra.Command {
	var (
		taskName, data, sims, out, logs string
		cfg                             fidelity.Config
		asJSON                          bool
	)
	cmd := &cobra.Command{
		Use:   "fidelity",
		Short: "Measure how faithfully a user simulator stands in for the human proxy",
		Long: `fidelity compares each simulator with the human proxy on identical held-out
contexts (the test split, personas never seen in the logs):

  δ_t, δ̄         total-variation distance between the distributions of user
                 dialogue acts (provide-fact, clarify, accept, reject, leak,
                 end) at user turn t, and its mean; δ floor is the human
                 against itself under another seed: sampling noise
  sycophancy     how often a wrong final answer (or bad document) is accepted
  leak           how often asking for the answer (or target) gets it
  oversharing    the fraction of hidden facts given away in the opening
  end agree      how often the simulator ends when the human would
  sim-to-real    the scripted agents' success against the simulator minus
                 against the human (mean absolute value)
  NLL            per-token NLL of held-out human user turns (learned only)

The objective an agent trains on is off by up to R_max·Σ_t (H−t)·δ_t, so δ̄
is the headline number. With --out DIR a plot of δ_t by turn and the JSON are
written there.

With --logs FILE (your own human logs, or episodes) the simulators are
measured against the logged people instead of the proxy, on the file's
held-out (split test) conversations, teacher-forced: the per-token NLL and
perplexity of the real user turns (learned simulators).`,
		Example: `  calibrl fidelity --task mathchat --sim naive
  calibrl fidelity --task mathchat --sim naive,learned:sim,learned-nocontext:sim-blind --out runs/fid
  calibrl fidelity --task mathchat --sim learned:sim --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := resolveData(&taskName, &data); err != nil {
				return err
			}
			t, err := task.Lookup(taskName)
			if err != nil {
				return err
			}
			ft, ok := t.(fidelity.Task)
			if !ok {
				return fmt.Errorf("task %s cannot be probed", taskName)
			}
			human, err := spec.User(t, "human")
			if err != nil {
				return err
			}
			names := spec.Agents(sims)
			if len(names) == 0 {
				return fmt.Errorf("--sim: name at least one simulator")
			}
			if logs != "" {
				return logFidelity(cmd, t, taskName, logs, names, asJSON)
			}
			var reps []fidelity.Report
			for _, name := range names {
				sim, err := spec.User(t, name)
				if err != nil {
					return err
				}
				var nll func([]dialog.Episode) float64
				if l, ok := sim.(*chatlm.User); ok {
					nll = func(eps []dialog.Episode) float64 { return train.UserNLL(l, eps) }
				}
				rep, err := fidelity.Measure(cmd.Context(), ft, name, sim, human, cfg, nll)
				if err != nil {
					return err
				}
				reps = append(reps, rep)
			}
			if out != "" {
				if err := os.MkdirAll(out, 0o755); err != nil {
					return err
				}
				if err := fidelity.Plot(filepath.Join(out, "fidelity_delta"), reps); err != nil {
					return err
				}
				data, _ := json.MarshalIndent(reps, "", "  ")
				if err := os.WriteFile(filepath.Join(out, "fidelity.json"), append(data, '\n'), 0o644); err != nil {
					return err
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				for _, r := range reps {
					if err := enc.Encode(r); err != nil {
						return err
					}
				}
				return nil
			}
			return fidelity.WriteTable(cmd.OutOrStdout(), reps)
		},
	}
	f := cmd.Flags()
	f.StringVar(&taskName, "task", "mathchat", "task: "+joinNames(task.Names()))
	addDataFlag(f, &data)
	f.StringVar(&sims, "sim", "naive", "comma-separated simulators: naive, learned:DIR, learned-nocontext:DIR")
	f.IntVarP(&cfg.Instances, "episodes", "n", 200, "held-out contexts per scripted agent and per probe")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed shared by the simulator and the human")
	f.IntVar(&cfg.MaxTurns, "max-turns", 10, "turn limit of the scripted agents' episodes")
	f.IntVar(&cfg.Turns, "turns", 6, "user-turn indexes δ_t covers (0 is the opening)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object per simulator")
	f.StringVar(&out, "out", "", "folder for fidelity.json and the δ_t plot")
	f.StringVar(&logs, "logs", "", "measure against these logged conversations instead of the human proxy: their held-out (test) ones, episodes or human logs (convert-logs)")
	return cmd
}

// logFidelity measures each simulator against logged conversations: the
// held-out (test) ones of logs, teacher-forced.
func logFidelity(cmd *cobra.Command, t task.Task, taskName, logs string, sims []string, asJSON bool) error {
	eps, err := loadTaskLogs(logs, taskName)
	if err != nil {
		return err
	}
	var held []dialog.Episode
	userTurns := 0
	for _, ep := range eps {
		if ep.Split == "test" {
			held = append(held, ep)
			for _, m := range ep.Messages {
				if m.Role == dialog.RoleUser {
					userTurns++
				}
			}
		}
	}
	if len(held) == 0 {
		return fmt.Errorf("%s: no held-out (split test) conversations among %d", logs, len(eps))
	}
	type row struct {
		Sim           string   `json:"sim"`
		Logs          string   `json:"logs"`
		Conversations int      `json:"conversations"`
		UserTurns     int      `json:"user_turns"`
		NLL           *float64 `json:"nll,omitempty"`
		Perplexity    *float64 `json:"perplexity,omitempty"`
	}
	var rows []row
	for _, name := range sims {
		sim, err := spec.User(t, name)
		if err != nil {
			return err
		}
		r := row{Sim: name, Logs: logs, Conversations: len(held), UserTurns: userTurns}
		if l, ok := sim.(*chatlm.User); ok {
			nll := train.UserNLL(l, held)
			ppl := math.Exp(nll)
			r.NLL, r.Perplexity = &nll, &ppl
		}
		rows = append(rows, r)
	}
	w := cmd.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(w, "against %s: %d held-out conversations, %d user turns (teacher-forced)\n", logs, len(held), userTurns)
	for _, r := range rows {
		if r.NLL == nil {
			fmt.Fprintf(w, "%-28s NLL n/a (not a learned simulator)\n", r.Sim)
			continue
		}
		fmt.Fprintf(w, "%-28s NLL %.3f per token, perplexity %.2f\n", r.Sim, *r.NLL, *r.Perplexity)
	}
	return nil
}
