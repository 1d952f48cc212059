package train

// A run's resumable state: out/ref (the frozen reference), out/last (the
// policy, the optimizer and trainer_state.json, replaced atomically) and,
// at the end, the final model and the result.

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/lm"
)

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
	// MonitorPending: the monitor is due at iteration Iter and has not
	// logged its reading (an interruption stopped it); a resumed run takes
	// it before anything else.
	MonitorPending bool `json:"monitor_pending,omitempty"`
	// Records counts the records the run has logged (MetricRecords).
	Records int `json:"records,omitempty"`
	// Settings and User are what else shapes the weights; a resume with
	// other ones is refused.
	Settings rlSettings `json:"settings"`
	User     string     `json:"user"`
}

// rlSettings are the RLConfig fields that shape the weights besides
// those rlState checks on its own. Iterations may grow on a resume (the
// learning rate is constant after warm-up) unless LRCosine ties the
// schedule to them; the monitor's fields only measure.
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
	// CosineIterations is Iterations when LRCosine is on: the schedule's
	// length shapes every update, so unlike a constant rate's run it may
	// not grow on a resume. Zero (absent) for a constant rate, so older
	// checkpoints read the same.
	CosineIterations int `json:"cosine_iterations,omitempty"`
	// Baseline and TurnContinuations are GRPO's variants; absent at
	// their defaults, so older checkpoints read the same.
	Baseline          string `json:"baseline,omitempty"`
	TurnContinuations int    `json:"turn_continuations,omitempty"`
}

func (c RLConfig) settings() rlSettings {
	s := rlSettings{Split: c.Split, TrainInstances: c.TrainInstances, MaxTurns: c.MaxTurns, Gen: c.Gen,
		ClipEps: c.ClipEps, Beta: c.Beta, AdvEps: c.AdvEps, UpdatesPerBatch: c.UpdatesPerBatch, MiniBatch: c.MiniBatch,
		KeepFlatGroups: c.KeepFlatGroups, LossMean: c.LossMean, LR: c.LR, Warmup: c.Warmup, WeightDecay: c.WeightDecay, ClipNorm: c.ClipNorm,
		TurnContinuations: c.TurnContinuations}
	if c.Baseline != BaselineGroup {
		s.Baseline = c.Baseline // "" and "group" are one baseline
	}
	if c.LRCosine {
		s.CosineIterations = c.Iterations
	}
	return s
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
	r.resumed = true
	r.log(withRecords(map[string]any{"event": "resume", MetricStep: st.Iter, MetricTotalSteps: r.cfg.Iterations}, st.Records))
	return nil
}

// save writes the resumable checkpoint out/last, all at once.
func (r *rlRun) save() error {
	r.st.Cursor = r.cursor(r.st.Iter)
	r.st.Fingerprint = r.fingerprint
	if err := saveResumable(r.lastDir(), r.policy, r.opt, r.st, nil); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// finish writes the final model to out and the result beside it.
func (r *rlRun) finish(res RLResult) error {
	if err := r.policy.Save(r.out, nil); err != nil {
		return fmt.Errorf("%s: save: %w", r.algo, err)
	}
	return atomicfile.WriteBytes(filepath.Join(r.out, resultFile(r.algo)), mustJSON(res))
}
