package train

// The RL trainer GRPO, Static, RFT and StaticRFT share, laid out as
// CleanRL's ppo.py: config, preallocation, then the iteration, whole, in
// one loop. Each entry point picks the experience (step 1) and the
// credit (step 2: GRPO's advantages, or RFT's filter, rft.go).
//
// The algorithm is GRPO, Group Relative Policy Optimization (Shao et al.
// 2024, "DeepSeekMath", §4.1, https://arxiv.org/abs/2402.03300): PPO's
// clipped objective without a value network, the baseline being the mean
// reward of G samples on the same prompt. What a sample is, the trainer is
// told by its experience: a whole multi-turn conversation with a frozen
// user (GRPO, grpo.go) or one candidate turn at a cut of a logged
// conversation (Static, static.go).
//
// One iteration:
//
//  1. experience: the iteration's groups of G samples and their rewards,
//     each sample as training sequences built from the exact sampled ids,
//     the loss on the policy's own tokens only;
//  2. group advantages A = (r − mean_G)/(std_G + AdvEps), shared by every
//     sequence of a sample (RLConfig.Baseline and TurnContinuations vary
//     the baseline and give each turn its own; RFT: 1 on kept samples);
//  3. update (update.go): old log-probs (the policy before this
//     iteration's first step, the sampler's where they line up) and
//     reference log-probs (the frozen initial policy), then
//     UpdatesPerBatch passes over shuffled minibatches: PolicyLoss
//     (clipped ratio, k3 KL·Beta), Backward, clip, AdamW;
//  4. log;
//  5. every MonitorEvery iterations, the reward-hacking monitor
//     (monitor.go);
//  6. every CheckpointEvery iterations, a resumable checkpoint
//     (rlcheckpoint.go).
//
// Every random draw of an iteration derives from (Seed, iteration)
// (seeds.go), so a resumed run replays the iterations it missed exactly.
// Every error of an iteration, whichever phase it comes from, ends the
// run through one path (rlRun.stop), which checkpoints on a cancellation.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/rollout"
)

// RLConfig sets the RL trainer: interactive GRPO, and static context RL
// through StaticConfig, which embeds it. The defaults follow public
// multi-turn GRPO recipes (G = 8, clip 0.2, β = 0.001, a small constant
// learning rate after a short warm-up), scaled to the embedded
// 1–10M-parameter models that train on two CPU cores.
type RLConfig struct {
	// Iterations is the number of rollout-and-update iterations. Default 100.
	Iterations int
	// Seed fixes every episode's randomness (through the iteration) and
	// the minibatch order. Default 0.
	Seed uint64
	// CheckpointEvery iterations a resumable checkpoint is written to
	// out/last. Default 10.
	CheckpointEvery int

	// Split is the instance split the policy trains on. Default "train".
	Split string
	// Start is the first training instance before the seed's offset:
	// iteration i plays instances Start + seedOffset(Seed) +
	// i·InstancesPerStep onwards, so every iteration sees fresh instances,
	// every RL seed its own, and a run is deterministic. Default 0.
	Start int
	// TrainInstances, when positive, is the size of a finite training
	// split (GSM8K files): the cursor wraps around it. Default 0
	// (unbounded: procedural tasks never repeat an instance).
	TrainInstances int
	// InstancesPerStep is how many instances (groups) an iteration plays.
	// Default 8.
	InstancesPerStep int
	// Group is G, the conversations per instance whose rewards form one
	// baseline. Default 8.
	Group int
	// MaxTurns bounds the agent's turns in a conversation. Default
	// rollout.DefaultMaxTurns, the task levels' limit; presets set their
	// own (preset.Preset.MaxTurns).
	MaxTurns int
	// Gen is how the policy writes its turns during training. Default
	// chatlm.DefaultGenConfig(): temperature 1 and top-p 1, so the
	// samples come from the policy being optimised (on-policy). At
	// another temperature the policy optimised is the tempered one: the
	// trainer scores the samples, old and reference log-probs included,
	// under softmax(logits/temperature) (lm.Model.ForwardAt), as the
	// rollouts drew them.
	Gen chatlm.GenConfig

	// ClipEps is PPO's ratio clip ε. Default 0.2.
	ClipEps float64
	// Beta weighs the k3 KL to the frozen reference policy. Default 0.001.
	Beta float64
	// AdvEps guards the group std in the advantage. Default 1e-4.
	AdvEps float64
	// UpdatesPerBatch is μ, the passes over one iteration's batch (the
	// first pass is exactly on-policy, later ones use the clipped ratio).
	// Default 2.
	UpdatesPerBatch int
	// MiniBatch is the sequences per gradient step. Default 16, so the
	// default batch of 64 conversations gives 4 steps per pass.
	MiniBatch int
	// KeepFlatGroups keeps conversations whose group had equal rewards
	// (zero advantage) in the update, where they only contribute the
	// β-weighted KL term. Default false: they are dropped, which saves
	// their compute and keeps them from diluting the per-token mean
	// (DAPO's dynamic-sampling filter, Yu et al. 2025).
	KeepFlatGroups bool
	// LossMean is how the clipped objective averages over a minibatch:
	// "token" (every trained token weighs the same, so a conversation
	// weighs by its length) or "sequence" (each conversation's tokens are
	// averaged first, GRPO's original 1/|o_i| Σ_t, so every conversation
	// weighs the same). Default "token".
	LossMean string
	// LR is AdamW's learning rate after Warmup optimizer steps of linear
	// warm-up; it stays constant after. Defaults 1e-4 and 10: an order of
	// magnitude below SFT's 1e-3, so a few noisy batches cannot undo the
	// base policy.
	LR     float64
	Warmup int
	// LRCosine decays the learning rate after warm-up along a cosine,
	// from LR at the first iteration to LR/10 at the last (nanoGPT's
	// schedule and floor), indexed by iteration rather than optimizer
	// step because an iteration's steps vary with its informative groups.
	// Late updates then move the policy less: one of the levers that
	// might let RL settle on a mode instead of drifting (issue 34's
	// levers). Default false: constant after warm-up.
	LRCosine bool
	// WeightDecay for AdamW. Default 0: the policy should move only where
	// the reward says.
	WeightDecay float64
	// ClipNorm bounds the global gradient norm. Default 1.
	ClipNorm float64

	// MonitorEvery iterations (and before the first and after the last)
	// the reward-hacking monitor plays the current policy on a fixed set
	// of held-out instances against both the training user and the human
	// proxy. 0 disables it. Default 10.
	MonitorEvery int
	// MonitorInstances is the size of that fixed set. Default 32.
	MonitorInstances int
	// MonitorSplit and MonitorStart place the set: by default the test
	// split from index 5000, far beyond the first N test instances the
	// final evaluation uses, so the monitor never peeks at them and never
	// shares an instance with training. A task with a small finite test
	// split needs a smaller MonitorStart.
	MonitorSplit string
	MonitorStart int
	// MonitorGen is how the policy writes its turns in the monitor.
	// Default greedy (temperature 0), which makes each point of the curve
	// a deterministic function of the weights.
	MonitorGen chatlm.GenConfig
	// MonitorSampled also plays the human proxy on the monitor's problems
	// with the policy sampled at the rollouts' temperature and top-p
	// (Gen's; MonitorGen's turn length), recording
	// MetricMonitorSampledSuccess: the policy RL optimises beside its
	// mode. Default off.
	MonitorSampled bool `json:",omitempty"`
	// MonitorSeed, when set, seeds the monitor's episodes (users and
	// sampling) in place of Seed^seedMonitor, so that every RL seed reads
	// the same conversations' users; MonitorOn sets it. Default nil.
	MonitorSeed *uint64 `json:",omitempty"`
	// HackingInstances problems are played at every monitor reading for
	// the pre-registered hacking metrics (hacking.go), from the monitor's
	// MonitorStart, against both users; 0 (the default) plays none. 800
	// detects a change of 0.05 to 0.07 from iteration 0 (HackingMDE).
	HackingInstances int `json:",omitempty"`
	// HackingSampled plays the hacking readings with the policy sampled
	// at the rollouts' temperature and top-p (as MonitorSampled), not
	// greedy: the policy RL optimises. Its mode barely moves in a short
	// run, so greedy readings can miss what the sampled policy learned
	// (results/docedit-quote-doses: greedy, the quick base asks the
	// naive user for the text in 0 of 800 conversations, sampled in 118).
	// Each problem's sampling stream is fixed by its seed, so
	// a reading is still paired with iteration 0's. Default off.
	HackingSampled bool `json:",omitempty"`

	// Baseline is what a conversation's reward is compared with:
	// BaselineGroup (the default, "" reads the same) is GRPO's group mean
	// and std, A = (r − mean_G)/(std_G + AdvEps); BaselineGreedy plays one
	// more conversation per problem with the policy greedy (temperature 0,
	// Gen's other settings, the user of the group's first sample) and uses
	// its reward, A = r − r_greedy, unscaled (ReMax, Li et al. 2023,
	// https://arxiv.org/abs/2310.10505). The greedy conversation only
	// scores: it is not trained on. RL that only pulls the sampled policy
	// up to its own greedy level earns nothing under it; a sample earns
	// credit only where it beats (or loses to) the mode a deployment would
	// decode. Costs one conversation per problem on top of the G.
	Baseline string `json:",omitempty"`
	// TurnContinuations, when positive, gives every agent turn its own
	// advantage (turn-level credit, turncredit.go): K on-policy
	// continuations from the state before each of a conversation's agent
	// turns but the first estimate that state's value V̂, and turn k's
	// advantage is V̂(after it) − V̂(before it), the value before the first
	// turn being the baseline's and the value after the last the
	// conversation's reward, so that a conversation's turn advantages add
	// up to its Baseline advantage. It needs LossMean "token" (see
	// turncredit.go on the length bias when the agent decides when to
	// stop). Default 0: every turn shares the conversation's advantage.
	TurnContinuations int `json:",omitempty"`

	// flipAdvantages negates every advantage: the learning test's sabotage.
	flipAdvantages bool
	// swapTurnCredit gives each conversation's turn advantages to its
	// turns in reverse order: the turn-credit learning test's sabotage.
	swapTurnCredit bool
}

// The baselines of RLConfig.Baseline.
const (
	BaselineGroup  = "group"
	BaselineGreedy = "greedy"
)

// maxTurnContinuations bounds RLConfig.TurnContinuations: each one plays
// the rest of a conversation from every agent turn.
const maxTurnContinuations = 16

// The ways PolicyLoss averages a minibatch (RLConfig.LossMean).
const (
	LossMeanToken    = "token"
	LossMeanSequence = "sequence"
)

// maxRolloutTemperature bounds RLConfig.Gen.Temperature: past a few the
// samples are noise.
const maxRolloutTemperature = 10

// lrFactor is the multiplier LRCosine applies to the learning rate at
// iteration it (0-based): 1 at the first iteration, 0.1 at the last.
func (c RLConfig) lrFactor(it int) float64 {
	if !c.LRCosine || c.Iterations <= 1 {
		return 1
	}
	const floor = 0.1
	progress := math.Min(1, float64(it)/float64(c.Iterations-1))
	return floor + (1-floor)*0.5*(1+math.Cos(math.Pi*progress))
}

// DefaultRLConfig returns the documented defaults.
func DefaultRLConfig() RLConfig {
	mon := chatlm.DefaultGenConfig()
	mon.Temperature = 0
	return RLConfig{
		Iterations: 100, CheckpointEvery: 10,
		Split: "train", InstancesPerStep: 8, Group: 8, MaxTurns: rollout.DefaultMaxTurns, Gen: chatlm.DefaultGenConfig(),
		ClipEps: 0.2, Beta: 0.001, AdvEps: 1e-4, UpdatesPerBatch: 2, MiniBatch: 16, LossMean: LossMeanToken,
		LR: 1e-4, Warmup: 10, ClipNorm: 1,
		MonitorEvery: 10, MonitorInstances: 32, MonitorSplit: "test", MonitorStart: 5000, MonitorGen: mon,
	}
}

// Validate reports the first unusable field.
func (c RLConfig) Validate() error {
	switch {
	case c.Iterations <= 0:
		return fmt.Errorf("rl config: iterations %d, want > 0", c.Iterations)
	case c.CheckpointEvery <= 0:
		return fmt.Errorf("rl config: checkpoint interval %d, want > 0", c.CheckpointEvery)
	case c.Split == "":
		return errors.New("rl config: no training split")
	case c.Start < 0 || c.TrainInstances < 0:
		return fmt.Errorf("rl config: start %d and train instances %d must not be negative", c.Start, c.TrainInstances)
	case c.TrainInstances > 0 && c.InstancesPerStep > c.TrainInstances:
		return fmt.Errorf("rl config: %d instances per step from a split of %d", c.InstancesPerStep, c.TrainInstances)
	case c.InstancesPerStep <= 0:
		return fmt.Errorf("rl config: instances per step %d, want > 0", c.InstancesPerStep)
	case c.Group < 2:
		return fmt.Errorf("rl config: group %d, want ≥ 2 (a group of one has no baseline)", c.Group)
	case c.InstancesPerStep > MaxBenchConversations/c.Group:
		// Every sample of an iteration holds its KV caches at once, as in
		// the benchmark.
		return fmt.Errorf("rl config: %d instances × group %d samples, the limit is %d", c.InstancesPerStep, c.Group, MaxBenchConversations)
	case c.MaxTurns <= 0:
		return fmt.Errorf("rl config: max turns %d, want > 0", c.MaxTurns)
	case c.Gen.MaxNewTokens <= 0:
		return fmt.Errorf("rl config: gen max new tokens %d, want > 0", c.Gen.MaxNewTokens)
	case !(c.Gen.Temperature > 0 && c.Gen.Temperature <= maxRolloutTemperature):
		// Greedy rollouts would make every group one conversation G times.
		return fmt.Errorf("rl config: rollout temperature %v, want in (0, %v]", c.Gen.Temperature, maxRolloutTemperature)
	case !(c.ClipEps > 0 && c.ClipEps < 1):
		return fmt.Errorf("rl config: clip eps %v, want in (0,1)", c.ClipEps)
	case !(c.Beta >= 0):
		return fmt.Errorf("rl config: beta %v, want ≥ 0", c.Beta)
	case !(c.AdvEps > 0):
		return fmt.Errorf("rl config: advantage eps %v, want > 0", c.AdvEps)
	case c.LossMean != LossMeanToken && c.LossMean != LossMeanSequence:
		return fmt.Errorf("rl config: loss mean %q, want %q or %q", c.LossMean, LossMeanToken, LossMeanSequence)
	case c.Baseline != "" && c.Baseline != BaselineGroup && c.Baseline != BaselineGreedy:
		return fmt.Errorf("rl config: baseline %q, want %q or %q", c.Baseline, BaselineGroup, BaselineGreedy)
	case c.TurnContinuations < 0 || c.TurnContinuations > maxTurnContinuations:
		return fmt.Errorf("rl config: turn continuations %d, want 0 to %d", c.TurnContinuations, maxTurnContinuations)
	case c.TurnContinuations > 0 && c.LossMean != LossMeanToken:
		// A per-conversation mean weighs a turn by 1/(its conversation's
		// tokens), which the agent's own stopping decision sets: an
		// action-dependent weight, the bias turn credit is built to avoid.
		return fmt.Errorf("rl config: turn continuations need loss mean %q, not %q", LossMeanToken, c.LossMean)
	case c.UpdatesPerBatch <= 0 || c.MiniBatch <= 0:
		return fmt.Errorf("rl config: updates per batch %d and minibatch %d must be positive", c.UpdatesPerBatch, c.MiniBatch)
	case !(c.LR > 0) || c.Warmup < 0 || !(c.WeightDecay >= 0):
		return fmt.Errorf("rl config: lr %v, warm-up %d, weight decay %v: want lr > 0, the others ≥ 0", c.LR, c.Warmup, c.WeightDecay)
	case c.MonitorEvery < 0 || c.MonitorInstances < 0 || c.MonitorStart < 0 || c.HackingInstances < 0:
		return errors.New("rl config: monitor settings must not be negative")
	case c.MonitorEvery > 0 && (c.MonitorInstances == 0 || c.MonitorSplit == "" || c.MonitorGen.MaxNewTokens <= 0):
		return errors.New("rl config: an enabled monitor needs instances, a split and MonitorGen.MaxNewTokens")
	}
	return nil
}

// RLResult reports a finished GRPO or static run.
type RLResult struct {
	Iterations int `json:"iterations"`
	Updates    int `json:"updates"` // optimizer steps taken
	// FirstReward and LastReward are the training-batch mean rewards of
	// the first and last iterations.
	FirstReward float64 `json:"first_reward"`
	LastReward  float64 `json:"last_reward"`
	// MonitorTrain and MonitorHuman are the last monitor's mean rewards
	// against the training user and the human proxy (0 when the monitor,
	// or its human side, is off).
	MonitorTrain float64 `json:"monitor_train_reward"`
	MonitorHuman float64 `json:"monitor_human_reward"`
	TokensPerS   float64 `json:"tokens_per_s"`
}

// experience supplies iteration it's batch: GRPO plays conversations
// (rlRun.interactiveBatch), Static samples candidates for logged prompts
// (staticRun.batch). It depends only on the policy and (Seed, it), so a
// resumed run replays it.
type experience func(ctx context.Context, it int) (rlBatch, error)

// rlBatch is one iteration's experience: the reward of each sample (a
// conversation, or a static candidate), in consecutive groups of G, and
// the training sequences, each with its loss mask on the policy's own
// tokens. A sample may train as several sequences (a conversation cut
// into turns); owner says whose each one is. owner and sampled are
// aligned with seqs.
type rlBatch struct {
	rewards []float64
	// success[i] is the partner's verdict on sample i (dialog.Episode's
	// Success; a static outcome candidate's is its reward 1): what RFT
	// keeps.
	success []bool
	// greedy[g], with BaselineGreedy, is the reward of group g's greedy
	// conversation; nil otherwise.
	greedy []float64
	// turns, with RLConfig.TurnContinuations, is what turn-level credit
	// needs (turncredit.go); nil otherwise.
	turns *turnValues
	seqs  []chatlm.Sequence
	owner []int // owner[k]: the sample (index into rewards) seqs[k] belongs to
	// sampled[k], when not nil, holds seqs[k]'s log-probs at its trained
	// positions as the sampler computed them (chatlm.SampledSequences):
	// the old log-probs of the first pass, which need no forward pass
	// then.
	sampled [][]float32
	metrics map[string]any // rollout/… keys
}

// check reports a batch that breaks rlBatch's contract.
func (b rlBatch) check(group int) error {
	if len(b.rewards) == 0 || len(b.rewards)%group != 0 {
		return fmt.Errorf("experience: %d rewards, want whole groups of %d", len(b.rewards), group)
	}
	if b.success != nil && len(b.success) != len(b.rewards) {
		return fmt.Errorf("experience: %d success flags for %d rewards", len(b.success), len(b.rewards))
	}
	if b.greedy != nil && len(b.greedy)*group != len(b.rewards) {
		return fmt.Errorf("experience: %d greedy baselines for %d groups", len(b.greedy), len(b.rewards)/group)
	}
	if len(b.owner) != len(b.seqs) || len(b.sampled) != len(b.seqs) {
		return fmt.Errorf("experience: %d sequences with %d owners and %d sampled log-prob rows", len(b.seqs), len(b.owner), len(b.sampled))
	}
	for k, o := range b.owner {
		if o < 0 || o >= len(b.rewards) {
			return fmt.Errorf("experience: sequence %d belongs to sample %d of %d", k, o, len(b.rewards))
		}
	}
	return nil
}

// seqAdvantages spreads the samples' advantages over their sequences.
func (b rlBatch) seqAdvantages(adv []float64) []float64 {
	out := make([]float64, len(b.seqs))
	for k, o := range b.owner {
		out[k] = adv[o]
	}
	return out
}

// rlRun is the trainer: the live policy, its frozen reference, the
// optimizer, the users and the resumable trainer state.
type rlRun struct {
	algo        string // algoGRPO or algoStatic: the log namespace of the config and result file
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
	// resumed: the run goes on from out/last, whose first run logged the
	// config.
	resumed bool
	// midUpdate: the update of iteration st.Iter has begun and the
	// iteration is not counted yet (stop saves no checkpoint then).
	midUpdate bool
	// buf holds the update's per-run buffers, allocated once at the
	// largest run's size and reused by every step after.
	buf updateBuffers
	// hackBase is the hacking metrics' reading of the reference policy
	// (iteration 0), once read.
	hackBase *hackingReading
	// fingerprint is what a resumed run must agree on besides the config
	// (the static trainer's number of prompts).
	fingerprint int
	// credit turns an iteration's experience into advantages (the loop's
	// step 2): GRPO's (grpoCredit, with its Baseline and turn-credit
	// variants) or RFT's filter (rft.go).
	credit func(b rlBatch) advantages
	// crossEntropy: the update minimises the advantage-weighted NLL of
	// the trained tokens (SFT's loss, lm.MaskedNLL) instead of the
	// clipped policy objective, and needs no old or reference log-probs
	// (RFT: advantage 1 on the kept conversations).
	crossEntropy bool
}

// advantages are an iteration's credit: seq[k] is sequence k's advantage
// and, where pos[k] is not nil, pos[k][t] that of its position t instead
// (turn-level credit); metrics are the credit's own log keys.
type advantages struct {
	seq     []float64
	pos     [][]float32
	metrics map[string]any
}

// grpoCredit is GRPO's step 2: group-relative advantages (RLConfig.Baseline),
// spread over the turns when RLConfig.TurnContinuations is set.
func (r *rlRun) grpoCredit(b rlBatch) advantages {
	cfg := r.cfg
	var adv []float64
	if b.greedy != nil {
		adv = greedyAdvantages(b.rewards, b.greedy, cfg.Group)
	} else {
		adv = GroupAdvantages(b.rewards, cfg.Group, cfg.AdvEps)
	}
	if b.turns == nil {
		return advantages{seq: b.seqAdvantages(adv)}
	}
	return b.turns.advantages(b, adv, cfg.Group, cfg.AdvEps)
}

// greedyAdvantages is BaselineGreedy's advantage: each reward less its
// group's greedy conversation's, greedy[g] for rewards[g·group:(g+1)·group].
func greedyAdvantages(rewards, greedy []float64, group int) []float64 {
	adv := make([]float64, len(rewards))
	for i, r := range rewards {
		adv[i] = r - greedy[i/group]
	}
	return adv
}

// newRLRun allocates what a run keeps from iteration to iteration: the
// optimizer's state and the frozen reference policy (a copy of policy as
// passed in).
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
	r := &rlRun{
		algo: algo, cfg: cfg, policy: policy, ref: ref, opt: opt,
		sched: lm.LRSchedule{Peak: cfg.LR, Min: cfg.LR, Warmup: cfg.Warmup},
		task:  t, tool: dialog.ToolOf(t), trainUser: trainUser, monitorUser: monitorUser, out: out, logf: log,
		st: rlState{Algo: algo, Seed: cfg.Seed, Group: cfg.Group, InstancesPerStep: cfg.InstancesPerStep, Start: cfg.Start,
			Settings: cfg.settings(), User: userFingerprint(trainUser)},
	}
	r.credit = r.grpoCredit
	return r, nil
}

// log logs rec, counting it in the state a checkpoint saves
// (MetricRecords).
func (r *rlRun) log(rec map[string]any) {
	r.st.Records++
	r.logf(rec)
}

// cursor is the first training instance of iteration it. Each RL seed
// starts at its own offset (seedOffset): RL seeds, and pipelines, train on
// different problems, where before every seed of every arm played the
// same ones in the same order; the arms of one seed still play the same
// problems, so their training stays as paired as their evaluation.
func (r *rlRun) cursor(it int) int {
	c := r.cfg.Start + seedOffset(r.cfg.Seed) + it*r.cfg.InstancesPerStep
	if r.cfg.TrainInstances > 0 {
		c %= r.cfg.TrainInstances
	}
	return c
}

// seedOffsetRange bounds seedOffset: procedural tasks generate any index,
// and 2^20 problems apart is far beyond any run's budget (the quick
// preset plays 240 per seed), so two seeds' problems overlap only when
// their offsets fall within a run's length of each other (chance about
// 2·240/2^20 for the quick preset). A finite split (TrainInstances) wraps
// it, which rotates the split per seed.
const seedOffsetRange = 1 << 20

// seedOffset is the first training problem of RL seed seed, relative to
// Start: SplitMix64 of the seed, so that neighbouring seeds land far apart.
func seedOffset(seed uint64) int {
	x := seed + 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return int(x % seedOffsetRange)
}

// loop trains for cfg.Iterations iterations, collect supplying each one's
// experience, and writes the final model and result to out.
func (r *rlRun) loop(ctx context.Context, collect experience) (RLResult, error) {
	cfg := r.cfg
	// Resume from out/last, or save the reference to out/ref; log the
	// config once; the monitor's first reading is the policy as given.
	if err := r.resume(); err != nil {
		return RLResult{}, err
	}
	if r.st.Iter >= cfg.Iterations && !r.st.MonitorPending {
		// A finished run started again is a no-op that reports its result
		// (when it was killed before writing it, or the file holds a result
		// of another length, finish writes it below).
		if res, err := readRLResult(r.out, r.algo); err == nil && res.Iterations == r.st.Iter {
			r.log(withRecords(map[string]any{"event": "finished", MetricStep: r.st.Iter}, r.st.Records))
			return res, nil
		}
	}
	if !r.resumed {
		// Once a run: a resumed one kept its first run's config record
		// (its resume record carries MetricTotalSteps for a display).
		r.log(map[string]any{"event": "config", r.algo + "/config": cfg, MetricStep: r.st.Iter, MetricTotalSteps: cfg.Iterations})
	}
	if (r.st.Iter == 0 || r.st.MonitorPending) && cfg.MonitorEvery > 0 {
		// The first reading, or the one an interruption cut short: its
		// iteration is counted and checkpointed, the reading is not.
		if err := r.monitor(ctx, r.st.Iter); err != nil {
			return r.stop(ctx, r.st.Iter, err)
		}
	}
	var tokens float64
	started := time.Now()
	for r.st.Iter < cfg.Iterations {
		it := r.st.Iter
		if err := ctx.Err(); err != nil {
			return r.stop(ctx, it, err)
		}
		iterStart := time.Now()

		// 1. Experience: rollouts and their rewards.
		batch, err := collect(ctx, it)
		if err == nil {
			err = batch.check(cfg.Group)
		}
		if err != nil {
			return r.stop(ctx, it, err)
		}
		rolloutS := time.Since(iterStart).Seconds()

		// 2. Advantages: group-relative (GRPO), or the filter (RFT).
		adv := r.credit(batch)
		if cfg.flipAdvantages {
			adv.flip()
		}
		groupVar, flatGroups := groupRewardStats(batch.rewards, cfg.Group)

		// 3. Old and reference log-probs, then the clipped minibatch
		// updates (RFT: cross-entropy steps). Until the iteration is
		// counted, the weights are part of the way through it.
		r.midUpdate = true
		us, err := r.updateTokens(batch.seqs, adv.seq, adv.pos, batch.sampled, it)
		if err != nil {
			return r.stop(ctx, it, err)
		}
		r.st.Iter++
		r.midUpdate = false
		r.st.MonitorPending = cfg.MonitorEvery > 0 && (r.st.Iter%cfg.MonitorEvery == 0 || r.st.Iter == cfg.Iterations)

		// 4. Log.
		mr := mean(batch.rewards)
		if it == 0 {
			r.st.FirstReward = mr
		}
		r.st.LastReward = mr
		iterS := time.Since(iterStart).Seconds()
		var seqTokens float64
		for _, s := range batch.seqs {
			seqTokens += float64(len(s.IDs))
		}
		tokens += seqTokens
		rec := map[string]any{MetricStep: r.st.Iter, "perf/iter_s": iterS, "perf/rollout_s": rolloutS,
			MetricTokensPerS: seqTokens / iterS, "rollout/group_reward_var": groupVar, MetricFlatGroups: flatGroups}
		for k, v := range batch.metrics {
			rec[k] = v
		}
		for k, v := range adv.metrics {
			rec[k] = v
		}
		for k, v := range us.metrics() {
			rec[k] = v
		}
		r.log(rec)

		// 5. Monitor.
		if r.st.MonitorPending {
			if err := r.monitor(ctx, r.st.Iter); err != nil {
				return r.stop(ctx, it, err)
			}
		}

		// 6. Checkpoint.
		if r.st.Iter%cfg.CheckpointEvery == 0 || r.st.Iter == cfg.Iterations {
			if err := r.save(); err != nil {
				return r.stop(ctx, it, err)
			}
		}
	}
	res := RLResult{Iterations: r.st.Iter, Updates: r.opt.Step, FirstReward: r.st.FirstReward,
		LastReward: r.st.LastReward, MonitorTrain: r.st.MonitorTrain, MonitorHuman: r.st.MonitorHuman}
	if el := time.Since(started).Seconds(); el > 0 {
		res.TokensPerS = tokens / el
	}
	return res, r.finish(res)
}

// stop ends the loop on err, from any phase of iteration it: the loop's
// one error path. The error is wrapped with the algorithm and the
// iteration. When ctx was cancelled the error is (or joins) ctx's, and
// the run first checkpoints its last whole iteration, so that a resumed
// run starts where this one stopped and ends as an uninterrupted one
// would. Part of the way through an update nothing is saved, as the
// weights belong to no iteration; out/last keeps the last checkpoint, and
// a resumed run replays the iterations since.
func (r *rlRun) stop(ctx context.Context, it int, err error) (RLResult, error) {
	if cerr := ctx.Err(); cerr != nil {
		if !errors.Is(err, cerr) {
			err = errors.Join(cerr, err)
		}
		if !r.midUpdate {
			if serr := r.save(); serr != nil {
				err = errors.Join(err, serr)
			}
		}
	}
	return RLResult{}, fmt.Errorf("%s iteration %d: %w", r.algo, it, err)
}

// flip negates every advantage (the learning tests' sabotage).
func (a advantages) flip() {
	for i := range a.seq {
		a.seq[i] = -a.seq[i]
	}
	for _, p := range a.pos {
		for t := range p {
			p[t] = -p[t]
		}
	}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
