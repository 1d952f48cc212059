package metric

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Smoothing names a BLEU smoothing method (Chen & Cherry 2014).
type Smoothing string

const (
	// SmoothExp is NIST's geometric smoothing (mteval-v13a, Chen & Cherry
	// method 3): the k-th order with no match gets precision 1/(2^k·total).
	// sacreBLEU's default for both corpus and sentence BLEU.
	SmoothExp Smoothing = "exp"
	// SmoothFloor replaces a zero match count by SmoothValue (default 0.1).
	SmoothFloor Smoothing = "floor"
	// SmoothAddK adds SmoothValue (default 1) to the match and total counts
	// of every order above 1.
	SmoothAddK Smoothing = "add-k"
	// SmoothNone leaves zero precisions at zero, so the score is 0.
	SmoothNone Smoothing = "none"
)

// Tokenizer names how BLEU splits text into words.
type Tokenizer string

const (
	// Tokenizer13a is sacreBLEU's default; see [Tokenize13a].
	Tokenizer13a Tokenizer = "13a"
	// TokenizerNone splits on whitespace only (sacreBLEU's 'none').
	TokenizerNone Tokenizer = "none"
)

// Defaults of the smoothing values, from sacreBLEU's SMOOTH_DEFAULTS.
const (
	DefaultFloor = 0.1
	DefaultAddK  = 1.0
)

// BLEUConfig configures [BLEU]. The zero value is not valid; start from
// [DefaultBLEUConfig] or [DefaultSentenceBLEUConfig].
type BLEUConfig struct {
	// MaxOrder is the longest word n-gram counted. Default 4.
	MaxOrder int
	// Smooth is the smoothing method. Default SmoothExp.
	Smooth Smoothing
	// SmoothValue is the floor for SmoothFloor or k for SmoothAddK; 0 selects
	// sacreBLEU's default (DefaultFloor, DefaultAddK). A 0 floor or k would
	// equal SmoothNone, which is what to use for that. Ignored otherwise.
	SmoothValue float64
	// EffectiveOrder averages only over the orders for which the hypothesis
	// has n-grams, so a 3-word sentence is not scored 0 for lacking 4-grams.
	// Default false for corpus BLEU, true for sentence BLEU (as sacreBLEU's
	// sentence_bleu).
	EffectiveOrder bool
	// Lowercase lowercases both sides first (Go's Unicode simple case
	// mapping; Python's str.lower differs on a few code points such as
	// U+0130 and a word-final Σ). Default false.
	Lowercase bool
	// Tokenizer is Tokenizer13a (default) or TokenizerNone.
	Tokenizer Tokenizer
}

// DefaultBLEUConfig returns sacreBLEU's corpus BLEU defaults: 13a, 4-grams,
// 'exp' smoothing, no effective order, case-sensitive.
func DefaultBLEUConfig() BLEUConfig {
	return BLEUConfig{MaxOrder: 4, Smooth: SmoothExp, Tokenizer: Tokenizer13a}
}

// DefaultSentenceBLEUConfig returns sacreBLEU's sentence_bleu defaults: as
// DefaultBLEUConfig with EffectiveOrder set.
func DefaultSentenceBLEUConfig() BLEUConfig {
	c := DefaultBLEUConfig()
	c.EffectiveOrder = true
	return c
}

// Validate reports a configuration that cannot be scored.
func (c BLEUConfig) Validate() error {
	if c.MaxOrder < 1 || c.MaxOrder > 16 {
		return fmt.Errorf("metric: bleu max order %d outside [1,16]", c.MaxOrder)
	}
	switch c.Smooth {
	case SmoothExp, SmoothFloor, SmoothAddK, SmoothNone:
	default:
		return fmt.Errorf("metric: unknown bleu smoothing %q", c.Smooth)
	}
	if c.SmoothValue < 0 || math.IsNaN(c.SmoothValue) || math.IsInf(c.SmoothValue, 0) {
		return fmt.Errorf("metric: bleu smooth value %v must be finite and >= 0", c.SmoothValue)
	}
	switch c.Tokenizer {
	case Tokenizer13a, TokenizerNone:
	default:
		return fmt.Errorf("metric: unknown bleu tokenizer %q", c.Tokenizer)
	}
	return nil
}

// BLEUStats are BLEU's sufficient statistics; corpus BLEU adds them up over
// segments. Correct[n-1] and Total[n-1] count the clipped matching and all
// hypothesis n-grams of order n.
type BLEUStats struct {
	SysLen, RefLen int
	Correct, Total []int
}

// Add accumulates o into s, growing s's slices to o's order if needed.
func (s *BLEUStats) Add(o BLEUStats) {
	s.SysLen += o.SysLen
	s.RefLen += o.RefLen
	for len(s.Correct) < len(o.Correct) {
		s.Correct = append(s.Correct, 0)
	}
	for len(s.Total) < len(o.Total) {
		s.Total = append(s.Total, 0)
	}
	for i, v := range o.Correct {
		s.Correct[i] += v
	}
	for i, v := range o.Total {
		s.Total[i] += v
	}
}

// BLEUScore is a BLEU result, like sacreBLEU's BLEUScore.
type BLEUScore struct {
	// Score is BLEU on a 0–100 scale (clamped at 100: sacreBLEU's own
	// rounding gives 100.00000000000004 for a perfect match).
	Score float64
	// Precisions are the (smoothed) n-gram precisions, 0–100; orders past
	// the first with no hypothesis n-grams are 0, as in sacreBLEU.
	Precisions []float64
	// BP is the brevity penalty in [0,1].
	BP float64
	// SysLen and RefLen are the hypothesis and closest-reference lengths
	// in tokens; Counts and Totals the unsmoothed n-gram statistics.
	SysLen, RefLen int
	Counts, Totals []int
}

// BLEU scores hypotheses against references. It holds no mutable state,
// so one value may be shared by goroutines.
type BLEU struct {
	cfg BLEUConfig
}

// NewBLEU checks cfg and returns a scorer.
func NewBLEU(cfg BLEUConfig) (*BLEU, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &BLEU{cfg: cfg}, nil
}

// Config returns the configuration the scorer was built with.
func (b *BLEU) Config() BLEUConfig { return b.cfg }

// tokens returns the segment's words joined by single spaces, so that any
// n-gram is a substring of the result (map keys then need no allocation).
func (b *BLEU) tokens(s string) (joined string, starts, ends []int) {
	if b.cfg.Lowercase {
		s = strings.ToLower(s)
	}
	if b.cfg.Tokenizer == Tokenizer13a {
		joined = Tokenize13a(pyRStrip(s))
	} else {
		joined = strings.Join(pyFields(s), " ")
	}
	for i := 0; i < len(joined); {
		j := strings.IndexByte(joined[i:], ' ')
		if j < 0 {
			j = len(joined) - i
		}
		starts = append(starts, i)
		ends = append(ends, i+j)
		i += j + 1
	}
	return joined, starts, ends
}

// addNgrams counts every n-gram of order 1..maxOrder into m; keys hold n−1
// spaces, so orders never collide.
func addNgrams(m map[string]int, joined string, starts, ends []int, maxOrder int) {
	for n := 1; n <= maxOrder; n++ {
		for i := 0; i+n <= len(starts); i++ {
			m[joined[starts[i]:ends[i+n-1]]]++
		}
	}
}

// Stats computes one segment's statistics. With several references the
// n-gram counts are clipped by the maximum count over references and the
// reference length is the closest to the hypothesis length (the shorter on
// ties). No reference at all counts as one empty reference.
func (b *BLEU) Stats(hyp string, refs ...string) BLEUStats {
	if len(refs) == 0 {
		refs = []string{""}
	}
	order := b.cfg.MaxOrder
	hj, hs, he := b.tokens(hyp)
	st := BLEUStats{SysLen: len(hs), Correct: make([]int, order), Total: make([]int, order)}

	// refMax[g] is the most times any reference holds n-gram g.
	var refMax map[string]int
	closest, closestDiff := -1, -1
	for k, ref := range refs {
		rj, rs, re := b.tokens(ref)
		refLen := len(rs)
		diff := refLen - st.SysLen
		if diff < 0 {
			diff = -diff
		}
		if closestDiff == -1 || diff < closestDiff || (diff == closestDiff && refLen < closest) {
			closest, closestDiff = refLen, diff
		}
		if k == 0 {
			refMax = make(map[string]int, len(rs)*order)
			addNgrams(refMax, rj, rs, re, order)
			continue
		}
		counts := make(map[string]int, len(rs)*order)
		addNgrams(counts, rj, rs, re, order)
		for g, c := range counts {
			if c > refMax[g] {
				refMax[g] = c
			}
		}
	}
	st.RefLen = closest

	// Each hypothesis n-gram occurrence consumes one unit of its reference
	// budget, which sums to min(hypothesis count, refMax) per n-gram: the
	// clipped count, without building the hypothesis's own counter.
	for n := 1; n <= order; n++ {
		if t := st.SysLen - n + 1; t > 0 {
			st.Total[n-1] = t
		}
		for i := 0; i+n <= len(hs); i++ {
			g := hj[hs[i]:he[i+n-1]]
			if refMax[g] > 0 {
				refMax[g]--
				st.Correct[n-1]++
			}
		}
	}
	return st
}

// logZero is sacreBLEU's my_log(0): a huge negative stand-in for log 0 that
// drives exp() to exactly 0 without producing NaN or -Inf arithmetic.
const logZero = -9999999999.0

func myLog(x float64) float64 {
	if x == 0 {
		return logZero
	}
	return math.Log(x)
}

// Score turns statistics into a score, step for step as sacreBLEU's
// BLEU.compute_bleu.
func (b *BLEU) Score(st BLEUStats) BLEUScore {
	order := b.cfg.MaxOrder
	out := BLEUScore{
		Precisions: make([]float64, order),
		SysLen:     st.SysLen,
		RefLen:     st.RefLen,
		Counts:     make([]int, order),
		Totals:     make([]int, order),
	}
	copy(out.Counts, st.Correct)
	copy(out.Totals, st.Total)

	out.BP = 1
	if st.SysLen < st.RefLen {
		out.BP = 0
		if st.SysLen > 0 {
			out.BP = math.Exp(1 - float64(st.RefLen)/float64(st.SysLen))
		}
	}

	anyCorrect := false
	for _, c := range out.Counts {
		if c != 0 {
			anyCorrect = true
		}
	}
	if !anyCorrect {
		return out // sacreBLEU #141: no match at all scores 0
	}

	smoothValue := b.cfg.SmoothValue
	if smoothValue == 0 {
		switch b.cfg.Smooth {
		case SmoothFloor:
			smoothValue = DefaultFloor
		case SmoothAddK:
			smoothValue = DefaultAddK
		}
	}
	smoothMteval := 1.0
	effOrder := order
	for n := 1; n <= order; n++ {
		correct, total := float64(out.Counts[n-1]), float64(out.Totals[n-1])
		if b.cfg.Smooth == SmoothAddK && n > 1 {
			correct += smoothValue
			total += smoothValue
		}
		if total == 0 {
			break
		}
		if b.cfg.EffectiveOrder {
			effOrder = n
		}
		switch {
		case correct != 0:
			out.Precisions[n-1] = 100 * correct / total
		case b.cfg.Smooth == SmoothExp:
			smoothMteval *= 2
			out.Precisions[n-1] = 100 / (smoothMteval * total)
		case b.cfg.Smooth == SmoothFloor:
			out.Precisions[n-1] = 100 * smoothValue / total
		}
	}
	sum := 0.0
	for _, p := range out.Precisions[:effOrder] {
		sum += myLog(p)
	}
	// exp(log 100) rounds to 100.00000000000004, which sacreBLEU reports
	// for a perfect match; clamp so that a score is never above 100.
	out.Score = min(out.BP*math.Exp(sum/float64(effOrder)), 100)
	return out
}

// Sentence scores one hypothesis against its references.
func (b *BLEU) Sentence(hyp string, refs ...string) BLEUScore {
	return b.Score(b.Stats(hyp, refs...))
}

// ErrLengthMismatch reports a corpus whose hypotheses and references do not
// pair up.
var ErrLengthMismatch = errors.New("metric: hypotheses and references differ in number")

// Corpus scores a corpus: refs[i] holds the references of hyps[i] (any
// number, possibly different per segment). Statistics are summed over
// segments before scoring, so this is not the mean of sentence scores.
func (b *BLEU) Corpus(hyps []string, refs [][]string) (BLEUScore, error) {
	if len(hyps) != len(refs) {
		return BLEUScore{}, fmt.Errorf("bleu corpus: %d hypotheses, %d reference sets: %w", len(hyps), len(refs), ErrLengthMismatch)
	}
	total := BLEUStats{Correct: make([]int, b.cfg.MaxOrder), Total: make([]int, b.cfg.MaxOrder)}
	for i, h := range hyps {
		total.Add(b.Stats(h, refs[i]...))
	}
	return b.Score(total), nil
}

// SentenceBLEU is sacreBLEU's sentence_bleu(hyp, [ref]).score: 13a, exp
// smoothing, effective order, 0–100.
func SentenceBLEU(hyp, ref string) float64 {
	b := &BLEU{cfg: DefaultSentenceBLEUConfig()} // valid by construction
	return b.Sentence(hyp, ref).Score
}

// CorpusBLEU is sacreBLEU's corpus_bleu(hyps, [refs]).score with one
// reference per segment, 0–100.
func CorpusBLEU(hyps, refs []string) (float64, error) {
	b := &BLEU{cfg: DefaultBLEUConfig()} // valid by construction
	rs := make([][]string, len(refs))
	for i, r := range refs {
		rs[i] = []string{r}
	}
	s, err := b.Corpus(hyps, rs)
	return s.Score, err
}
