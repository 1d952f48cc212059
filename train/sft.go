package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/checkpoint"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
)

// SFTConfig sets supervised fine-tuning: next-token NLL on one side's
// tokens (the agent's for the base policy, the user's for the calibrated
// simulator).
type SFTConfig struct {
	// Steps is the most optimizer steps to take. Default 300.
	Steps int
	// BatchSize is sequences per step. Default 16.
	BatchSize int
	// LR is the peak learning rate, reached after Warmup steps and decayed
	// by cosine to LR/10 at Steps. Defaults 1e-3 and 20.
	LR     float64
	Warmup int
	// WeightDecay for AdamW's 2-D tensors. Default 0.1.
	WeightDecay float64
	// ClipNorm bounds the global gradient norm. Default 1.
	ClipNorm float64
	// ValFraction of the sequences is held out for validation NLL. Default 0.1.
	ValFraction float64
	// EvalEvery steps the validation NLL is measured. Default 25.
	EvalEvery int
	// Patience: stop after this many evaluations without a new best
	// validation NLL (0 never stops early). Default 4.
	Patience int
	// CheckpointEvery steps a resumable checkpoint is written. Default 50.
	CheckpointEvery int
	// Seed orders the batches and splits validation.
	Seed uint64
}

// DefaultSFTConfig returns the documented defaults.
func DefaultSFTConfig() SFTConfig {
	return SFTConfig{Steps: 300, BatchSize: 16, LR: 1e-3, Warmup: 20, WeightDecay: 0.1, ClipNorm: 1,
		ValFraction: 0.1, EvalEvery: 25, Patience: 4, CheckpointEvery: 50}
}

// Validate reports the first unusable field.
func (c SFTConfig) Validate() error {
	switch {
	case c.Steps <= 0:
		return fmt.Errorf("sft: steps %d, want > 0", c.Steps)
	case c.BatchSize <= 0:
		return fmt.Errorf("sft: batch size %d, want > 0", c.BatchSize)
	case !(c.LR > 0):
		return fmt.Errorf("sft: lr %v, want > 0", c.LR)
	case c.ValFraction < 0 || c.ValFraction >= 1:
		return fmt.Errorf("sft: validation fraction %v, want in [0,1)", c.ValFraction)
	case c.EvalEvery <= 0 || c.CheckpointEvery <= 0:
		return errors.New("sft: eval and checkpoint intervals must be positive")
	}
	return nil
}

// SFTResult reports a finished run.
type SFTResult struct {
	Steps      int     `json:"steps"`
	TrainNLL   float64 `json:"train_nll"`  // mean over the last EvalEvery steps
	FirstNLL   float64 `json:"first_nll"`  // the first step's batch NLL
	ValNLL     float64 `json:"val_nll"`    // the best validation NLL
	FirstVal   float64 `json:"first_val"`  // validation NLL before training
	BestStep   int     `json:"best_step"`  // step of the kept weights (the best validation NLL, or the selector's choice)
	EarlyStop  bool    `json:"early_stop"` // stopped by patience
	TrainSeqs  int     `json:"train_seqs"` // sequences trained on
	ValSeqs    int     `json:"val_seqs"`   // sequences held out
	TokensPerS float64 `json:"tokens_per_s"`
	// Selected and SelectedSE are the selector's score of the kept
	// weights and its standard error (SFTSelect), absent without one;
	// ValNLL is then the kept weights' validation NLL, not the lowest.
	Selected   *float64 `json:"selected,omitempty"`
	SelectedSE *float64 `json:"selected_se,omitempty"`
}

// sftState is what a resumable checkpoint adds to the model, the
// optimizer and the best weights so far.
type sftState struct {
	Step      int     `json:"step"`
	BestVal   float64 `json:"best_val"`
	BestStep  int     `json:"best_step"`
	FirstVal  float64 `json:"first_val"`
	FirstNLL  float64 `json:"first_nll"`
	BadEvals  int     `json:"bad_evals"`
	Seed      uint64  `json:"seed"`
	TrainSeqs int     `json:"train_seqs"`
	// Settings are the run's; a resume under others is refused.
	Settings sftSettings `json:"settings"`
	// Recent holds the last EvalEvery batch NLLs, Tokens and TrainSeconds
	// the totals so far, so a resumed (or finished and re-run) run reports
	// the figures of the whole run.
	Recent       []float64 `json:"recent_nll"`
	Tokens       int       `json:"tokens"`
	TrainSeconds float64   `json:"train_seconds"`
	// Records counts the records the run has logged (MetricRecords).
	Records int `json:"records,omitempty"`
	// With a selector (SFTSelect): MinVal is the lowest validation NLL
	// so far, which patience follows, and BestScore, BestSE the kept
	// weights' score; BestVal is then the kept weights' NLL.
	MinVal    float64 `json:"min_val,omitempty"`
	BestScore float64 `json:"best_score,omitempty"`
	BestSE    float64 `json:"best_se,omitempty"`
}

// sftSettings are the SFTConfig fields that shape the weights: a run
// resumed under other values would not end where an uninterrupted one
// does. (CheckpointEvery does not; Seed is checked on its own.)
type sftSettings struct {
	Steps       int     `json:"steps"`
	BatchSize   int     `json:"batch_size"`
	LR          float64 `json:"lr"`
	Warmup      int     `json:"warmup"`
	WeightDecay float64 `json:"weight_decay"`
	ClipNorm    float64 `json:"clip_norm"`
	ValFraction float64 `json:"val_fraction"`
	EvalEvery   int     `json:"eval_every"`
	Patience    int     `json:"patience"`
	// Select names the selector of SFTSelect ("" without one).
	Select string `json:"select,omitempty"`
}

func (c SFTConfig) settings() sftSettings {
	return sftSettings{Steps: c.Steps, BatchSize: c.BatchSize, LR: c.LR, Warmup: c.Warmup, WeightDecay: c.WeightDecay,
		ClipNorm: c.ClipNorm, ValFraction: c.ValFraction, EvalEvery: c.EvalEvery, Patience: c.Patience}
}

// sftBest names the best weights so far inside out/last.
const sftBest = "best"

// SFT trains m on seqs and writes the best model (by validation NLL, the
// starting weights included) to out. Resumable checkpoints go to
// out/last: the model, the optimizer, the best weights so far and the
// trainer state, swapped in as one folder, so a run killed at any moment
// — even during a save — and started again on the same out resumes from
// one consistent checkpoint and ends with the same weights as an
// uninterrupted run. A resume with other settings
// (SFTConfig but CheckpointEvery) is refused. When ctx is cancelled it
// writes a checkpoint and returns ctx's error; when a loss or gradient
// turns non-finite it stops with lm.ErrNonFinite, the last checkpoint
// intact. log, when set, receives namespaced metrics.
func SFT(ctx context.Context, m *chatlm.Model, seqs []chatlm.Sequence, cfg SFTConfig, out string, log func(map[string]any)) (SFTResult, error) {
	return SFTSelect(ctx, m, seqs, cfg, out, log, nil)
}

// A Selector scores the model being fitted at an evaluation, lower
// better, with the score's standard error: what SFTSelect keeps the
// weights of. Name is recorded in the resumable state, so that a run is
// not resumed under another selector.
type Selector struct {
	Name  string
	Score func(ctx context.Context, m *chatlm.Model) (score, se float64, err error)
}

// better reports whether a candidate (score, se, nll) beats the kept
// weights (bestScore, bestSE, bestNLL): the score decides when the two
// differ by more than the larger standard error; within it, where the
// selector cannot tell them apart, the lower validation NLL does.
func better(score, se, nll, bestScore, bestSE, bestNLL float64) bool {
	tol := max(se, bestSE)
	if math.Abs(score-bestScore) > tol {
		return score < bestScore
	}
	return nll < bestNLL
}

// SFTSelect is SFT keeping, instead of the weights of the lowest
// validation NLL, the weights sel prefers (better) among the evaluations
// (every EvalEvery steps, the starting weights included). Early stopping
// still follows the validation NLL (Patience evaluations without a new
// lowest), so the steps taken are SFT's. A nil sel is SFT. Without
// validation sequences there is nothing to score against, and sel is
// not used.
func SFTSelect(ctx context.Context, m *chatlm.Model, seqs []chatlm.Sequence, cfg SFTConfig, out string, log func(map[string]any), sel *Selector) (SFTResult, error) {
	if err := cfg.Validate(); err != nil {
		return SFTResult{}, err
	}
	settings := cfg.settings()
	if sel != nil {
		settings.Select = sel.Name
	}
	if log == nil {
		log = func(map[string]any) {}
	}
	var st sftState
	// Every record is counted in the state a checkpoint saves
	// (MetricRecords).
	logTo := log
	log = func(rec map[string]any) {
		st.Records++
		logTo(rec)
	}
	train, val := splitSequences(seqs, cfg.ValFraction, cfg.Seed)
	if len(train) == 0 {
		return SFTResult{}, errors.New("sft: no training sequences")
	}
	ac := lm.DefaultAdamW()
	ac.LR, ac.WeightDecay = cfg.LR, cfg.WeightDecay
	opt, err := lm.NewAdamW(m.LM.Config, ac)
	if err != nil {
		return SFTResult{}, err
	}
	sched := lm.LRSchedule{Peak: cfg.LR, Min: cfg.LR / 10, Warmup: cfg.Warmup, Total: cfg.Steps}
	st = sftState{BestVal: math.MaxFloat64, Seed: cfg.Seed, TrainSeqs: len(train), Settings: settings}
	if len(val) == 0 {
		sel = nil
	}
	// score measures the current weights with sel.
	score := func(rec map[string]any) (float64, float64, error) {
		sc, se, err := sel.Score(ctx, m)
		if err != nil {
			return 0, 0, fmt.Errorf("sft: select %s: %w", sel.Name, err)
		}
		rec[MetricSFTSelect], rec[MetricSFTSelectSE] = sc, se
		return sc, se, nil
	}
	best := append([]float32(nil), m.LM.Params.Data...)
	lastDir := filepath.Join(out, "last")
	if err := cleanOut(out); err != nil {
		return SFTResult{}, err
	}

	resultPath := filepath.Join(out, sftResultFile)
	resumed, err := resumeSFT(lastDir, m, &opt, &st, best)
	if err != nil {
		return SFTResult{}, err
	}
	if resumed {
		if st.Seed != cfg.Seed || st.TrainSeqs != len(train) {
			return SFTResult{}, fmt.Errorf("sft: %s was trained with seed %d on %d sequences, now seed %d on %d: use a fresh --out", lastDir, st.Seed, st.TrainSeqs, cfg.Seed, len(train))
		}
		if d := settingsDiff(st.Settings, settings); len(d) > 0 {
			return SFTResult{}, fmt.Errorf("sft: %s was trained with other settings (%s): resume with the same ones or use a fresh --out", lastDir, strings.Join(d, ", "))
		}
		if st.finished(cfg, len(val) > 0) {
			// A finished run started again is a no-op: it reports what it
			// wrote, and trains no further (a run stopped early would
			// otherwise go on to its next evaluation).
			if res, err := readSFTResult(resultPath); err == nil && res.Steps == st.Step {
				copy(m.LM.Params.Data, best)
				log(withRecords(map[string]any{"event": "finished", MetricStep: st.Step}, st.Records))
				return res, nil
			}
			// Killed after its last checkpoint but before the result:
			// write the final model and result below, training nothing.
		}
		log(withRecords(map[string]any{"event": "resume", MetricStep: st.Step, MetricTotalSteps: cfg.Steps}, st.Records))
	} else {
		// Once a run: a resumed one kept its first run's start record.
		log(map[string]any{"event": "start", MetricStep: st.Step, MetricTotalSteps: cfg.Steps})
	}
	if !resumed && len(val) > 0 {
		st.FirstVal = meanNLL(m, val, cfg.BatchSize)
		// The starting weights compete for best too (best holds them, step
		// 0): a warm-started fit (a simulator's re-fit) that only gets
		// worse on held-out data returns what it started from.
		st.BestVal = st.FirstVal
		rec := map[string]any{MetricStep: 0, MetricSFTValNLL: st.FirstVal}
		if sel != nil {
			st.MinVal = st.FirstVal
			if st.BestScore, st.BestSE, err = score(rec); err != nil {
				return SFTResult{}, err
			}
		}
		log(rec)
	}

	started, secondsBefore := time.Now(), st.TrainSeconds
	finishedBefore := st.finished(cfg, len(val) > 0)
	elapsed := func() float64 {
		if finishedBefore {
			return secondsBefore // no training here: the run's own time
		}
		return secondsBefore + time.Since(started).Seconds()
	}
	save := func() error {
		st.TrainSeconds = elapsed()
		if err := saveResumable(lastDir, m, opt, st, map[string][]float32{sftBest: best}); err != nil {
			return fmt.Errorf("sft: checkpoint: %w", err)
		}
		return nil
	}

	batches := &batcher{seqs: train, size: cfg.BatchSize, seed: cfg.Seed}
	res := SFTResult{TrainSeqs: len(train), ValSeqs: len(val)}
	for !finishedBefore && st.Step < cfg.Steps {
		if err := ctx.Err(); err != nil {
			if serr := save(); serr != nil {
				return res, errors.Join(err, serr)
			}
			return res, err
		}
		tok, B, T, lens, mask := m.Pack(batches.batch(st.Step))
		stats, err := lm.SFTStep(m.LM, opt, lm.TrainConfig{LR: sched.At(st.Step), ClipNorm: cfg.ClipNorm}, tok, B, T, lens, mask)
		if err != nil {
			return res, fmt.Errorf("sft step %d: %w", st.Step, err)
		}
		if st.Step == 0 {
			st.FirstNLL = stats.NLL
		}
		for _, n := range lens {
			st.Tokens += n
		}
		st.Recent = append(st.Recent, stats.NLL)
		if len(st.Recent) > cfg.EvalEvery {
			st.Recent = st.Recent[1:]
		}
		st.Step++
		rec := map[string]any{MetricStep: st.Step, MetricSFTLoss: stats.NLL, "sft/grad_norm": stats.GradNorm, "sft/lr": sched.At(st.Step - 1)}
		stop := false
		if st.Step%cfg.EvalEvery == 0 || st.Step == cfg.Steps {
			rec[MetricTokensPerS] = float64(st.Tokens) / elapsed()
			if len(val) > 0 {
				v := meanNLL(m, val, cfg.BatchSize)
				rec[MetricSFTValNLL] = v
				switch {
				case sel != nil:
					sc, se, err := score(rec)
					if err != nil {
						return res, err
					}
					if better(sc, se, v, st.BestScore, st.BestSE, st.BestVal) {
						st.BestScore, st.BestSE, st.BestVal, st.BestStep = sc, se, v, st.Step
						copy(best, m.LM.Params.Data)
					}
					if v < st.MinVal {
						st.MinVal, st.BadEvals = v, 0
					} else {
						st.BadEvals++
						stop = cfg.Patience > 0 && st.BadEvals >= cfg.Patience
					}
				case v < st.BestVal:
					st.BestVal, st.BestStep, st.BadEvals = v, st.Step, 0
					copy(best, m.LM.Params.Data)
				default:
					st.BadEvals++
					stop = cfg.Patience > 0 && st.BadEvals >= cfg.Patience
				}
			} else {
				copy(best, m.LM.Params.Data)
				st.BestStep = st.Step
			}
		}
		log(rec)
		if st.Step%cfg.CheckpointEvery == 0 || st.Step == cfg.Steps || stop {
			if err := save(); err != nil {
				return res, err
			}
		}
		if stop {
			break
		}
	}
	res.Steps, res.EarlyStop = st.Step, st.finished(cfg, len(val) > 0) && st.Step < cfg.Steps
	res.FirstNLL, res.FirstVal, res.BestStep = st.FirstNLL, st.FirstVal, st.BestStep
	res.ValNLL = st.BestVal
	if len(val) == 0 {
		res.ValNLL = 0 // nothing held out; ValSeqs says so
	}
	if sel != nil {
		sc, se := st.BestScore, st.BestSE
		res.Selected, res.SelectedSE = &sc, &se
	}
	for _, v := range st.Recent {
		res.TrainNLL += v / float64(len(st.Recent))
	}
	if el := elapsed(); el > 0 {
		res.TokensPerS = float64(st.Tokens) / el
	}
	copy(m.LM.Params.Data, best)
	if err := m.Save(out, nil); err != nil {
		return res, err
	}
	return res, atomicfile.WriteBytes(resultPath, mustJSON(res))
}

// sftResultFile is the result of a finished fit, written last, beside the
// final model.
const sftResultFile = checkpoint.SFTResultFile

// finished reports whether the run that saved st is over: it took every
// step, or it stopped early, which is the only way its checkpoint can
// hold Patience evaluations without improvement (withVal: there is a
// held-out set to evaluate).
func (st sftState) finished(cfg SFTConfig, withVal bool) bool {
	return st.Step >= cfg.Steps || (withVal && cfg.Patience > 0 && st.BadEvals >= cfg.Patience)
}

func readSFTResult(path string) (SFTResult, error) {
	var res SFTResult
	data, err := os.ReadFile(path)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

// maxVal bounds the held-out set: past a few hundred sequences the
// validation NLL is precise enough and more only slows training.
const maxVal = 256

// splitSequences holds out a seeded fraction (at most maxVal sequences)
// for validation.
func splitSequences(seqs []chatlm.Sequence, frac float64, seed uint64) (train, val []chatlm.Sequence) {
	perm := rand.New(rand.NewPCG(seed, streamSFTSplit)).Perm(len(seqs))
	nVal := min(int(frac*float64(len(seqs))), maxVal)
	if frac > 0 && nVal == 0 && len(seqs) >= 4 {
		nVal = 1
	}
	for i, p := range perm {
		if i < nVal {
			val = append(val, seqs[p])
		} else {
			train = append(train, seqs[p])
		}
	}
	return train, val
}

// batcher rebuilds any step's batch: each epoch visits the sequences in a
// permutation seeded by (seed, epoch), so a resumed run sees the batches an
// uninterrupted one would. Within windows of bucket batches the sequences
// are sorted by length before being cut into batches (and the batches
// shuffled back), so a batch pads to a length close to its members'.
type batcher struct {
	seqs  []chatlm.Sequence
	size  int
	seed  uint64
	epoch int
	order []int // the epoch's visiting order
}

// bucket is how many batches share one length-sorted window.
const bucket = 8

func (b *batcher) batch(step int) []chatlm.Sequence {
	n := len(b.seqs)
	out := make([]chatlm.Sequence, b.size)
	for i := range b.size {
		k := step*b.size + i
		if epoch := k / n; b.order == nil || epoch != b.epoch {
			b.epoch = epoch
			b.order = b.epochOrder(epoch)
		}
		out[i] = b.seqs[b.order[k%n]]
	}
	return out
}

func (b *batcher) epochOrder(epoch int) []int {
	rng := rand.New(rand.NewPCG(b.seed, uint64(epoch)+1))
	perm := rng.Perm(len(b.seqs))
	window := b.size * bucket
	for lo := 0; lo < len(perm); lo += window {
		w := perm[lo:min(lo+window, len(perm))]
		sort.SliceStable(w, func(i, j int) bool { return len(b.seqs[w[i]].IDs) < len(b.seqs[w[j]].IDs) })
		// Shuffle whole batches of the window so short and long ones mix
		// over the epoch.
		nb := (len(w) + b.size - 1) / b.size
		batches := make([][]int, nb)
		for j := range batches {
			batches[j] = append([]int(nil), w[j*b.size:min((j+1)*b.size, len(w))]...)
		}
		rng.Shuffle(nb, func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })
		w = w[:0]
		for _, bt := range batches {
			w = append(w, bt...)
		}
	}
	return perm
}

// meanNLL is the masked mean NLL of seqs, token-weighted.
func meanNLL(m *chatlm.Model, seqs []chatlm.Sequence, batch int) float64 {
	var total, count float64
	for i := 0; i < len(seqs); i += batch {
		tok, B, T, lens, mask := m.Pack(seqs[i:min(i+batch, len(seqs))])
		logp, err := m.LM.ForwardMaskedAt(tok, B, T, lens, 1, mask) // the head on the marked rows only
		if err != nil {
			return math.NaN()
		}
		for j, w := range mask {
			total -= float64(w) * float64(logp[j])
			count += float64(w)
		}
	}
	if count == 0 {
		return math.NaN()
	}
	return total / count
}

// MeanNLL is the masked mean NLL of seqs under m (per trained token).
func MeanNLL(m *chatlm.Model, seqs []chatlm.Sequence) float64 { return meanNLL(m, seqs, 16) }

// UserNLL is the per-token NLL of eps' user turns under the model
// simulator u, each episode rendered as u sees it (its oracle context and
// judge): how well it predicts what the users said. An episode too long
// for u's context is cut to it (as in training); one u cannot render (a
// message of no known role) is left out; NaN when none is left.
func UserNLL(u *chatlm.User, eps []dialog.Episode) float64 {
	seqs := make([]chatlm.Sequence, 0, len(eps))
	for i := range eps {
		if s, err := u.Model.UserSequence(&eps[i], u.Oracle, u.Judge); err == nil {
			seqs = append(seqs, s)
		}
	}
	return MeanNLL(u.Model, seqs)
}

// resumeSFT loads out/last, when a previous run left one, into m, opt,
// st and best.
func resumeSFT(lastDir string, m *chatlm.Model, opt **lm.AdamW, st *sftState, best []float32) (bool, error) {
	var saved sftState
	r, ok, err := loadResumable(lastDir, m, &saved)
	if err != nil || !ok {
		return false, err
	}
	b, ok := r.weights[sftBest]
	if !ok {
		return false, fmt.Errorf("resume %s: no %s weights", lastDir, sftBest)
	}
	*st = saved
	copy(m.LM.Params.Data, r.model.LM.Params.Data)
	copy(best, b)
	r.opt.Config = (*opt).Config
	*opt = r.opt
	return true, nil
}

func mustJSON(v any) []byte {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // only plain structs of numbers reach here
	}
	return append(data, '\n')
}
