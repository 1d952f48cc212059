package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/sft"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/tokenizer"
	"github.com/calibrl/calibrl/train"
)

func newTrainPolicyCmd() *cobra.Command {
	var (
		algo, taskName, data, userName, initDir, out, logs, presetName, tokPath string
		seed                                                                    uint64
		steps, updates, miniBatch, staticFill, staticTokens, instances, group   int
		turnCredit                                                              int
		lr, beta, temperature                                                   float64
		staticReward, metricsPath, lossMean, lrSchedule, baseline               string
	)
	cmd := &cobra.Command{
		Use:   "train-policy",
		Short: "Train a policy: behaviour cloning (sft, filtered-bc), static context RL (static), interactive GRPO (grpo) or rejection-sampling fine-tuning (rft)",
		Long: `train-policy trains the agent side.

  --algo sft     clone the agent turns of --logs into a base policy
  --algo filtered-bc
                 fine-tune --init (the base) on the conversations of --logs
                 that succeeded, with --preset's filtered-BC budget: the
                 cheap baseline a user would try before RL
  --algo grpo    interactive GRPO: from --init, whole conversations against the
                 frozen --user (naive, learned:DIR, human), sparse outcome
                 reward, group-relative advantages, clipped ratio, k3 KL to
                 the initial policy, loss on agent tokens only; --baseline
                 greedy compares each conversation with the greedy one's
                 reward instead of the group's mean, --turn-credit K gives
                 each agent turn its own advantage from K on-policy
                 continuations (reproduce --optimizers' GRPO variants)
  --algo rft     online rejection-sampling fine-tuning (expert iteration):
                 from --init, the group's conversations per problem against
                 --user; those it marks solved fine-tune the policy on their
                 agent tokens (user tokens masked); same budget flags as grpo
  --algo static  static context RL: from --init, single agent turns cut from
                 --logs, G candidates each; --static-reward says how one is
                 scored: outcome (default: cuts where the logging agent
                 answered, the task scores the candidate itself),
                 continuation (the frozen --init policy finishes the
                 conversation against --user, the calibrated simulator) or
                 behaviour (the logging agent finishes it; degenerate, kept
                 for comparison)

mathchat agents use the task's calculator (the exact result of every step
"A op B =" is written for them, and carries no loss); name the task
mathchat:easy:nocalc to train without it.

Every RL run logs a reward-hacking monitor: the policy on fixed held-out
instances against the training user and against the human proxy, side by
side. Budgets come from --preset, and so does the level of a --task that
names none (the task reproduce plays at that preset); checkpoints are
resumable (run the same command again after an interruption).`,
		Example: `  calibrl train-policy --algo sft --task mathchat --logs logs.jsonl --out base
  calibrl train-policy --algo grpo --task mathchat --user learned:sim --init base --out calibrated
  calibrl train-policy --algo static --task mathchat --user learned:sim --logs logs.jsonl --init base --out static`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(atLeast(cmd, 0, false, "steps", "beta"), atLeast(cmd, 0, true, "lr", "updates", "minibatch", "instances", "temperature"),
				atLeast(cmd, 1, true, "group")); err != nil {
				return err
			}
			// What is read, which nothing written may be: --metrics appends,
			// and --out replaces a checkpoint's files.
			inputs := []input{{"logs", logs}, {"init", initDir}, {"tokenizer", tokPath}, {"data", data}}
			p, err := presetTask(presetName, &taskName, &data) // the task and budgets reproduce gives it
			if err != nil {
				return err
			}
			t, err := task.Lookup(taskName)
			if err != nil {
				return err
			}
			if out == "" {
				return fmt.Errorf("--out: name the checkpoint folder to write")
			}
			if err := refuseInputs(out, inputs...); err != nil {
				return err
			}
			if metricsPath != "" {
				if err := refuseInputs(metricsPath, append(inputs, input{"out", out})...); err != nil {
					return err
				}
			}
			// On a terminal the RL iterations draw a bar (rlBar, once the
			// budget is known); otherwise each one is a log line.
			var bar func(map[string]any)
			lines := rlProgress(algo)
			log := func(rec map[string]any) {
				if bar != nil {
					bar(rec)
					return
				}
				lines(rec)
			}
			if metricsPath != "" {
				mf, err := os.OpenFile(metricsPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
				if err != nil {
					return fmt.Errorf("--metrics: %w", err)
				}
				defer mf.Close()
				enc, show := json.NewEncoder(mf), log
				log = func(rec map[string]any) {
					show(rec)
					if err := enc.Encode(rec); err != nil {
						slog.Error("train-policy: --metrics", "file", metricsPath, "err", err)
					}
				}
			}
			switch algo {
			case "sft":
				if logs == "" {
					return fmt.Errorf("--algo sft needs --logs")
				}
				eps, err := loadTaskLogs(cmd.Context(), logs, taskName)
				if err != nil {
					return err
				}
				cfg := sft.Config{Model: p.Policy, SFT: p.PolicySFT.Config(seed), Vocab: p.Vocab, Tool: dialog.ToolOf(t)}
				if steps > 0 {
					cfg.SFT.Steps = steps
				}
				if tokPath != "" {
					if cfg.Tokenizer, err = tokenizer.Load(tokPath); err != nil {
						return err
					}
				}
				meta, err := sft.Policy(cmd.Context(), eps, cfg, out, sftProgress("train-policy", cfg.SFT.Steps))
				if err != nil {
					return err
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(meta.Result)
			case "filtered-bc":
				if logs == "" || initDir == "" {
					return fmt.Errorf("--algo filtered-bc needs --logs and --init, the base policy it fine-tunes")
				}
				eps, err := loadTaskLogs(cmd.Context(), logs, taskName)
				if err != nil {
					return err
				}
				cfg := sft.Config{SFT: p.FilteredBC.Config(seed), Tool: dialog.ToolOf(t), From: initDir}
				if steps > 0 {
					cfg.SFT.Steps = steps
				}
				meta, err := sft.FilteredBC(cmd.Context(), eps, cfg, out, sftProgress("train-policy", cfg.SFT.Steps))
				if err != nil {
					return err
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(meta.Result)
			case "grpo", "static", "rft":
				if initDir == "" {
					return fmt.Errorf("--algo %s needs --init, the policy to start from", algo)
				}
				cfg := p.RLConfig(seed)
				if steps > 0 {
					cfg.Iterations = steps
				}
				if lr > 0 {
					cfg.LR = lr
				}
				if beta >= 0 {
					cfg.Beta = beta
				}
				if updates > 0 {
					cfg.UpdatesPerBatch = updates
				}
				if miniBatch > 0 {
					cfg.MiniBatch = miniBatch
				}
				if instances > 0 {
					cfg.InstancesPerStep = instances
				}
				if lossMean != "" {
					cfg.LossMean = lossMean
				}
				if group > 0 {
					cfg.Group = group
				}
				if temperature >= 0 {
					cfg.Gen.Temperature = temperature
				}
				if baseline != "" {
					cfg.Baseline = baseline
				}
				cfg.TurnContinuations = turnCredit
				if algo != "grpo" && (baseline != "" || turnCredit > 0) {
					return fmt.Errorf("--baseline and --turn-credit vary GRPO's credit: --algo grpo only, not %s", algo)
				}
				switch lrSchedule {
				case "", "constant":
				case "cosine":
					cfg.LRCosine = true
				default:
					return fmt.Errorf("--lr-schedule %q: want constant or cosine", lrSchedule)
				}
				if err := cfg.Validate(); err != nil {
					return err // before loading anything
				}
				policy, err := spec.Policy(initDir)
				if err != nil {
					return fmt.Errorf("--init: %w", err)
				}
				u, err := spec.User(t, userName)
				if err != nil {
					return err
				}
				human, err := t.User(dialog.Human)
				if err != nil {
					return err
				}
				bar = rlBar("train-policy "+algo, cfg.Iterations)
				var res train.RLResult
				switch algo {
				case "grpo":
					res, err = train.GRPO(cmd.Context(), policy, t, u, human, cfg, out, log)
				case "rft":
					res, err = train.RFT(cmd.Context(), policy, t, u, human, train.RFTConfig{RLConfig: cfg}, out, log)
				default:
					if logs == "" {
						return fmt.Errorf("--algo static needs --logs")
					}
					eps, lerr := loadTaskLogs(cmd.Context(), logs, taskName)
					if lerr != nil {
						return lerr
					}
					behaviour := func(name string) (dialog.Agent, error) { return spec.Agent(t, name) }
					res, err = train.Static(cmd.Context(), policy, t, eps, behaviour, u, human, train.StaticConfig{RLConfig: cfg, Reward: staticReward, FillRounds: staticFill, GradTokens: staticTokens}, out, log)
				}
				if err != nil {
					return err
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
			}
			return fmt.Errorf("unknown --algo %q (want sft, filtered-bc, static, grpo or rft)", algo)
		},
	}
	f := cmd.Flags()
	f.StringVar(&algo, "algo", "grpo", "sft, filtered-bc, static, grpo or rft")
	f.StringVar(&baseline, "baseline", "", "GRPO: what a conversation's reward is compared with: group (the group's mean and spread; the preset's) or greedy (the reward of one greedy conversation of the same problem)")
	f.IntVar(&turnCredit, "turn-credit", 0, "GRPO: on-policy continuations per agent turn for turn-level advantages (0: off, one advantage per conversation); needs --loss-mean token, the preset's")
	f.StringVar(&taskName, "task", "mathchat", "task: "+joinNames(task.Names()))
	addDataFlag(f, &data)
	f.StringVar(&userName, "user", dialog.Naive.String(), "training user for grpo/static: naive, learned:DIR, learned+copy:DIR, human")
	f.StringVar(&initDir, "init", "", "policy checkpoint to start RL from")
	f.StringVar(&out, "out", "", "checkpoint folder to write (required)")
	f.StringVar(&logs, "logs", "", "logged episodes (sft, static), or your own human logs (convert-logs; sft)")
	f.StringVar(&lrSchedule, "lr-schedule", "constant", "RL learning rate after warm-up: constant (the preset's) or cosine (decays to a tenth at the last iteration, so late updates move the policy less)")
	f.StringVar(&lossMean, "loss-mean", "", "override how the RL loss averages a minibatch: token (the preset's) or sequence (each conversation weighs the same)")
	f.StringVar(&metricsPath, "metrics", "", "append every training record (per step or iteration) to this JSONL file")
	f.StringVar(&staticReward, "static-reward", train.StaticOutcome, "how static RL scores a candidate: outcome, continuation or behaviour")
	f.IntVar(&staticTokens, "static-tokens", 0, "static RL with --static-fill: fill until the informative groups hold this many gradient tokens (train/grad_tokens) instead of a count of groups (0: by groups)")
	f.IntVar(&staticFill, "static-fill", 0, "static RL: draw up to this many rounds of prompts per iteration until it holds --preset's prompts-per-iteration informative groups (rewards not all equal), and train on those (0: one round, flat groups dropped)")
	f.StringVar(&presetName, "preset", "quick", "budget: "+joinNames(preset.Names()))
	f.StringVar(&tokPath, "tokenizer", "", "tokenizer.json for sft (default: train one on the logs)")
	f.Uint64Var(&seed, "seed", 1, "seed")
	f.IntVar(&steps, "steps", 0, "override the preset's SFT steps or RL iterations")
	f.Float64Var(&lr, "lr", 0, "override the RL learning rate (default: the preset's)")
	f.IntVar(&updates, "updates", 0, "override the RL passes over each batch (default: the preset's)")
	f.IntVar(&instances, "instances", 0, "override the RL problems (static: prompts) per iteration, each played by a group (default: the preset's)")
	f.IntVar(&miniBatch, "minibatch", 0, "override the RL sequences per optimizer step (default: the preset's)")
	f.IntVar(&group, "group", 0, "GRPO: conversations per problem, the group its advantages are relative to (0: the preset's)")
	f.Float64Var(&temperature, "temperature", -1, "sampling temperature of the training rollouts; -1 keeps the trainer's 1; at another temperature RL optimises the tempered policy (every log-prob scored under softmax(logits/T)), so evaluate it at the same temperature (eval --temperature)")
	f.Float64Var(&beta, "beta", -1, "override the RL weight of the KL to the initial policy; -1 keeps the preset's")
	return cmd
}

// rlProgress logs each RL iteration and monitor reading.
func rlProgress(label string) func(map[string]any) {
	return func(rec map[string]any) { train.LogHeadline(slog.Default(), label, rec) }
}
