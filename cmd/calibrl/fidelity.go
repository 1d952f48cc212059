package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/fidelity"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/task/level"
	"github.com/calibrl/calibrl/train"
)

func newFidelityCmd() *cobra.Command {
	var (
		taskName, data, sims, out, logs, agents string
		sliceName                               string
		temperature                             float64
		cfg                                     fidelity.Config
		asJSON                                  bool
	)
	cmd := &cobra.Command{
		Use:   "fidelity",
		Short: "Measure how faithfully a user simulator stands in for the human proxy",
		Long: `fidelity compares each simulator with the human proxy on identical held-out
contexts (the test split, personas never seen in the logs; --slice validation
plays the validation problems instead, for a study whose test problems must
stay unread until its verdict):

  δ_t, δ̄         total-variation distance between the distributions of user
                 dialogue acts (provide-fact, clarify, accept, reject, leak,
                 end) at user turn t, and its mean; δ floor is the human
                 against itself under another seed: sampling noise
  sycophancy     how often a wrong final answer (or bad document) is accepted
  leak           how often asking for the answer (or target) gets it
  oversharing    the fraction of hidden facts given away in the opening
  end agree      how often the simulator ends when the human would
  sim-to-real    each agent's success against the simulator minus against
                 the human, paired on the same problems and seeds (the mean
                 absolute value over agents). --agents names the agents:
                 scripted profiles (default: every one; a bare name is a
                 profile), lm:DIR (a trained policy, with the task's tool,
                 greedy unless --temperature) or remote:MODEL, so the gap
                 is measured on RL policies, not only on the scripted
                 agents the simulator was fitted to
  NLL            per-token NLL of held-out human user turns (learned only)
  per-history    on --histories validation conversations (the validation
                 slice: problems and personas no verdict reads) of the
                 scripted agents with the human proxy: at every history
                 (the conversation up to a user turn) --samples draws of
                 the simulator's and of the proxy's next turn, the total
                 variation between their act distributions (TV to proxy),
                 the proxy against a second set of its own draws (floor:
                 the sampling bias at that size) and their difference
                 (excess ± se, ≈ 0 for a faithful simulator), by user turn
                 too; facts true is the share of the numbers each user
                 states that the problem holds (copy accuracy)

The objective an agent trains on is off by up to R_max·Σ_t (H−t)·δ_t, so δ̄
is the headline number. With --out DIR a plot of δ_t by turn and the JSON are
written there.

With --logs FILE (your own human logs in the calibrl.humanlog/v1 schema, see
convert-logs, or episodes JSONL) the simulators are measured against the
logged people instead of the proxy, on the file's held-out (split test)
conversations, teacher-forced: at every logged user turn the simulator reads
the logged history up to that turn and writes its own. Any user can be
measured (learned:DIR, remote:MODEL, naive, human). Per simulator:

  NLL, ppl       per-token NLL and perplexity of the real user turns
                 (learned simulators)
  act agree      share of user turns where the simulator's dialogue act
                 equals the person's, overall and per user turn t
  δ_t, δ̄         total-variation distance between the simulator's and the
                 people's act distributions at user turn t (over the
                 conversations that reach it) and its mean; δ_t can be 0
                 while agreement is 0 (the right acts to the wrong people),
                 so read both
  end P, end R   termination precision P(person ended | simulator ended)
                 and recall P(simulator ended | person ended); the
                 simulator ends where it closes the conversation
  leak           share of user turns that give away the ground truth or a
                 hidden fact no earlier agent turn asked for, beside the
                 logged people's own rate on the same turns. Asked: a
                 question naming the answer, result or solution (or the
                 full text, for documents) that proposes no number, or a
                 question with one of the fact's cue words
With --out DIR the JSON is written to DIR/fidelity-logs.json.`,
		Example: `  calibrl fidelity --task mathchat --sim naive
  calibrl fidelity --task mathchat --sim naive,learned:sim,learned-nocontext:sim-blind --out runs/fid
  calibrl fidelity --task mathchat --sim learned:sim --agents careful,lm:runs/q/checkpoints/calibrated-interactive/seed-0 --temperature 1
  calibrl fidelity --task mathchat --sim learned:sim,naive,human --logs held-out.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkTemperature(cmd, temperature); err != nil {
				return err
			}
			if err := resolveData(&taskName, &data); err != nil {
				return err
			}
			n, err := task.ParseName(taskName)
			if err != nil {
				return err
			}
			t, err := task.Build(n)
			if err != nil {
				return err
			}
			if cfg.MaxTurns == 0 {
				cfg.MaxTurns = n.MaxTurns()
			}
			slice, err := eval.SliceNamed(sliceName)
			if err != nil {
				return fmt.Errorf("--slice: %w", err)
			}
			if err := slice.Check(cfg.Instances); err != nil {
				return fmt.Errorf("--episodes: %w", err)
			}
			// Data of finite size (--data) may hold fewer problems than
			// the slice asks: refused as eval refuses it.
			if err := checkProblems(t, taskName, eval.TestSlice.Name, slice.Start, cfg.Instances); err != nil {
				return err
			}
			// The seed names the run; the slice keeps its users apart
			// from the other slice's (eval --slice does the same).
			cfg.Start, cfg.Seed = slice.Start, slice.Seed(cfg.Seed)
			ft, ok := t.(fidelity.Task)
			if !ok {
				return fmt.Errorf("task %s cannot be probed", taskName)
			}
			human, err := t.User(dialog.Human)
			if err != nil {
				return err
			}
			names := spec.Agents(sims)
			if len(names) == 0 {
				return fmt.Errorf("--sim: name at least one simulator")
			}
			if logs != "" {
				return logFidelity(cmd, t, taskName, logs, names, fidelity.LogConfig{Turns: cfg.Turns, Seed: cfg.Seed}, out, asJSON)
			}
			cfg.Agents = spec.Agents(agents)
			cfg.Agent = func(name string) (dialog.Agent, error) { return fidelityAgent(t, name, temperature) }
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
	f.StringVar(&sims, "sim", dialog.Naive.String(), "comma-separated simulators: naive, human, learned:DIR, learned-nocontext:DIR, learned+copy:DIR (stating only what the problem holds: numbers, support's whole values; learned+copy=numbers|values:DIR names the kind), remote:MODEL")
	f.StringVar(&agents, "agents", "", "comma-separated agents for the sim-to-real gap: scripted:PROFILE (or a bare profile), lm:DIR, remote:MODEL (default every scripted profile)")
	f.Float64Var(&temperature, "temperature", -1, "sampling temperature of lm:DIR agents; -1 plays greedy, as eval does")
	f.IntVarP(&cfg.Instances, "episodes", "n", 200, "held-out contexts per agent and per probe")
	f.StringVar(&sliceName, "slice", eval.TestSlice.Name, "part of the test split the agents' episodes and the probes play: test (the first problems, the verdict's) or validation (from problem 20000, users seeded apart; for studies that must not read the test problems). The per-history fidelity always uses validation conversations")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed shared by the simulator and the human")
	f.IntVar(&cfg.MaxTurns, "max-turns", 0, "turn limit of the agents' episodes (default the task level's: N at hN, else "+strconv.Itoa(level.DefaultMaxTurns)+")")
	f.IntVar(&cfg.Turns, "turns", 6, "user-turn indexes δ_t covers (0 is the opening)")
	f.IntVar(&cfg.Histories, "histories", 60, "validation conversations for the per-history fidelity (0: none)")
	f.IntVar(&cfg.Samples, "samples", 16, "draws of each user's next turn per history")
	f.BoolVar(&asJSON, "json", false, "print one JSON object per simulator")
	f.StringVar(&out, "out", "", "folder for fidelity.json and the δ_t plot (fidelity-logs.json with --logs)")
	f.StringVar(&logs, "logs", "", "measure against these logged conversations instead of the human proxy: their held-out (test) ones, teacher-forced; episodes or human logs (convert-logs)")
	return cmd
}

// fidelityAgent builds an agent of --agents: spec.Agent's (an lm:DIR
// policy gets the task's tool there), with --temperature applied to a
// checkpoint policy when given (≥ 0).
func fidelityAgent(t task.Task, name string, temperature float64) (dialog.Agent, error) {
	a, err := spec.Agent(t, name)
	if err != nil {
		return nil, fmt.Errorf("--agents: %w", err)
	}
	setTemperature(a, temperature)
	return a, nil
}

// logRow is one simulator's line of `fidelity --logs --json`.
type logRow struct {
	Logs string `json:"logs"`
	fidelity.LogReport
}

// logFidelity measures each simulator against logged conversations: the
// held-out (test) ones of logs, teacher-forced (fidelity.MeasureLogs).
func logFidelity(cmd *cobra.Command, t task.Task, taskName, logs string, sims []string, cfg fidelity.LogConfig, out string, asJSON bool) error {
	eps, err := loadTaskLogs(cmd.Context(), logs, taskName)
	if err != nil {
		return err
	}
	var held []dialog.Episode
	for _, ep := range eps {
		if ep.Split == "test" {
			held = append(held, ep)
		}
	}
	if len(held) == 0 {
		return fmt.Errorf("%s: no held-out (split test) conversations among %d (collect some with calibrl collect --split test)", logs, len(eps))
	}
	var rows []logRow
	var reps []fidelity.LogReport
	for _, name := range sims {
		sim, err := spec.User(t, name)
		if err != nil {
			return err
		}
		var nll func([]dialog.Episode) float64
		if l, ok := sim.(*chatlm.User); ok {
			nll = func(eps []dialog.Episode) float64 { return train.UserNLL(l, eps) }
		}
		rep, err := fidelity.MeasureLogs(cmd.Context(), name, sim, held, cfg, nll)
		if err != nil {
			return fmt.Errorf("%s: %w", logs, err)
		}
		rows, reps = append(rows, logRow{Logs: logs, LogReport: rep}), append(reps, rep)
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		data, _ := json.MarshalIndent(rows, "", "  ")
		if err := os.WriteFile(filepath.Join(out, "fidelity-logs.json"), append(data, '\n'), 0o644); err != nil {
			return err
		}
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
	fmt.Fprintf(w, "against %s: %d held-out conversations, %d user turns (teacher-forced)\n\n", logs, len(held), reps[0].UserTurns)
	return fidelity.WriteLogTable(w, reps)
}
