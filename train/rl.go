package train

// The RL trainer GRPO and Static share, laid out as CleanRL's ppo.py:
// config, preallocation, then the iteration, whole, in one loop.
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
//     sequence of a sample;
//  3. update (below the loop): old log-probs (the policy before this
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
	"math/rand/v2"
	"slices"
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
	// MaxTurns bounds the agent's turns in a conversation. Default 8:
	// mathchat needs up to three questions, an answer and a retry.
	MaxTurns int
	// Gen is how the policy writes its turns during training. Default
	// chatlm.DefaultGenConfig(): temperature 1 and top-p 1, so the
	// samples come from the policy being optimised (on-policy).
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

	// flipAdvantages negates every advantage: the learning test's sabotage.
	flipAdvantages bool
	// wholeMinibatches keeps step from cutting minibatches into length
	// runs (the test that compares both).
	wholeMinibatches bool
}

// The ways PolicyLoss averages a minibatch (RLConfig.LossMean).
const (
	LossMeanToken    = "token"
	LossMeanSequence = "sequence"
)

// DefaultRLConfig returns the documented defaults.
func DefaultRLConfig() RLConfig {
	mon := chatlm.DefaultGenConfig()
	mon.Temperature = 0
	return RLConfig{
		Iterations: 100, CheckpointEvery: 10,
		Split: "train", InstancesPerStep: 8, Group: 8, MaxTurns: 8, Gen: chatlm.DefaultGenConfig(),
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
	case c.MaxTurns <= 0:
		return fmt.Errorf("rl config: max turns %d, want > 0", c.MaxTurns)
	case c.Gen.MaxNewTokens <= 0:
		return fmt.Errorf("rl config: gen max new tokens %d, want > 0", c.Gen.MaxNewTokens)
	case !(c.ClipEps > 0 && c.ClipEps < 1):
		return fmt.Errorf("rl config: clip eps %v, want in (0,1)", c.ClipEps)
	case !(c.Beta >= 0):
		return fmt.Errorf("rl config: beta %v, want ≥ 0", c.Beta)
	case !(c.AdvEps > 0):
		return fmt.Errorf("rl config: advantage eps %v, want > 0", c.AdvEps)
	case c.LossMean != LossMeanToken && c.LossMean != LossMeanSequence:
		return fmt.Errorf("rl config: loss mean %q, want %q or %q", c.LossMean, LossMeanToken, LossMeanSequence)
	case c.UpdatesPerBatch <= 0 || c.MiniBatch <= 0:
		return fmt.Errorf("rl config: updates per batch %d and minibatch %d must be positive", c.UpdatesPerBatch, c.MiniBatch)
	case !(c.LR > 0) || c.Warmup < 0 || !(c.WeightDecay >= 0):
		return fmt.Errorf("rl config: lr %v, warm-up %d, weight decay %v: want lr > 0, the others ≥ 0", c.LR, c.Warmup, c.WeightDecay)
	case c.MonitorEvery < 0 || c.MonitorInstances < 0 || c.MonitorStart < 0:
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
	seqs    []chatlm.Sequence
	owner   []int // owner[k]: the sample (index into rewards) seqs[k] belongs to
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
	// midUpdate: the update of iteration st.Iter has begun and the
	// iteration is not counted yet (stop saves no checkpoint then).
	midUpdate bool
	// buf holds the update's per-run buffers, allocated once at the
	// largest run's size and reused by every step after.
	buf updateBuffers
	// fingerprint is what a resumed run must agree on besides the config
	// (the static trainer's number of prompts).
	fingerprint int
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
	return &rlRun{
		algo: algo, cfg: cfg, policy: policy, ref: ref, opt: opt,
		sched: lm.LRSchedule{Peak: cfg.LR, Min: cfg.LR, Warmup: cfg.Warmup},
		task:  t, tool: dialog.ToolOf(t), trainUser: trainUser, monitorUser: monitorUser, out: out, logf: log,
		st: rlState{Algo: algo, Seed: cfg.Seed, Group: cfg.Group, InstancesPerStep: cfg.InstancesPerStep, Start: cfg.Start,
			Settings: cfg.settings(), User: userFingerprint(trainUser)},
	}, nil
}

func (r *rlRun) log(rec map[string]any) { r.logf(rec) }

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
	r.log(map[string]any{"event": "config", r.algo + "/config": cfg})
	if r.st.Iter == 0 && cfg.MonitorEvery > 0 {
		if err := r.monitor(ctx, 0); err != nil {
			return r.stop(ctx, 0, err)
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

		// 2. Group-relative advantages.
		adv := GroupAdvantages(batch.rewards, cfg.Group, cfg.AdvEps)
		if cfg.flipAdvantages {
			for i := range adv {
				adv[i] = -adv[i]
			}
		}
		groupVar, flatGroups := groupRewardStats(batch.rewards, cfg.Group)

		// 3. Old and reference log-probs, then the clipped minibatch
		// updates. Until the iteration is counted, the weights are part of
		// the way through it.
		r.midUpdate = true
		us, err := r.update(batch.seqs, batch.seqAdvantages(adv), batch.sampled, it)
		if err != nil {
			return r.stop(ctx, it, err)
		}
		r.st.Iter++
		r.midUpdate = false

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
		for k, v := range us.metrics() {
			rec[k] = v
		}
		r.log(rec)

		// 5. Monitor.
		if cfg.MonitorEvery > 0 && (r.st.Iter%cfg.MonitorEvery == 0 || r.st.Iter == cfg.Iterations) {
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

// The update of an iteration (the loop's step 3): old and reference
// log-probs of the sequences that carry signal, then UpdatesPerBatch
// passes of clipped policy-gradient steps over seeded minibatches.

// updateStats sums what the minibatch steps of one iteration report.
type updateStats struct {
	steps, seqs                        int
	loss, kl, clipFrac, ratio, gradSum float64
	maxAdv                             float64
	// logprobS and stepS are the seconds spent on the old and reference
	// log-probs and on the minibatch steps.
	logprobS, stepS float64
}

func (u updateStats) metrics() map[string]any {
	m := map[string]any{MetricUpdates: u.steps, MetricSequences: u.seqs, "train/adv_abs_max": u.maxAdv,
		"perf/logprob_s": u.logprobS, "perf/update_s": u.stepS}
	if u.steps == 0 {
		return m // no signal: logged as a skipped update, no loss keys
	}
	n := float64(u.steps)
	m[MetricPolicyLoss], m[MetricKL], m[MetricClipFrac] = u.loss/n, u.kl/n, u.clipFrac/n
	m["loss/ratio"], m["grad/norm"] = u.ratio/n, u.gradSum/n
	return m
}

// update runs UpdatesPerBatch passes of clipped policy-gradient steps over
// the sequences with a non-zero advantage (all of them with
// KeepFlatGroups), adv[k] being seqs[k]'s. The old log-probs of seqs[k]
// are sampled[k] where it is not nil (rlBatch.sampled), else computed. It
// takes no step when no sequence carries signal.
func (r *rlRun) update(seqs []chatlm.Sequence, adv []float64, sampled [][]float32, it int) (updateStats, error) {
	cfg := r.cfg
	var us updateStats
	var idx []int
	for i, a := range adv {
		us.maxAdv = max(us.maxAdv, math.Abs(a))
		if (a != 0 || cfg.KeepFlatGroups) && seqs[i].Trained() > 0 {
			idx = append(idx, i)
		}
	}
	if us.maxAdv == 0 || len(idx) == 0 {
		return us, nil // every group flat: nothing to learn from
	}
	us.seqs = len(idx)
	start := time.Now()
	// Old log-probs: the policy before this iteration's first step, on
	// exactly the sequences it is trained on, so the first pass has ratio
	// 1 (to float rounding where the sampler's log-probs are reused: the
	// rollout sampled with these very weights). Reference log-probs: the
	// frozen initial policy.
	old := make([][]float32, len(idx))
	var missing []int // positions in idx without sampled log-probs
	for k, i := range idx {
		if sampled[i] != nil {
			old[k] = sampled[i]
		} else {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sub := make([]int, len(missing))
		for j, k := range missing {
			sub[j] = idx[k]
		}
		lp, err := sequenceLogp(r.policy, seqs, sub, cfg.MiniBatch)
		if err != nil {
			return us, err
		}
		for j, k := range missing {
			old[k] = lp[j]
		}
	}
	ref, err := sequenceLogp(r.ref, seqs, idx, cfg.MiniBatch)
	if err != nil {
		return us, err
	}
	us.logprobS = time.Since(start).Seconds()
	start = time.Now()
	rng := rand.New(rand.NewPCG(iterSeed(cfg.Seed, it), streamMinibatch))
	for pass := 0; pass < cfg.UpdatesPerBatch; pass++ {
		order := rng.Perm(len(idx))
		for lo := 0; lo < len(order); lo += cfg.MiniBatch {
			mb := order[lo:min(lo+cfg.MiniBatch, len(order))]
			st, norm, err := r.step(seqs, idx, mb, old, ref, adv)
			if err != nil {
				return us, err
			}
			us.steps++
			us.loss, us.kl, us.clipFrac, us.ratio, us.gradSum = us.loss+st.Loss, us.kl+st.KL, us.clipFrac+st.ClipFrac, us.ratio+st.Ratio, us.gradSum+norm
		}
	}
	us.stepS = time.Since(start).Seconds()
	return us, nil
}

// step is one minibatch gradient step: Forward, PolicyLoss, Backward,
// clip, AdamW. mb indexes idx, which indexes seqs; old and ref are
// aligned with idx. A minibatch of very different lengths is not padded
// to its longest sequence: it is cut into runs of similar length
// (lengthRuns), each run's Forward and Backward adding to the one
// gradient, its loss weighted by its share of the minibatch's trained
// tokens, which is the whole minibatch's step up to float rounding. A
// minibatch that gains little from cutting is one run in its own order,
// as before.
func (r *rlRun) step(seqs []chatlm.Sequence, idx, mb []int, old, ref [][]float32, adv []float64) (PolicyLossStats, float64, error) {
	cfg := r.cfg
	runs := [][]int{mb}
	if !cfg.wholeMinibatches {
		runs = lengthRuns(seqs, idx, mb)
	}
	total := 0
	for _, k := range mb {
		total += seqs[idx[k]].Trained()
	}
	// With LossMean "sequence" a token weighs (mean trained tokens per
	// sequence) / (its sequence's trained tokens): every conversation gets
	// the same total weight, and the minibatch the same total as with
	// "token", so the step size stays comparable.
	seqWeight := func(k int) float32 { return 1 }
	if cfg.LossMean == LossMeanSequence {
		meanTrained := float64(total) / float64(len(mb))
		seqWeight = func(k int) float32 { return float32(meanTrained / float64(seqs[idx[k]].Trained())) }
	}
	var st PolicyLossStats
	r.policy.LM.ZeroGrad()
	for _, run := range runs {
		batch := make([]chatlm.Sequence, len(run))
		for j, k := range run {
			batch[j] = seqs[idx[k]]
		}
		tok, B, T, lens, mask := r.policy.Pack(batch)
		oldFlat, refFlat, advFlat, dlogp := r.buf.take(B * T)
		for j, k := range run {
			copy(oldFlat[j*T:], old[k])
			copy(refFlat[j*T:], ref[k])
			a, w := float32(adv[idx[k]]), seqWeight(k)
			for t := 0; t < T; t++ {
				advFlat[j*T+t] = a
				if w != 1 {
					mask[j*T+t] *= w
				}
			}
		}
		logp, err := r.policy.LM.Forward(tok, B, T, lens)
		if err != nil {
			return PolicyLossStats{}, 0, err
		}
		rs := policyLossInto(dlogp, logp, oldFlat, refFlat, advFlat, mask, cfg.ClipEps, cfg.Beta)
		if cfg.Beta == 0 {
			rs.KL = meanKL(logp, refFlat, mask) // still worth watching
		}
		if len(runs) == 1 {
			st = rs
		} else {
			w := rs.Weight / float64(total)
			for i := range dlogp {
				dlogp[i] = float32(float64(dlogp[i]) * w)
			}
			st.Tokens += rs.Tokens
			st.Loss, st.KL, st.Ratio, st.ClipFrac = st.Loss+w*rs.Loss, st.KL+w*rs.KL, st.Ratio+w*rs.Ratio, st.ClipFrac+w*rs.ClipFrac
		}
		if err := r.policy.LM.Backward(dlogp); err != nil {
			return st, 0, err
		}
	}
	norm := lm.ClipGradNorm(r.policy.LM, cfg.ClipNorm)
	if err := r.opt.Update(r.policy.LM, r.sched.At(r.opt.Step)); err != nil {
		return st, norm, err
	}
	return st, norm, nil
}

// updateBuffers are a minibatch run's old and reference log-probs, its
// advantages and its loss gradient, B·T positions each.
type updateBuffers struct{ old, ref, adv, dlogp []float32 }

// take returns the four buffers at length n, growing them only when a run
// is larger than any before. The caller overwrites what it reads: the
// sequences copied in cover their own positions only, so the rest are
// cleared here (padding has mask 0, but its old and reference log-probs
// must not be a previous run's values either).
func (b *updateBuffers) take(n int) (old, ref, adv, dlogp []float32) {
	if cap(b.old) < n {
		b.old, b.ref, b.adv, b.dlogp = make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	}
	b.old, b.ref, b.adv, b.dlogp = b.old[:n], b.ref[:n], b.adv[:n], b.dlogp[:n]
	clear(b.old)
	clear(b.ref)
	clear(b.adv)
	return b.old, b.ref, b.adv, b.dlogp
}

// lengthRuns cuts minibatch mb (indexing idx, which indexes seqs) into
// runs of sequences of similar length, longest first, each run holding
// sequences at least 4/5 of its first one's length. It returns mb whole,
// in its own order, unless the runs pad at least a fifth fewer positions.
func lengthRuns(seqs []chatlm.Sequence, idx, mb []int) [][]int {
	n := func(k int) int { return len(seqs[idx[k]].IDs) }
	longest, whole := 0, 0
	for _, k := range mb {
		longest = max(longest, n(k))
	}
	whole = longest * len(mb)
	sorted := slices.Clone(mb)
	slices.SortStableFunc(sorted, func(a, b int) int { return n(b) - n(a) })
	var runs [][]int
	cut := 0
	for lo := 0; lo < len(sorted); {
		hi := lo + 1
		for hi < len(sorted) && 5*n(sorted[hi]) >= 4*n(sorted[lo]) {
			hi++
		}
		runs = append(runs, sorted[lo:hi])
		cut += n(sorted[lo]) * (hi - lo)
		lo = hi
	}
	if len(runs) == 1 || 5*cut > 4*whole {
		return [][]int{mb}
	}
	return runs
}

// sequenceLogp returns, for each seqs[idx[k]], its per-position log-probs
// under m (length len(IDs)), computed in batches of sequences of similar
// length (the longest first), so little is padded. A row's log-probs do
// not depend on the rows beside it or on the padding, so the batching
// changes no figure.
func sequenceLogp(m *chatlm.Model, seqs []chatlm.Sequence, idx []int, batch int) ([][]float32, error) {
	out := make([][]float32, len(idx))
	order := make([]int, len(idx)) // positions in idx, longest sequence first
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(seqs[idx[b]].IDs) - len(seqs[idx[a]].IDs) })
	for lo := 0; lo < len(order); lo += batch {
		part := order[lo:min(lo+batch, len(order))]
		b := make([]chatlm.Sequence, len(part))
		for j, k := range part {
			b[j] = seqs[idx[k]]
		}
		tok, B, T, lens, _ := m.Pack(b)
		logp, err := m.LM.Forward(tok, B, T, lens)
		if err != nil {
			return nil, err
		}
		for j, k := range part {
			out[k] = append([]float32(nil), logp[j*T:j*T+lens[j]]...)
		}
	}
	return out, nil
}

// meanKL is the mean k3 KL over masked positions.
func meanKL(logp, ref, mask []float32) float64 {
	var s, n float64
	for i, w := range mask {
		if w > 0 {
			s += KLk3(float64(logp[i]), float64(ref[i]))
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / n
}
