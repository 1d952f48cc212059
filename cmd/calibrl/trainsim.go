package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/humanlog"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/sft"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/tokenizer"
	"github.com/calibrl/calibrl/train"
)

func newTrainSimCmd() *cobra.Command {
	var (
		taskName, data, logs, out, presetName, tokPath string
		noOracle, noCheck, asJSON                      bool
		seed                                           uint64
		steps                                          int
		selectBy                                       string
		selectConvs, selectSamples                     int
	)
	cmd := &cobra.Command{
		Use:   "train-sim",
		Short: "Phase I: calibrate a user simulator on logged human conversations",
		Long: `train-sim fits a user simulator to the user side of logged conversations
(from 'calibrl collect'): a small transformer, conditioned on the oracle
context (the user's opening, hidden facts or edits, the ground truth and the
persona), trained by next-token NLL on the user's turns only. The user's
choice to end the conversation is a token it learns to emit.

A tenth of the logs is held out; training stops early when the held-out NLL
stops improving. Which weights are kept (--select): fidelity (the default)
keeps, among the evaluations, the weights whose per-history fidelity to the
human proxy is best — at each evaluation the simulator being fitted and the
proxy are each sampled --select-samples times at every history of
--select-conversations validation conversations (the scripted agents with
the proxy on the validation slice, never the test problems; see 'calibrl
fidelity'), and the lower excess distance wins, the held-out NLL breaking
ties within a standard error; nll keeps the lowest held-out NLL, as before. Checkpoints are written as it
goes (OUT/last, OUT/best); run the same command again to resume an
interrupted run. Use the result as --user learned:OUT.

Part of the oracle context is the task's check: after every agent turn that
delivers an outcome (an answer, a revised document) the simulator is shown
"Check: right." or "Check: wrong." — the comparison a person makes against
the answer they hold. An LLM simulator makes it itself; an embedded one
trained on a few thousand logs does not learn it (it learns that careful-
looking answers get accepted, wrong or not: see the verdicts in 'calibrl
fidelity'). --no-check leaves it out.

--no-oracle-context trains the ablation that sees only the dialogue (use it
as --user learned-nocontext:OUT): without the ground truth (or the check) a
simulator cannot tell a right answer from a wrong one.`,
		Example: `  calibrl collect --task mathchat --agent scripted:careful,sloppy,guesser,answer-seeker -n 2000 --out logs.jsonl
  calibrl train-sim --task mathchat --logs logs.jsonl --out sim --preset quick
  calibrl eval --task mathchat --agent scripted:careful --user learned:sim`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := atLeast(cmd, 0, false, "steps"); err != nil {
				return err
			}
			p, err := presetTask(presetName, &taskName, &data) // the task and budgets reproduce gives it
			if err != nil {
				return err
			}
			eps, err := loadTaskLogs(cmd.Context(), logs, taskName)
			if err != nil {
				return err
			}
			t, err := task.Lookup(taskName)
			if err != nil {
				return err
			}
			cfg := sft.Config{Model: p.Sim, SFT: p.SimSFT.Config(seed), Vocab: p.Vocab, Oracle: !noOracle}
			if !noCheck {
				cfg.Judge = chatlm.TaskJudge(t)
			}
			// The task's notes (:userledger) are the task's, not the
			// check's: --no-check leaves them on, so the simulator plays
			// the task it was fitted on (spec refuses a mismatch).
			cfg.UserNotes = chatlm.UserNotesOf(t)
			if steps > 0 {
				cfg.SFT.Steps = steps
			}
			if tokPath != "" {
				if cfg.Tokenizer, err = tokenizer.Load(tokPath); err != nil {
					return err
				}
			}
			switch selectBy {
			case "nll":
			case sft.SelectFidelity:
				if cfg.Select, err = sft.ValidationSelector(cmd.Context(), t, cfg, spec.DefaultGen(), p.MaxTurns, seed, selectConvs, selectSamples); err != nil {
					return err
				}
			default:
				return fmt.Errorf("--select %q: want fidelity or nll", selectBy)
			}
			slog.Info("train-sim", "task", taskName, "select", selectBy, "logs", len(eps), "preset", p.Name, "oracle_context", cfg.Oracle, "steps", cfg.SFT.Steps, "out", out)
			meta, err := sft.Simulator(cmd.Context(), eps, cfg, out, sftProgress("train-sim", cfg.SFT.Steps))
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(meta)
			}
			r := meta.Result
			kept := fmt.Sprintf("best at step %d", r.BestStep)
			if r.Selected != nil {
				kept = fmt.Sprintf("kept step %d, per-history excess %+.3f ± %.3f", r.BestStep, *r.Selected, *r.SelectedSE)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "simulator %s: %d steps, train NLL %.3f → %.3f, held-out NLL %.3f → %.3f (%s), %.0f tokens/s\n",
				out, r.Steps, r.FirstNLL, r.TrainNLL, r.FirstVal, r.ValNLL, kept, r.TokensPerS)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&taskName, "task", "mathchat", "task the logs belong to")
	addDataFlag(f, &data)
	f.StringVar(&logs, "logs", "", "episodes JSONL from 'calibrl collect', or your own human logs (convert-logs); a message may hold at most 1 MiB (required)")
	f.StringVar(&out, "out", "", "checkpoint folder to write (required)")
	f.StringVar(&presetName, "preset", "quick", "budget: "+joinNames(preset.Names()))
	f.StringVar(&tokPath, "tokenizer", "", "tokenizer.json to use instead of training one on the logs")
	f.BoolVar(&noOracle, "no-oracle-context", false, "train the ablation that does not see the oracle context")
	f.BoolVar(&noCheck, "no-check", false, "do not show the simulator the task's verdict on each delivered answer or document (see --help)")
	f.BoolVar(&asJSON, "json", false, "print the checkpoint's metadata as JSON")
	f.Uint64Var(&seed, "seed", 1, "seed of initialisation, validation split and batch order")
	f.IntVar(&steps, "steps", 0, "override the preset's number of optimizer steps")
	f.StringVar(&selectBy, "select", sft.SelectFidelity, "which weights are kept: fidelity (per-history fidelity to the human proxy on validation conversations, NLL breaking ties) or nll (the lowest held-out NLL)")
	f.IntVar(&selectConvs, "select-conversations", sft.SelectConversations, "validation conversations --select fidelity measures at each evaluation")
	f.IntVar(&selectSamples, "select-samples", sft.SelectSamples, "draws of each user's next turn per history for --select fidelity")
	cmd.MarkFlagRequired("logs")
	cmd.MarkFlagRequired("out")
	return cmd
}

// loadTaskLogs reads logs (episodes, or human logs of the
// calibrl.humanlog schema) and keeps the task's episodes, refusing a file
// of another task.
// Episodes are read one at a time and the run's stop honoured between
// them (parsing 63 MB of logs takes about 2 s on 2 cores); only the
// task's are kept.
func loadTaskLogs(ctx context.Context, path, taskName string) ([]dialog.Episode, error) {
	if ok, err := humanlog.Sniff(path); err != nil {
		return nil, fmt.Errorf("load logs: %w", err)
	} else if ok {
		t, err := task.Lookup(taskName)
		if err != nil {
			return nil, err
		}
		return loadHumanLogs(path, t)
	}
	r, err := dialog.OpenEpisodes(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	base := task.Family(taskName)
	var keep []dialog.Episode
	other := ""
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ep, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		// Logs name the task with its level ("mathchat:easy"); older ones
		// only the family. Any level of the family trains the same model.
		if task.Family(ep.Task) == base {
			keep = append(keep, ep)
		} else if other == "" {
			other = ep.Task
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("%s: no %s episodes (it holds %s episodes)", path, taskName, other)
	}
	return keep, nil
}

// sftProgress adapts a progress bar to the trainers' metric records.
func sftProgress(label string, steps int) func(map[string]any) {
	bar := progress(label, steps)
	return func(rec map[string]any) {
		s, ok := rec[train.MetricStep].(int)
		if !ok {
			return
		}
		if bar != nil {
			bar(s, steps)
			return
		}
		// Without a terminal, say something at every evaluation.
		train.LogHeadline(slog.Default().With("of", steps), label, rec)
	}
}
