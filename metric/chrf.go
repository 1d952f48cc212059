package metric

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// ChrFConfig configures [ChrF]. Start from [DefaultChrFConfig] (chrF2) or
// [DefaultChrFPlusPlusConfig] (chrF2++).
type ChrFConfig struct {
	// CharOrder is the longest character n-gram. Default 6.
	CharOrder int
	// WordOrder is the longest word n-gram; 0 is chrF, 2 is chrF++.
	// Default 0.
	WordOrder int
	// Beta weighs recall β times as much as precision. Default 2.
	Beta float64
	// Lowercase lowercases both sides first (Go's simple case mapping, see
	// BLEUConfig.Lowercase). Default false.
	Lowercase bool
	// Whitespace keeps whitespace inside character n-grams; by default
	// (false) all whitespace is removed first, as sacreBLEU does.
	Whitespace bool
	// EpsSmoothing averages the per-order F-scores, an order with no match
	// contributing ε = 1e-16 (chrF++.py, Moses and NLTK do this). The
	// default (false) is sacreBLEU 2.x's: average precision and recall over
	// the orders where both sides have n-grams, then take one F-score.
	// With EpsSmoothing an empty side scores 1e-14 rather than 0, as in
	// sacreBLEU.
	EpsSmoothing bool
}

// DefaultChrFConfig returns sacreBLEU's CHRF() defaults: chrF2, character
// 6-grams, no word n-grams, whitespace removed, effective-order averaging.
func DefaultChrFConfig() ChrFConfig {
	return ChrFConfig{CharOrder: 6, Beta: 2}
}

// DefaultChrFPlusPlusConfig returns sacreBLEU's CHRF(word_order=2): chrF2++.
func DefaultChrFPlusPlusConfig() ChrFConfig {
	c := DefaultChrFConfig()
	c.WordOrder = 2
	return c
}

// Validate reports a configuration that cannot be scored.
func (c ChrFConfig) Validate() error {
	if c.CharOrder < 0 || c.WordOrder < 0 || c.CharOrder+c.WordOrder == 0 {
		return fmt.Errorf("metric: chrf orders char=%d word=%d: need >= 0 and at least one > 0", c.CharOrder, c.WordOrder)
	}
	if c.CharOrder > 32 || c.WordOrder > 16 {
		return fmt.Errorf("metric: chrf orders char=%d word=%d too large (max 32, 16)", c.CharOrder, c.WordOrder)
	}
	if !(c.Beta > 0) || math.IsInf(c.Beta, 0) {
		return fmt.Errorf("metric: chrf beta %v must be finite and > 0", c.Beta)
	}
	return nil
}

// ChrFStats are chrF's sufficient statistics: for each order (character
// orders first, then word orders) the hypothesis, reference and matching
// n-gram counts. Hyp is reported as 0 when the reference has no n-gram of
// that order, as sacreBLEU does.
type ChrFStats struct {
	Hyp, Ref, Match []int
}

// Add accumulates o into s.
func (s *ChrFStats) Add(o ChrFStats) {
	for len(s.Hyp) < len(o.Hyp) {
		s.Hyp, s.Ref, s.Match = append(s.Hyp, 0), append(s.Ref, 0), append(s.Match, 0)
	}
	for i := range o.Hyp {
		s.Hyp[i] += o.Hyp[i]
		s.Ref[i] += o.Ref[i]
		s.Match[i] += o.Match[i]
	}
}

// ChrFScore is a chrF result.
type ChrFScore struct {
	// Score is chrF on a 0–100 scale.
	Score float64
	Stats ChrFStats
}

// ChrF scores hypotheses against references; safe for concurrent use.
type ChrF struct {
	cfg ChrFConfig
}

// NewChrF checks cfg and returns a scorer.
func NewChrF(cfg ChrFConfig) (*ChrF, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &ChrF{cfg: cfg}, nil
}

// Config returns the configuration the scorer was built with.
func (c *ChrF) Config() ChrFConfig { return c.cfg }

// segment is one text prepared for counting: its characters (whitespace
// removed unless configured otherwise) with the byte offset of every code
// point, and its chrF++ words joined by single spaces with their spans, so
// that every n-gram is a substring and needs no allocation.
type segment struct {
	chars                string
	offs                 []int // len = code points + 1
	words                string
	wordStarts, wordEnds []int
}

func (c *ChrF) prepare(s string) segment {
	if c.cfg.Lowercase {
		s = strings.ToLower(s)
	}
	var g segment
	g.chars = s
	if !c.cfg.Whitespace {
		g.chars = strings.Join(pyFields(s), "")
	}
	g.offs = make([]int, 0, len(g.chars)+1)
	for i := range g.chars {
		g.offs = append(g.offs, i)
	}
	g.offs = append(g.offs, len(g.chars))
	if c.cfg.WordOrder > 0 {
		// Words hold no whitespace, so the join is unambiguous.
		g.words = strings.Join(chrfWords(s), " ")
		for i := 0; i < len(g.words); {
			j := strings.IndexByte(g.words[i:], ' ')
			if j < 0 {
				j = len(g.words) - i
			}
			g.wordStarts = append(g.wordStarts, i)
			g.wordEnds = append(g.wordEnds, i+j)
			i += j + 1
		}
	}
	return g
}

// chrfWords is sacreBLEU's chrF++ word splitter (_remove_punctuation, after
// Popović's chrF++.py): split on whitespace; a word of two or more code
// points loses one ASCII punctuation mark from its end, or else from its
// start, which becomes a word of its own. Only one mark is split off, so
// "(hi)" gives "(hi" and ")" — a known quirk kept for compatibility.
func chrfWords(s string) []string {
	var out []string
	for _, w := range pyFields(s) {
		if utf8.RuneCountInString(w) == 1 {
			out = append(out, w)
			continue
		}
		last, size := utf8.DecodeLastRuneInString(w)
		first, fsize := utf8.DecodeRuneInString(w)
		switch {
		case isASCIIPunct(last):
			out = append(out, w[:len(w)-size], w[len(w)-size:])
		case isASCIIPunct(first):
			out = append(out, w[:fsize], w[fsize:])
		default:
			out = append(out, w)
		}
	}
	return out
}

// isASCIIPunct is membership in Python's string.punctuation.
func isASCIIPunct(r rune) bool {
	return r < 0x80 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r)
}

// matchStats compares one hypothesis with one reference. Each hypothesis
// n-gram occurrence consumes one unit of the reference's count of it, which
// sums to min(hypothesis count, reference count) per n-gram — sacreBLEU's
// match count — without building the hypothesis's counters. Character
// n-grams of different orders share one map (their strings differ in
// length), as do word n-grams (they differ in spaces).
func (c *ChrF) matchStats(h, r segment) ChrFStats {
	co, wo := c.cfg.CharOrder, c.cfg.WordOrder
	st := ChrFStats{Hyp: make([]int, co+wo), Ref: make([]int, co+wo), Match: make([]int, co+wo)}
	set := func(i, nHyp, nRef, match int) {
		if nRef > 0 {
			st.Hyp[i] = max(nHyp, 0) // sacreBLEU: no reference n-grams, no hypothesis count
		}
		st.Ref[i], st.Match[i] = max(nRef, 0), match
	}

	hn, rn := len(h.offs)-1, len(r.offs)-1
	budget := make(map[string]int, rn*co)
	for n := 1; n <= co; n++ {
		for i := 0; i+n <= rn; i++ {
			budget[r.chars[r.offs[i]:r.offs[i+n]]]++
		}
	}
	for n := 1; n <= co; n++ {
		match := 0
		for i := 0; i+n <= hn; i++ {
			if g := h.chars[h.offs[i]:h.offs[i+n]]; budget[g] > 0 {
				budget[g]--
				match++
			}
		}
		set(n-1, hn-n+1, rn-n+1, match)
	}

	if wo > 0 {
		hw, rw := len(h.wordStarts), len(r.wordStarts)
		budget = make(map[string]int, rw*wo)
		for n := 1; n <= wo; n++ {
			for i := 0; i+n <= rw; i++ {
				budget[r.words[r.wordStarts[i]:r.wordEnds[i+n-1]]]++
			}
		}
		for n := 1; n <= wo; n++ {
			match := 0
			for i := 0; i+n <= hw; i++ {
				if g := h.words[h.wordStarts[i]:h.wordEnds[i+n-1]]; budget[g] > 0 {
					budget[g]--
					match++
				}
			}
			set(co+n-1, hw-n+1, rw-n+1, match)
		}
	}
	return st
}

// Stats computes one segment's statistics: with several references, those
// of the reference with the highest chrF (the first on ties). No reference
// counts as one empty reference.
func (c *ChrF) Stats(hyp string, refs ...string) ChrFStats {
	if len(refs) == 0 {
		refs = []string{""}
	}
	h := c.prepare(hyp)
	var best ChrFStats
	bestScore := -1.0
	for _, r := range refs {
		st := c.matchStats(h, c.prepare(r))
		if s := c.fScore(st); s > bestScore {
			best, bestScore = st, s
		}
	}
	return best
}

// fScore is sacreBLEU's CHRF._compute_f_score, in its operation order.
func (c *ChrF) fScore(st ChrFStats) float64 {
	const eps = 1e-16
	factor := c.cfg.Beta * c.cfg.Beta
	score, avgPrec, avgRec := 0.0, 0.0, 0.0
	effOrder := 0
	for i := range st.Hyp {
		nHyp, nRef, nMatch := float64(st.Hyp[i]), float64(st.Ref[i]), float64(st.Match[i])
		prec, rec := eps, eps
		if nHyp > 0 {
			prec = nMatch / nHyp
		}
		if nRef > 0 {
			rec = nMatch / nRef
		}
		if denom := factor*prec + rec; denom > 0 {
			score += (1 + factor) * prec * rec / denom
		} else {
			score += eps
		}
		if nHyp > 0 && nRef > 0 {
			avgPrec += prec
			avgRec += rec
			effOrder++
		}
	}
	if c.cfg.EpsSmoothing {
		if len(st.Hyp) == 0 {
			return 0
		}
		return 100 * score / float64(len(st.Hyp))
	}
	if effOrder == 0 {
		return 0
	}
	avgPrec /= float64(effOrder)
	avgRec /= float64(effOrder)
	if avgPrec+avgRec == 0 {
		return 0
	}
	f := (1 + factor) * avgPrec * avgRec
	f /= factor*avgPrec + avgRec
	return 100 * f
}

// Score turns statistics into a score.
func (c *ChrF) Score(st ChrFStats) ChrFScore {
	return ChrFScore{Score: c.fScore(st), Stats: st}
}

// Sentence scores one hypothesis against its references.
func (c *ChrF) Sentence(hyp string, refs ...string) ChrFScore {
	return c.Score(c.Stats(hyp, refs...))
}

// Corpus scores a corpus, refs[i] holding the references of hyps[i], by
// summing statistics over segments (sacreBLEU's corpus_score; NLTK's
// corpus_chrf instead averages sentence scores).
func (c *ChrF) Corpus(hyps []string, refs [][]string) (ChrFScore, error) {
	if len(hyps) != len(refs) {
		return ChrFScore{}, fmt.Errorf("chrf corpus: %d hypotheses, %d reference sets: %w", len(hyps), len(refs), ErrLengthMismatch)
	}
	var total ChrFStats
	k := c.cfg.CharOrder + c.cfg.WordOrder
	total.Hyp, total.Ref, total.Match = make([]int, k), make([]int, k), make([]int, k)
	for i, h := range hyps {
		total.Add(c.Stats(h, refs[i]...))
	}
	return c.Score(total), nil
}

// SentenceChrF is sacreBLEU's sentence_chrf(hyp, [ref]).score: chrF2,
// 0–100.
func SentenceChrF(hyp, ref string) float64 {
	c := &ChrF{cfg: DefaultChrFConfig()} // valid by construction
	return c.Sentence(hyp, ref).Score
}
