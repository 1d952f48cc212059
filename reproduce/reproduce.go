// Package reproduce runs the paper's comparison end to end on one task:
//
//  1. collect: scripted agents talk with the human proxy; the logs stand in
//     for real human interaction data;
//  2. tokenizer: one byte-level BPE for both models, trained on the logs;
//  3. base: the base policy, cloned from the logs' agent turns (SFT);
//  4. sim: the calibrated simulator, fitted to the logs' user turns while
//     conditioned on the oracle context (Phase I);
//  5. arms, each from the same base with the same RL budget: static
//     context RL (logged histories, completions by the behaviour agent
//     against the calibrated simulator), naive interactive (GRPO against
//     the naive simulator), calibrated interactive (GRPO against the
//     calibrated simulator, Phase II) and oracle interactive (GRPO against
//     the human proxy itself: the privileged upper reference);
//  6. eval: the base and every arm against the human proxy on the
//     held-out test split (personas and problems never used in training);
//  7. report: report.md, summary.json and plots.
//
// Every stage writes into the run folder and marks itself done, so an
// interrupted run started again resumes at the stage (and, inside a
// training stage, at the checkpoint) where it stopped.
package reproduce

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/sft"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/tokenizer"
	"github.com/calibrl/calibrl/train"
)

// The arms, in report order.
const (
	ArmBase       = "base"
	ArmStatic     = "static"
	ArmNaive      = "naive-interactive"
	ArmCalibrated = "calibrated-interactive"
	ArmOracle     = "oracle-interactive"
)

// Arms lists every arm in report order.
var Arms = []string{ArmBase, ArmStatic, ArmNaive, ArmCalibrated, ArmOracle}

// Config sets a reproduction.
type Config struct {
	Task   string
	Preset preset.Preset
	// Out is the run folder.
	Out string
	// Seed seeds every stage.
	Seed uint64
	// Profiles are the scripted agents whose conversations make the logs;
	// default every profile of the task.
	Profiles []string
	// Log receives progress events; default slog.Default().
	Log *slog.Logger
}

// Run executes (or resumes) every stage and returns the summary rows.
func Run(ctx context.Context, cfg Config) ([]Row, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if !strings.Contains(cfg.Task, ":") && cfg.Preset.Level != "" {
		cfg.Task += ":" + cfg.Preset.Level
	}
	t, err := task.Lookup(cfg.Task)
	if err != nil {
		return nil, err
	}
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = t.Profiles()
	}
	f, err := runfolder.Open(cfg.Out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &run{cfg: cfg, t: t, f: f}
	if err := r.manifest(); err != nil {
		return nil, err
	}
	stages := []struct {
		name string
		do   func(context.Context) error
	}{
		{"collect", r.collect},
		{"tokenizer", r.tokenizer},
		{"base", r.base},
		{"sim", r.sim},
		{ArmStatic, r.arm(ArmStatic)},
		{ArmNaive, r.arm(ArmNaive)},
		{ArmCalibrated, r.arm(ArmCalibrated)},
		{ArmOracle, r.arm(ArmOracle)},
		{"eval", r.evaluate},
	}
	for _, s := range stages {
		if f.Done(s.name) {
			cfg.Log.Info("reproduce: stage already done", "stage", s.name)
			continue
		}
		cfg.Log.Info("reproduce: stage", "stage", s.name)
		if err := s.do(ctx); err != nil {
			return nil, fmt.Errorf("reproduce %s: %w", s.name, err)
		}
		if err := f.MarkDone(s.name); err != nil {
			return nil, err
		}
	}
	return r.report()
}

type run struct {
	cfg Config
	t   task.Task
	f   *runfolder.Folder
}

func (r *run) manifest() error {
	var old runfolder.Manifest
	if err := r.f.ReadJSON("manifest.json", &old); err == nil {
		if old.Seed != r.cfg.Seed {
			return fmt.Errorf("reproduce: %s was started with seed %d, not %d: use another --out", r.cfg.Out, old.Seed, r.cfg.Seed)
		}
		if c, ok := old.Config.(map[string]any); ok && (c["task"] != r.cfg.Task || c["preset"] != r.cfg.Preset.Name) {
			return fmt.Errorf("reproduce: %s holds a %v/%v run, not %s/%s: use another --out", r.cfg.Out, c["task"], c["preset"], r.cfg.Task, r.cfg.Preset.Name)
		}
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return r.f.WriteManifest(runfolder.Manifest{
		Command: os.Args, Seed: r.cfg.Seed,
		Config: map[string]any{"task": r.cfg.Task, "preset": r.cfg.Preset.Name, "profiles": r.cfg.Profiles, "rl": r.cfg.Preset.RL,
			"policy": r.cfg.Preset.Policy, "sim": r.cfg.Preset.Sim, "policy_sft": r.cfg.Preset.PolicySFT, "sim_sft": r.cfg.Preset.SimSFT,
			"log_episodes": r.cfg.Preset.LogEpisodes, "eval_episodes": r.cfg.Preset.EvalEpisodes, "max_turns": r.cfg.Preset.MaxTurns},
	})
}

func (r *run) logsPath() string { return r.f.Path("logs.jsonl") }
func (r *run) ckpt(name string) string {
	return r.f.Path("checkpoints", name)
}

// collect records the human-proxy logs, shared out between the profiles.
func (r *run) collect(ctx context.Context) error {
	human, err := r.t.User("human")
	if err != nil {
		return err
	}
	agents := make([]dialog.Agent, len(r.cfg.Profiles))
	names := make([]string, len(r.cfg.Profiles))
	for i, p := range r.cfg.Profiles {
		if agents[i], err = r.t.Agent(p); err != nil {
			return err
		}
		names[i] = "scripted:" + p
	}
	all, err := rollout.Share(ctx, r.t, agents, names, human, rollout.Config{Split: "train", Instances: r.cfg.Preset.LogEpisodes,
		Seed: r.cfg.Seed, MaxTurns: r.cfg.Preset.MaxTurns, UserName: "human"})
	if err != nil {
		return err
	}
	return dialog.SaveEpisodes(r.logsPath(), all)
}

func (r *run) logs() ([]dialog.Episode, error) { return dialog.LoadEpisodes(r.logsPath()) }

func (r *run) tokenizer(ctx context.Context) error {
	eps, err := r.logs()
	if err != nil {
		return err
	}
	tok, err := chatlm.TrainTokenizer(eps, r.cfg.Preset.Vocab)
	if err != nil {
		return err
	}
	return tok.Save(r.f.Path("tokenizer.json"))
}

func (r *run) sftConfig(model lm.Config, sc train.SFTConfig, oracle bool) (sft.Config, error) {
	tok, err := tokenizer.Load(r.f.Path("tokenizer.json"))
	if err != nil {
		return sft.Config{}, err
	}
	return sft.Config{Model: model, SFT: sc, Tokenizer: tok, Oracle: oracle, Seed: r.cfg.Seed}, nil
}

func (r *run) metricsLog(stage string) func(map[string]any) {
	return func(rec map[string]any) {
		out := make(map[string]any, len(rec)+1)
		for k, v := range rec {
			if strings.HasSuffix(k, "/config") {
				continue // the manifest holds the configuration
			}
			out[k] = v
		}
		out["stage"] = stage
		if err := r.f.Log(out); err != nil {
			r.cfg.Log.Warn("metrics", "err", err)
		}
		if _, ok := rec["sft/val_nll"]; ok {
			r.cfg.Log.Info(stage, "step", rec["step"], "val_nll", rec["sft/val_nll"], "loss", rec["sft/loss"])
		}
		if _, ok := rec["rollout/reward_mean"]; ok {
			r.cfg.Log.Info(stage, "iter", rec["step"], "reward", rec["rollout/reward_mean"], "loss", rec["loss/policy"])
		}
		if _, ok := rec["monitor/train_user_reward"]; ok {
			r.cfg.Log.Info(stage+" monitor", "iter", rec["step"], "train_user_reward", rec["monitor/train_user_reward"], "human_reward", rec["monitor/human_reward"])
		}
	}
}

func (r *run) base(ctx context.Context) error {
	eps, err := r.logs()
	if err != nil {
		return err
	}
	sc, err := r.sftConfig(r.cfg.Preset.Policy, r.cfg.Preset.PolicySFT, false)
	if err != nil {
		return err
	}
	_, err = sft.Policy(ctx, eps, sc, r.ckpt(ArmBase), r.metricsLog(ArmBase))
	return err
}

func (r *run) sim(ctx context.Context) error {
	eps, err := r.logs()
	if err != nil {
		return err
	}
	sc, err := r.sftConfig(r.cfg.Preset.Sim, r.cfg.Preset.SimSFT, true)
	if err != nil {
		return err
	}
	_, err = sft.Simulator(ctx, eps, sc, r.ckpt("sim"), r.metricsLog("sim"))
	return err
}

// arm trains one RL arm from the base policy.
func (r *run) arm(name string) func(context.Context) error {
	return func(ctx context.Context) error {
		policy, _, err := chatlm.Load(r.ckpt(ArmBase))
		if err != nil {
			return err
		}
		human, err := r.t.User("human")
		if err != nil {
			return err
		}
		cfg := r.cfg.Preset.RL
		cfg.Seed = r.cfg.Seed
		out := r.ckpt(name)
		log := r.metricsLog(name)
		switch name {
		case ArmStatic:
			logs, err := r.logs()
			if err != nil {
				return err
			}
			sim, err := spec.User(r.t, "learned:"+r.ckpt("sim"))
			if err != nil {
				return err
			}
			behaviour := func(agent string) (dialog.Agent, error) { return spec.Agent(r.t, agent) }
			_, err = train.Static(ctx, policy, r.t, logs, behaviour, sim, human, train.StaticConfig{GRPOConfig: cfg}, out, log)
			return err
		case ArmNaive, ArmCalibrated, ArmOracle:
			userName := map[string]string{ArmNaive: "naive", ArmCalibrated: "learned:" + r.ckpt("sim"), ArmOracle: "human"}[name]
			u, err := spec.User(r.t, userName)
			if err != nil {
				return err
			}
			_, err = train.GRPO(ctx, policy, r.t, u, human, cfg, out, log)
			return err
		}
		return fmt.Errorf("unknown arm %q", name)
	}
}

// evaluate plays the base and every arm against the human proxy on the
// held-out split.
func (r *run) evaluate(ctx context.Context) error {
	human, err := r.t.User("human")
	if err != nil {
		return err
	}
	for _, arm := range Arms {
		if err := ctx.Err(); err != nil {
			return err
		}
		path := r.f.Path("eval", arm+".episodes.jsonl")
		if _, err := os.Stat(path); err == nil {
			continue // evaluated before an interruption
		}
		policy, _, err := chatlm.Load(r.ckpt(arm))
		if err != nil {
			return err
		}
		agent := &chatlm.Agent{Model: policy, Gen: spec.EvalGen()}
		eps, err := rollout.Run(ctx, r.t, agent, human, rollout.Config{Split: "test", Instances: r.cfg.Preset.EvalEpisodes,
			Seed: r.cfg.Seed, MaxTurns: r.cfg.Preset.MaxTurns, AgentName: arm, UserName: "human",
			CountTokens: policy.CountTokens})
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := r.f.WriteJSON(filepath.Join("eval", arm+".json"), eval.Summarize(eps, r.cfg.Seed)); err != nil {
			return err
		}
		if err := dialog.SaveEpisodes(path, eps); err != nil {
			return err
		}
		r.cfg.Log.Info("reproduce: evaluated", "arm", arm, "reward", eval.Summarize(eps, r.cfg.Seed).Reward)
	}
	return nil
}
