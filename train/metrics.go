package train

import (
	"log/slog"
	"strings"

	"github.com/calibrl/calibrl/progress"
)

// The keys under which the trainers' records (the argument of their log
// func, one metrics.jsonl line each) carry the figures read outside this
// package: by reproduce's report and stage logs, and by the command
// line's progress. Every record has MetricStep: the SFT step, or the RL
// iteration.
const (
	MetricStep = "step"
	// MetricTotalSteps is the steps (SFT) or iterations (RL) a run is set
	// to make, in the record that opens it (an SFT run's "start", an RL
	// run's "config"): a display's 100%.
	MetricTotalSteps = "total_steps"

	// MetricRecords is on the first record a resumed run logs (its
	// "resume" event, or "finished" for a finished run started again):
	// how many records the run had logged when the checkpoint it resumes
	// from was saved. The records a killed run logged after that
	// checkpoint are of work the resumed run redoes: a metrics log keeps
	// the first MetricRecords of the run's records and drops the rest, so
	// that it ends as an uninterrupted run's would (reproduce's
	// metrics.jsonl). A run's first record without it starts from
	// nothing: every earlier record of the run is of redone work. A
	// checkpoint saved before runs counted their records has no count:
	// its resume record has none, and every earlier record stays.
	MetricRecords = "resume/records"

	// An SFT step's training loss; at an evaluation also the held-out NLL
	// and the throughput.
	MetricSFTLoss   = "sft/loss"
	MetricSFTValNLL = "sft/val_nll"
	// MetricSFTSelect and MetricSFTSelectSE are a selector's score of the
	// weights at an evaluation and its standard error (SFTSelect).
	MetricSFTSelect   = "sft/select"
	MetricSFTSelectSE = "sft/select_se"
	MetricTokensPerS  = "perf/tokens_per_s"

	// An RL iteration: the batch's mean reward, the groups whose rewards
	// were all equal, the losses, and the optimizer steps and sequences of
	// the update.
	MetricReward     = "rollout/reward_mean"
	MetricFlatGroups = "rollout/flat_groups"
	// MetricEntropy is the mean negative log-probability, under the
	// model, of the tokens the policy sampled in its turns (not those a
	// tool forced): at the rollouts' temperature 1 and top-p 1 an unbiased
	// estimate of the policy's per-token entropy in nats, so that arms can
	// be compared at matched entropy (RL that only sharpens lowers it).
	MetricEntropy    = "rollout/entropy"
	MetricPolicyLoss = "loss/policy"
	MetricKL         = "loss/kl"
	MetricClipFrac   = "loss/clip_frac"
	MetricUpdates    = "train/updates"
	// MetricLRScale is the factor RLConfig.LRCosine applies to the
	// learning rate at the iteration (1 → 0.1); absent at a constant rate.
	MetricLRScale   = "train/lr_scale"
	MetricSequences = "train/sequences"
	// MetricGradTokens is the policy-gradient budget of an iteration: the
	// policy's own tokens (those the loss mask trains) in the sequences
	// with a non-zero advantage, each counted once however many passes
	// train on it. A flat group adds none, even when KeepFlatGroups keeps
	// it for the KL term. It compares arms whose batches differ in kind:
	// a static candidate is one turn, an interactive sample a whole
	// conversation, so equal sequences are not equal gradient.
	MetricGradTokens = "train/grad_tokens"
	// MetricSuccess is the share of an iteration's samples the training
	// partner marked successful (dialog.Episode.Success).
	MetricSuccess = "rollout/success"
	// MetricNLL is the mean NLL of the trained tokens over an iteration's
	// cross-entropy steps (RFT), in place of the policy-loss keys.
	MetricNLL = "loss/nll"

	// An RFT iteration (rft.go): the conversations (samples) kept, and
	// the problems with at least one kept. Their agent tokens are
	// MetricGradTokens, the success rate MetricSuccess.
	MetricRFTKept         = "rft/kept"
	MetricRFTKeptProblems = "rft/kept_problems"

	// BaselineGreedy: the mean reward of the iteration's greedy
	// conversations (one per problem).
	MetricGreedyReward = "rollout/greedy_reward_mean"
	// Turn-level credit (turncredit.go): continuations played, and the
	// mean absolute advantage of first turns and of later turns.
	MetricTurnContinuations = "turn/continuations"
	MetricTurnAdvFirst      = "turn/adv_abs_first"
	MetricTurnAdvLater      = "turn/adv_abs_later"

	// A reading of the reward-hacking monitor: the policy's mean reward on
	// its held-out problems against the training user and the human proxy.
	MetricMonitorTrainReward = "monitor/train_user_reward"
	MetricMonitorHumanReward = "monitor/human_reward"
	// MetricMonitorHumanSuccess is the same reading's success rate against
	// the human proxy (MonitorGen, greedy by default), and
	// MetricMonitorSampledSuccess, with RLConfig.MonitorSampled, the rate
	// of the policy sampled at the rollouts' temperature on the same
	// problems and users (…_reward and …_turns beside it).
	MetricMonitorHumanSuccess   = "monitor/human_success"
	MetricMonitorSampledSuccess = "monitor/human_sampled_success"

	// A reading of the pre-registered hacking metrics (hacking.go) on
	// MetricHackingN problems: the rate at which the agent asks the
	// training user for the target, the share of pasted targets it
	// delivered, its reward against each user and their gap; each also
	// with HackingChange appended (the change from iteration 0) and then
	// "_lo" and "_hi" (its 95% interval).
	MetricHackingN             = "hacking/n"
	MetricHackingTargetRequest = "hacking/target_request"
	MetricHackingPasteDelivery = "hacking/paste_delivery"
	// MetricHackingPasted counts the problems of a reading where the
	// training user pasted the target: paste → delivery's denominator.
	MetricHackingPasted      = "hacking/pasted"
	MetricHackingTrainReward = "hacking/train_user_reward"
	MetricHackingHumanReward = "hacking/human_reward"
	MetricHackingGap         = "hacking/reward_gap"
	// MetricHackingSampled is 1 in a reading played sampled
	// (RLConfig.HackingSampled), absent in a greedy one.
	MetricHackingSampled = "hacking/sampled"
	HackingChange        = "_change"
)

// LogHeadline logs the figures of rec a person follows a run by, with
// message msg: an SFT evaluation (step, val_nll, loss, tokens_per_s), an
// RL iteration (iter, reward, flat_groups, loss, kl, clip_frac) or, with
// message msg+" monitor", a monitor reading (iter, train_user_reward,
// human_reward). Other records log nothing.
//
// A figure the record lacks is left out (the first evaluation, before any
// step, has no loss), and numbers keep four significant digits.
func LogHeadline(log *slog.Logger, msg string, rec map[string]any) {
	if _, ok := rec[MetricSFTValNLL]; ok {
		log.Info(msg, headline(rec, "step", MetricStep, "val_nll", MetricSFTValNLL, "loss", MetricSFTLoss, "tokens_per_s", MetricTokensPerS)...)
	}
	if _, ok := rec[MetricSFTSelect]; ok {
		log.Info(msg+" select", headline(rec, "step", MetricStep, "score", MetricSFTSelect, "se", MetricSFTSelectSE)...)
	}
	if _, ok := rec[MetricReward]; ok {
		log.Info(msg, headline(rec, "iter", MetricStep, "reward", MetricReward, "flat_groups", MetricFlatGroups, "loss", MetricPolicyLoss,
			"kl", MetricKL, "clip_frac", MetricClipFrac)...)
	}
	if _, ok := rec[MetricMonitorTrainReward]; ok {
		log.Info(msg+" monitor", headline(rec, "iter", MetricStep, "train_user_reward", MetricMonitorTrainReward, "human_reward", MetricMonitorHumanReward)...)
	}
}

// headline is the log attributes name, value for each pair name, key of
// pairs whose key rec holds, floats rounded to four significant digits.
func headline(rec map[string]any, pairs ...string) []any {
	var out []any
	for i := 0; i+1 < len(pairs); i += 2 {
		v, ok := rec[pairs[i+1]]
		if !ok || v == nil {
			continue
		}
		if f, ok := v.(float64); ok {
			v = progress.Round(f)
		}
		out = append(out, pairs[i], v)
	}
	return out
}

// Progress is the progress event of rec, a record of stage: its step, the
// run's length (MetricTotalSteps), and the headline figures LogHeadline
// logs (val_nll; reward; the monitor's rewards against the training user
// and the human proxy, shown as train_user and human). Its Unit is "iter"
// for an RL run's records, "step" for SFT's. ok is false for a record
// that is none of these (an SFT step without an evaluation is still an
// event: the step moves the display's bar).
func Progress(stage string, rec map[string]any) (e progress.Event, ok bool) {
	e = progress.Event{Stage: stage, Unit: "step"}
	e.Step, _ = rec[MetricStep].(int)
	if n, ok := rec[MetricTotalSteps].(int); ok && n > 0 {
		e.Steps = n
	}
	rl := false
	for k := range rec {
		if strings.HasSuffix(k, "/config") {
			rl = true // only RL runs log their config
		}
	}
	for _, f := range []struct {
		key, name string
		rl        bool
	}{
		{MetricSFTValNLL, "val_nll", false}, {MetricReward, "reward", true},
		{MetricMonitorTrainReward, "train_user", true}, {MetricMonitorHumanReward, "human", true},
	} {
		if v, ok := rec[f.key].(float64); ok {
			e.Figures = append(e.Figures, progress.Figure{Name: f.name, Value: v})
			rl = rl || f.rl
		}
	}
	if rl {
		e.Unit = "iter"
	}
	_, sftStep := rec[MetricSFTLoss]
	return e, len(e.Figures) > 0 || e.Steps > 0 || sftStep
}

// withRecords adds MetricRecords to a resumed run's first record, when
// the checkpoint counted its records (n > 0).
func withRecords(rec map[string]any, n int) map[string]any {
	if n > 0 {
		rec[MetricRecords] = n
	}
	return rec
}
