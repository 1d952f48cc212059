package reproduce

// The stages every arm shares: the logs, the tokenizer, the base policy
// and the simulator (Prepare, for the runs of a study that share them).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/progress"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/sft"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/tokenizer"
)

// PrepareConfig sets the stages several runs can share: logs of each task
// level, one tokenizer, one base policy and one simulator trained on all
// of them.
type PrepareConfig struct {
	// Tasks are task names with their level ("mathchat:h4"); the preset's
	// LogEpisodes are shared out evenly between them, each task's logs
	// played with the turn limit of the same index in MaxTurns.
	Tasks    []string
	MaxTurns []int
	Preset   preset.Preset
	Out      string
	Seed     uint64
	Log      *slog.Logger
	// Progress is as Config.Progress.
	Progress progress.Func
	// Jobs is as Config.Jobs: the base policy and the simulator train
	// side by side.
	Jobs int
}

// Prepare collects the logs of every task and trains the tokenizer, the
// base policy and the simulator on their union, into a folder that
// Config.Shared can name. Like Run, it resumes where it stopped.
func Prepare(ctx context.Context, cfg PrepareConfig) error {
	if len(cfg.Tasks) == 0 || len(cfg.Tasks) != len(cfg.MaxTurns) {
		return fmt.Errorf("reproduce: prepare: %d tasks and %d turn limits", len(cfg.Tasks), len(cfg.MaxTurns))
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	f, err := runfolder.Open(cfg.Out)
	if err != nil {
		return err
	}
	defer f.Close()
	var old runfolder.Manifest
	config := map[string]any{"tasks": cfg.Tasks, "max_turns": cfg.MaxTurns, "preset": cfg.Preset.Name}
	if err := f.ReadJSON("manifest.json", &old); err == nil {
		if old.Seed != cfg.Seed || fmt.Sprint(old.Config) != fmt.Sprint(config) {
			return fmt.Errorf("reproduce: %s was prepared with other settings (seed %d, %v): use another folder", cfg.Out, old.Seed, old.Config)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	} else if err := f.WriteManifest(runfolder.Manifest{Command: os.Args, Seed: cfg.Seed, Config: config}); err != nil {
		return err
	}
	p := &prep{f: f, preset: cfg.Preset, seed: cfg.Seed, log: cfg.Log, progress: cfg.Progress}
	per := (cfg.Preset.LogEpisodes + len(cfg.Tasks) - 1) / len(cfg.Tasks)
	for i, name := range cfg.Tasks {
		t, err := task.Lookup(name)
		if err != nil {
			return err
		}
		p.tasks = append(p.tasks, logSet{t: t, name: name, profiles: t.Profiles(), maxTurns: cfg.MaxTurns[i],
			episodes: per, file: sharedLogsFile(name)})
	}
	return runStages(ctx, f, p.groups(), cfg.Jobs, cfg.Log, cfg.Progress)
}

// sharedLogsFile is where a prepared folder keeps one task's logs.
func sharedLogsFile(task string) string {
	return filepath.Join("logs", strings.ReplaceAll(task, ":", "_")+".jsonl")
}

// prep makes the logs, tokenizer, base policy and simulator in f.
type prep struct {
	f      *runfolder.Folder
	preset preset.Preset
	seed   uint64
	log    *slog.Logger
	// progress receives the stages' training figures.
	progress progress.Func
	tasks    []logSet
}

// logSet is one task's logs: episodes conversations of the profiles,
// shared out between them.
type logSet struct {
	t        task.Task
	name     string
	profiles []string
	maxTurns int
	episodes int
	file     string
}

func (l logSet) path(f *runfolder.Folder) string { return f.Path(l.file) }

// groups are the preparation's stages: the base policy and the
// simulator both train on the tokenizer's tokens, side by side.
func (p *prep) groups() [][]stage {
	logs := 0
	for _, l := range p.tasks {
		logs += l.episodes
	}
	return [][]stage{{{"collect", p.collect, cost{kindPrep, refLog * time.Duration(logs)}}},
		{{"tokenizer", p.tokenizer, cost{kindPrep, refTokenizer}}},
		{{"base", p.base, sftCost(p.preset.Policy, p.preset.PolicySFT)}, {"sim", p.sim, sftCost(p.preset.Sim, p.preset.SimSFT)}}}
}

func (p *prep) ckpt(name string) string { return p.f.Path("checkpoints", name) }

// collect records each task's human-proxy logs, shared out between its
// profiles.
func (p *prep) collect(ctx context.Context) error {
	for i, l := range p.tasks {
		human, err := l.t.User(dialog.Human)
		if err != nil {
			return err
		}
		agents := make([]dialog.Agent, len(l.profiles))
		names := make([]string, len(l.profiles))
		for j, prof := range l.profiles {
			if agents[j], err = l.t.Agent(prof); err != nil {
				return err
			}
			names[j] = "scripted:" + prof
		}
		// The first task keeps the run's seed, so a single-task run's logs
		// do not depend on whether it was prepared alone or with others.
		seed := p.seed + uint64(i)*0x9e3779b97f4a7c15
		all, err := rollout.Share(ctx, l.t, agents, names, human, rollout.Config{Split: "train", Instances: l.episodes,
			Seed: seed, MaxTurns: l.maxTurns, UserName: dialog.Human.String()})
		if err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
		if err := os.MkdirAll(filepath.Dir(l.path(p.f)), 0o755); err != nil {
			return err
		}
		if err := dialog.SaveEpisodes(l.path(p.f), all); err != nil {
			return err
		}
	}
	return nil
}

// logs is the union of every task's logs.
func (p *prep) logs() ([]dialog.Episode, error) {
	var all []dialog.Episode
	for _, l := range p.tasks {
		eps, err := dialog.LoadEpisodes(l.path(p.f))
		if err != nil {
			return nil, err
		}
		all = append(all, eps...)
	}
	return all, nil
}

func (p *prep) tokenizer(ctx context.Context) error {
	eps, err := p.logs()
	if err != nil {
		return err
	}
	tok, err := chatlm.TrainTokenizer(ctx, eps, p.preset.Vocab)
	if err != nil {
		return err
	}
	return tok.Save(p.f.Path("tokenizer.json"))
}

// sftConfig is a fit of a model sized model with budget b, seeded with
// the stage's seed, on the shared tokenizer.
func (p *prep) sftConfig(model lm.Config, b preset.SFTBudget, oracle bool) (sft.Config, error) {
	tok, err := tokenizer.Load(p.f.Path("tokenizer.json"))
	if err != nil {
		return sft.Config{}, err
	}
	return sft.Config{Model: model, SFT: b.Config(p.seed), Tokenizer: tok, Oracle: oracle, Tool: dialog.ToolOf(p.tasks[0].t)}, nil
}

func (p *prep) base(ctx context.Context) error {
	eps, err := p.logs()
	if err != nil {
		return err
	}
	sc, err := p.sftConfig(p.preset.Policy, p.preset.PolicySFT, false)
	if err != nil {
		return err
	}
	_, err = sft.Policy(ctx, eps, sc, p.ckpt(ArmBase), metricsLog(p.f, p.log, p.progress, ArmBase))
	return err
}

func (p *prep) sim(ctx context.Context) error {
	eps, err := p.logs()
	if err != nil {
		return err
	}
	sc, err := p.simConfig(p.preset.SimSFT)
	if err != nil {
		return err
	}
	_, err = sft.Simulator(ctx, eps, sc, p.ckpt("sim"), metricsLog(p.f, p.log, p.progress, "sim"))
	return err
}

// simConfig is the simulator's SFT config with budget b: the shared
// tokenizer, the oracle context and the task's judge (the sim stage's, and
// the recalibrated arm's re-fits').
func (p *prep) simConfig(b preset.SFTBudget) (sft.Config, error) {
	c, err := p.sftConfig(p.preset.Sim, b, true)
	if err != nil {
		return sft.Config{}, err
	}
	// The levels of one task share its scoring rule, and its options: the
	// notes it shows the simulator (chatlm.UserNotesOf) read only the
	// oracle's facts and the agent's turn, the same at every level.
	c.Judge, c.UserNotes = chatlm.TaskJudge(p.tasks[0].t), chatlm.UserNotesOf(p.tasks[0].t)
	return c, nil
}
