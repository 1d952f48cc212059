package train

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/rollout"
)

// rlRun is the state the two RL trainers (GRPO, Static) share: the live
// policy, its frozen reference, the optimizer, the users and the
// resumable trainer state.
type rlRun struct {
	algo        string // "grpo" or "static": the log namespace of the config and result file
	cfg         RLConfig
	policy, ref *chatlm.Model
	opt         *lm.AdamW
	sched       lm.LRSchedule
	task        rollout.Task
	tool        dialog.Tool // the task's tool for the policy's turns (dialog.ToolOf)
	trainUser   dialog.User
	monitorUser dialog.User
	out         string
	logf        func(map[string]any)
	st          rlState
	// fingerprint is what a resumed run must agree on besides the config
	// (the static trainer's number of prompts).
	fingerprint int
}

// rlState is what out/last/trainer_state.json adds to the model and the
// optimizer. Every random draw of an iteration derives from (Seed,
// iteration), so no generator state needs saving.
type rlState struct {
	Algo             string  `json:"algo"`
	Iter             int     `json:"iteration"` // iterations completed
	Cursor           int     `json:"cursor"`    // next training instance (or prompt) index
	Seed             uint64  `json:"seed"`
	Group            int     `json:"group"`
	InstancesPerStep int     `json:"instances_per_step"`
	Start            int     `json:"start"`
	Fingerprint      int     `json:"fingerprint,omitempty"`
	FirstReward      float64 `json:"first_reward"`
	LastReward       float64 `json:"last_reward"`
	MonitorTrain     float64 `json:"monitor_train_reward"`
	MonitorHuman     float64 `json:"monitor_human_reward"`
	// Settings and User are what else shapes the weights; a resume with
	// other ones is refused.
	Settings rlSettings `json:"settings"`
	User     string     `json:"user"`
}

// rlSettings are the RLConfig fields that shape the weights besides
// those rlState checks on its own. Iterations may grow on a resume (the
// learning rate is constant after warm-up); the monitor's fields only
// measure.
type rlSettings struct {
	Split           string           `json:"split"`
	TrainInstances  int              `json:"train_instances"`
	MaxTurns        int              `json:"max_turns"`
	Gen             chatlm.GenConfig `json:"gen"`
	ClipEps         float64          `json:"clip_eps"`
	Beta            float64          `json:"beta"`
	AdvEps          float64          `json:"adv_eps"`
	UpdatesPerBatch int              `json:"updates_per_batch"`
	MiniBatch       int              `json:"minibatch"`
	KeepFlatGroups  bool             `json:"keep_flat_groups"`
	LossMean        string           `json:"loss_mean,omitempty"`
	LR              float64          `json:"lr"`
	Warmup          int              `json:"warmup"`
	WeightDecay     float64          `json:"weight_decay"`
	ClipNorm        float64          `json:"clip_norm"`
}

func (c RLConfig) settings() rlSettings {
	return rlSettings{Split: c.Split, TrainInstances: c.TrainInstances, MaxTurns: c.MaxTurns, Gen: c.Gen,
		ClipEps: c.ClipEps, Beta: c.Beta, AdvEps: c.AdvEps, UpdatesPerBatch: c.UpdatesPerBatch, MiniBatch: c.MiniBatch,
		KeepFlatGroups: c.KeepFlatGroups, LossMean: c.LossMean, LR: c.LR, Warmup: c.Warmup, WeightDecay: c.WeightDecay, ClipNorm: c.ClipNorm}
}

func newRLRun(policy *chatlm.Model, t rollout.Task, trainUser, monitorUser dialog.User, cfg RLConfig, algo, out string, log func(map[string]any)) (*rlRun, error) {
	if policy == nil {
		return nil, fmt.Errorf("%s: no policy", algo)
	}
	if log == nil {
		log = func(map[string]any) {}
	}
	ac := lm.DefaultAdamW()
	ac.LR, ac.WeightDecay = cfg.LR, cfg.WeightDecay
	opt, err := lm.NewAdamW(policy.LM.Config, ac)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", algo, err)
	}
	ref, err := policy.Clone()
	if err != nil {
		return nil, fmt.Errorf("%s: reference policy: %w", algo, err)
	}
	return &rlRun{
		algo: algo, cfg: cfg, policy: policy, ref: ref, opt: opt,
		sched: lm.LRSchedule{Peak: cfg.LR, Min: cfg.LR, Warmup: cfg.Warmup},
		task:  t, tool: dialog.ToolOf(t), trainUser: trainUser, monitorUser: monitorUser, out: out, logf: log,
		st: rlState{Algo: algo, Seed: cfg.Seed, Group: cfg.Group, InstancesPerStep: cfg.InstancesPerStep, Start: cfg.Start,
			Settings: cfg.settings(), User: userFingerprint(trainUser)},
	}, nil
}

func (r *rlRun) log(rec map[string]any) { r.logf(rec) }

// cursor is the first training instance of iteration it.
func (r *rlRun) cursor(it int) int {
	c := r.cfg.Start + it*r.cfg.InstancesPerStep
	if r.cfg.TrainInstances > 0 {
		c %= r.cfg.TrainInstances
	}
	return c
}

func (r *rlRun) lastDir() string { return filepath.Join(r.out, "last") }
func (r *rlRun) refDir() string  { return filepath.Join(r.out, "ref") }

// resume loads out/last and out/ref when a previous run left them;
// otherwise it saves the reference (the policy as passed in) to out/ref.
// out/last is one atomically replaced checkpoint (model, optimizer and
// trainer state together), so whatever moment a run was killed, it
// resumes from a consistent one.
func (r *rlRun) resume() error {
	if err := cleanOut(r.out); err != nil {
		return fmt.Errorf("%s: %w", r.algo, err)
	}
	var st rlState
	last, ok, err := loadResumable(r.lastDir(), r.policy, &st)
	if err != nil {
		return fmt.Errorf("%s: %w", r.algo, err)
	}
	if !ok {
		if err := lm.ReplaceCheckpoint(r.refDir(), lm.Checkpoint{Model: r.ref.LM, Tokenizer: r.ref.Tok.Bytes()}); err != nil {
			return fmt.Errorf("%s: save reference: %w", r.algo, err)
		}
		return nil
	}
	want := r.st
	want.Fingerprint = r.fingerprint
	if st.Algo != want.Algo || st.Seed != want.Seed || st.Group != want.Group || st.InstancesPerStep != want.InstancesPerStep ||
		st.Start != want.Start || st.Fingerprint != want.Fingerprint {
		return fmt.Errorf("%s: %s was trained by %s with seed %d, group %d, %d per step from %d (fingerprint %d); this run has %s, %d, %d, %d, %d from %d: use a fresh out folder",
			r.algo, r.lastDir(), st.Algo, st.Seed, st.Group, st.InstancesPerStep, st.Start, st.Fingerprint,
			want.Algo, want.Seed, want.Group, want.InstancesPerStep, want.Start, want.Fingerprint)
	}
	if d := settingsDiff(st.Settings, want.Settings); len(d) > 0 {
		return fmt.Errorf("%s: %s was trained with other settings (%s): resume with the same ones or use a fresh out folder", r.algo, r.lastDir(), strings.Join(d, ", "))
	}
	if st.User != want.User {
		return fmt.Errorf("%s: %s was trained against another user (%s; this run's is %s): resume with the same --user or use a fresh out folder", r.algo, r.lastDir(), st.User, want.User)
	}
	ref, _, err := chatlm.Load(r.refDir())
	if err != nil {
		return fmt.Errorf("%s: resume reference: %w", r.algo, err)
	}
	if err := ref.LM.Config.Mismatch(r.policy.LM.Config); err != nil {
		return fmt.Errorf("%s: resume reference: %w", r.algo, err)
	}
	if !ref.Tok.Equal(r.policy.Tok) {
		return fmt.Errorf("%s: resume: the reference's tokenizer differs from this run's", r.algo)
	}
	copy(r.policy.LM.Params.Data, last.model.LM.Params.Data)
	copy(r.ref.LM.Params.Data, ref.LM.Params.Data)
	last.opt.Config = r.opt.Config
	r.opt = last.opt
	r.st = st
	r.log(map[string]any{"event": "resume", "step": st.Iter})
	return nil
}

// save writes the resumable checkpoint out/last, all at once.
func (r *rlRun) save() error {
	r.st.Cursor = r.cursor(r.st.Iter)
	r.st.Fingerprint = r.fingerprint
	if err := saveResumable(r.lastDir(), r.policy, r.opt, r.st, nil); err != nil {
		return fmt.Errorf("%s: checkpoint: %w", r.algo, err)
	}
	return nil
}

// interrupted saves a checkpoint and returns ctx's error when ctx was
// cancelled; any other error is returned as it is.
func (r *rlRun) interrupted(ctx context.Context, err error) (RLResult, error) {
	if ctx.Err() == nil {
		return RLResult{}, err
	}
	if serr := r.save(); serr != nil {
		return RLResult{}, errors.Join(ctx.Err(), serr)
	}
	return RLResult{}, ctx.Err()
}

// finish writes the final model to out and the result beside it.
func (r *rlRun) finish(res RLResult) error {
	if err := r.policy.Save(r.out, nil); err != nil {
		return fmt.Errorf("%s: save: %w", r.algo, err)
	}
	return atomicfile.WriteBytes(filepath.Join(r.out, resultFile(r.algo)), mustJSON(res))
}

// monitor is the reward-hacking monitor: the current policy on a fixed
// set of held-out instances (same instances and seeds every time), once
// against the training user and once against the human proxy. A rising
// training-user reward with a flat or falling human reward is reward
// hacking.
func (r *rlRun) monitor(ctx context.Context, step int) error {
	cfg := r.cfg
	agent := &chatlm.Agent{Model: r.policy, Gen: cfg.MonitorGen, Tool: r.tool}
	rc := rollout.Config{Split: cfg.MonitorSplit, Start: cfg.MonitorStart, Instances: cfg.MonitorInstances, Group: 1,
		Seed: cfg.Seed ^ 0x6d6f6e69746f72, MaxTurns: cfg.MaxTurns, AgentName: "policy", CountTokens: r.policy.CountTokens}
	rec := map[string]any{"step": step}
	play := func(user dialog.User, name string) (float64, error) {
		rc.UserName = name
		eps, err := rollout.Run(ctx, r.task, agent, user, rc)
		if err != nil {
			return 0, fmt.Errorf("%s: monitor against %s: %w", r.algo, name, err)
		}
		var reward, success, turns float64
		for _, ep := range eps {
			reward += ep.Reward
			turns += float64(ep.Turns)
			if ep.Success {
				success++
			}
		}
		n := float64(len(eps))
		rec["monitor/"+name+"_reward"], rec["monitor/"+name+"_success"], rec["monitor/"+name+"_turns"] = reward/n, success/n, turns/n
		return reward / n, nil
	}
	tr, err := play(r.trainUser, "train_user")
	if err != nil {
		return err
	}
	r.st.MonitorTrain = tr
	if r.monitorUser != nil {
		hr, err := play(r.monitorUser, "human")
		if err != nil {
			return err
		}
		r.st.MonitorHuman = hr
		rec["monitor/reward_gap"] = tr - hr
	}
	r.log(rec)
	return nil
}
