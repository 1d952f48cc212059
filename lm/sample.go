package lm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// SampleConfig controls Model.Sample.
type SampleConfig struct {
	// Temperature divides the logits before sampling; 0 means greedy
	// (argmax, lowest id on ties). Default 1.
	Temperature float64
	// TopP keeps the smallest set of most likely tokens whose probability
	// reaches TopP (nucleus sampling, Holtzman et al. 2020); 1 keeps all.
	// Default 1.
	TopP float64
	// MaxNewTokens caps the tokens generated per sequence. Default 64.
	MaxNewTokens int
	// Stop ends a sequence when one of these ids is sampled; the stop token
	// is included in the output. Default none.
	Stop []int
	// Force, when set, is asked after every sampled token that does not
	// end sequence seq, with its new tokens so far; the ids it returns are
	// appended as if sampled (a tool writing part of the turn) and read
	// through the cache in the next step. They count towards MaxNewTokens
	// and the context, and are cut to fit. Default nil.
	Force func(seq int, tokens []int) []int `json:"-"`
	// MaxForced bounds the ids one Force call may add; the rest are cut.
	// Default (0) defaultMaxForced, a calculator's result.
	MaxForced int `json:"-"`
	// Allow, when set, is asked before every token of sequence seq with
	// its new tokens so far (the sampler's: copy them to keep them), and
	// the token is drawn among the ids it returns only (nil: the whole
	// vocabulary), renormalised as top-p renormalises; LogProbs stay the
	// model's own, over the whole vocabulary. Benchmarks use it to give
	// turns a fixed shape whatever the weights; a simulator to copy the
	// numbers it holds (chatlm.User.CopyNumbers). Default nil.
	Allow func(seq int, tokens []int) []int `json:"-"`
}

// DefaultSampleConfig returns the defaults documented on SampleConfig.
func DefaultSampleConfig() SampleConfig {
	return SampleConfig{Temperature: 1, TopP: 1, MaxNewTokens: 64}
}

// Validate reports the first out-of-range field.
func (c SampleConfig) Validate() error {
	switch {
	case !(c.Temperature >= 0) || math.IsInf(c.Temperature, 0):
		return fmt.Errorf("sample: temperature %v, want ≥ 0", c.Temperature)
	case !(c.TopP > 0 && c.TopP <= 1):
		return fmt.Errorf("sample: top-p %v, want in (0,1]", c.TopP)
	case c.MaxNewTokens < 0:
		return fmt.Errorf("sample: max new tokens %d, want ≥ 0", c.MaxNewTokens)
	}
	return nil
}

// StopReason says why a sequence ended.
type StopReason int

const (
	StopMaxTokens StopReason = iota // generated MaxNewTokens tokens
	StopToken                       // sampled a stop token (the last token)
	StopContext                     // the next token would not fit in the context
)

func (r StopReason) String() string {
	switch r {
	case StopMaxTokens:
		return "max_tokens"
	case StopToken:
		return "stop_token"
	case StopContext:
		return "context"
	}
	return fmt.Sprintf("StopReason(%d)", int(r))
}

// Completion is what Sample generated for one prompt.
type Completion struct {
	Tokens []int // new tokens, the stop token included
	// LogProbs[i] = log p(Tokens[i] | prompt, Tokens[:i]) under the model
	// itself (temperature 1, no top-p): the same number Forward returns for
	// that position, ready for importance ratios; 0 for a forced token,
	// which was not sampled.
	LogProbs []float32
	// Forced[i] marks Tokens[i] as written by SampleConfig.Force; nil when
	// nothing was forced.
	Forced []bool
	Reason StopReason
}

// Sample continues each prompt with its own random source: sequence i
// draws only from rngs[i], so its tokens do not depend on which other
// prompts share the batch. Prompts may have different lengths (each ≥ 1
// token, ≤ Context). All prompts are read in one batched pass, then every
// step decodes one token for each unfinished sequence through a KV cache.
// A sequence stops at a stop token, after MaxNewTokens, or when the
// context is full.
func (m *Model) Sample(prompts [][]int, sc SampleConfig, rngs []*rand.Rand) ([]Completion, error) {
	return m.SampleKV(prompts, nil, sc, rngs)
}

// SampleKV is Sample with the keys and values of sequence i kept in
// kvs[i] across calls (kvs nil, or a nil entry: nothing kept), for a
// sequence that goes on, like a conversation turn after turn. Of each
// prompt only what follows its longest common prefix with the tokens the
// cache holds is read (at least its last token); afterwards the cache
// holds the prompt and every new token read after it, which is all of
// them but the last. A prompt that is not an extension of the cache — a
// conversation that lost old turns to fit the context — is read again
// from where they part. The tokens and log-probabilities are exactly
// Sample's on the same prompts: every position's keys and values come
// from the same per-row arithmetic whichever call and step computes them.
func (m *Model) SampleKV(prompts [][]int, kvs []*KV, sc SampleConfig, rngs []*rand.Rand) ([]Completion, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if len(rngs) != len(prompts) {
		return nil, fmt.Errorf("sample: %d random sources for %d prompts", len(rngs), len(prompts))
	}
	if kvs != nil && len(kvs) != len(prompts) {
		return nil, fmt.Errorf("sample: %d caches for %d prompts", len(kvs), len(prompts))
	}
	cfg := m.Config
	seen := make(map[*KV]bool, len(kvs))
	for i, p := range prompts {
		if len(p) == 0 {
			return nil, fmt.Errorf("sample: prompt %d is empty", i)
		}
		if len(p) > cfg.Context {
			return nil, fmt.Errorf("sample: prompt %d has %d tokens, context is %d", i, len(p), cfg.Context)
		}
		for _, tok := range p {
			if tok < 0 || tok >= cfg.VocabSize {
				return nil, fmt.Errorf("sample: prompt %d: token %d outside vocab [0,%d)", i, tok, cfg.VocabSize)
			}
		}
		if rngs[i] == nil && sc.Temperature > 0 {
			return nil, errors.New("sample: nil random source")
		}
		if kvs != nil && kvs[i] != nil {
			switch kv := kvs[i]; {
			case kv.m != m:
				return nil, fmt.Errorf("sample: cache %d belongs to another model", i)
			case seen[kv]:
				return nil, fmt.Errorf("sample: cache %d is given for two prompts", i)
			}
			seen[kvs[i]] = true
		}
	}
	S := len(prompts)
	out := make([]Completion, S)
	if S == 0 || sc.MaxNewTokens == 0 {
		return out, nil
	}
	// Every sequence's cache: its own, or a temporary one.
	seqs := make([]*KV, S)
	slots := make([]*kvSlot, S)
	for s := range seqs {
		if kvs != nil && kvs[s] != nil {
			seqs[s] = kvs[s]
			continue
		}
		seqs[s] = m.NewKV()
		defer seqs[s].Release()
	}
	// Prefill: every prompt token the cache lacks is a row; logits only
	// for each last one.
	bf := ActiveSamplePrecision() == BF16
	skip := make([]int, S)
	var fresh []int // sequences whose caches hold nothing of their prompt
	for s, p := range prompts {
		if sl := seqs[s].slot; sl != nil && sl.bf16 != bf {
			seqs[s].ids = seqs[s].ids[:0] // filled at the other precision: read again
		}
		skip[s] = min(commonPrefix(seqs[s].ids, p), len(p)-1)
		seqs[s].keep(skip[s])
		if skip[s] == 0 {
			fresh = append(fresh, s)
		}
	}
	// Fresh prompts that begin alike read their common prefix once
	// (kvshare.go): a sequence reads from n[s] on, in a prefill phase
	// after the one that reads what it shares.
	parent, n, depth := sharePlan(prompts, fresh)
	prefill, phases, shared := 0, 1, 0
	for s, p := range prompts {
		if parent[s] >= 0 {
			skip[s] = n[s]
			phases = max(phases, depth[s]+1)
			shared += n[s]
		}
		prefill += len(p) - skip[s]
	}
	stepRows := S
	if sc.Force != nil {
		stepRows += S * sc.maxForced() // a step may carry forced rows
	}
	st := m.decoder(max(min(prefill, maxPrefillRows), stepRows))
	st.sharedRows = shared
	st.weights(m, bf)
	stop := make(map[int]bool, len(sc.Stop))
	for _, t := range sc.Stop {
		stop[t] = true
	}
	active := make([]int, 0, S) // sequences still generating
	for s, p := range prompts {
		kv := seqs[s]
		k := min(skip[s], len(kv.ids)) // a sequence that shares holds nothing yet
		kv.ids = append(kv.ids[:k], p[k:]...)
		slots[s] = kv.ensureSlot(bf)
		active = append(active, s)
	}
	for s, q := range parent {
		if q >= 0 && !bf { // a bf16 slot takes a copy instead, below
			sl := slots[s]
			sl.base, sl.n = slots[q], n[s]
			slots[q].refs++
			slots[q].shared = max(slots[q].shared, n[s])
		}
	}
	rows := st.rows[:0]
	var heads []int
	var logits []float32
	V := cfg.VocabSize
	for phase := range phases {
		rows, heads = rows[:0], heads[:0]
		var in []int // the sequences of this phase
		for s, p := range prompts {
			if depth[s] != phase {
				continue
			}
			if q := parent[s]; q >= 0 && bf {
				// The parent's phase has run: its prefix is in its slot.
				m.copyPrefix(slots[s], slots[q], n[s])
			}
			for t := skip[s]; t < len(p); t++ {
				rows = append(rows, kvRow{seq: s, pos: t, tok: p[t]})
			}
			heads = append(heads, len(rows)-1)
			in = append(in, s)
		}
		out := st.prefill(m, rows, heads, slots)
		if phases == 1 {
			logits = out
			break
		}
		if logits == nil {
			logits = make([]float32, S*V)
		}
		for i, s := range in {
			copy(logits[s*V:(s+1)*V], out[i*V:(i+1)*V])
		}
	}
	for {
		next := rows[:0]
		var keep []int
		heads = heads[:0]
		for i, s := range active {
			row := logits[i*cfg.VocabSize : (i+1)*cfg.VocabSize]
			c := &out[s]
			var allow []int
			if sc.Allow != nil {
				if allow = sc.Allow(s, c.Tokens); allow != nil {
					if err := checkAllowed(allow, cfg.VocabSize); err != nil {
						return nil, fmt.Errorf("sample: sequence %d: %w", s, err)
					}
				}
			}
			tok, lp := pickToken(row, sc, rngs[s], st.order, st.probs, allow)
			c.Tokens = append(c.Tokens, tok)
			c.LogProbs = append(c.LogProbs, lp)
			if c.Forced != nil {
				c.Forced = append(c.Forced, false)
			}
			pos := len(prompts[s]) + len(c.Tokens) - 1 // where tok would be read
			switch {
			case stop[tok]:
				c.Reason = StopToken
			case len(c.Tokens) >= sc.MaxNewTokens:
				c.Reason = StopMaxTokens
			case pos >= cfg.Context:
				c.Reason = StopContext
			default:
				keep = append(keep, s)
				next = append(next, kvRow{seq: s, pos: pos, tok: tok})
				if sc.Force != nil {
					next = c.force(sc.Force(s, c.Tokens), next, s, pos, sc.maxForced(), sc.MaxNewTokens, cfg.Context)
				}
				heads = append(heads, len(next)-1)
			}
		}
		if len(keep) == 0 {
			return out, nil
		}
		for _, r := range next {
			seqs[r.seq].ids = append(seqs[r.seq].ids, r.tok)
		}
		active = keep
		rows = next
		logits = st.step(m, rows, heads, slots)
	}
}

// defaultMaxForced bounds the ids one Force call may add unless
// SampleConfig.MaxForced says otherwise (a calculator's result is a few),
// so the step buffers can be sized before sampling starts.
const defaultMaxForced = 24

func (sc *SampleConfig) maxForced() int {
	if sc.MaxForced > 0 {
		return sc.MaxForced
	}
	return defaultMaxForced
}

// force appends the forced ids to c and their rows to rows, after the
// sampled token at pos, cut so that one more token can still be sampled
// within maxNew and the context.
func (c *Completion) force(ids []int, rows []kvRow, seq, pos, maxForced, maxNew, context int) []kvRow {
	n := min(len(ids), maxForced, maxNew-1-len(c.Tokens), context-1-pos)
	if n <= 0 {
		return rows
	}
	if c.Forced == nil {
		c.Forced = make([]bool, len(c.Tokens), len(c.Tokens)+n)
	}
	for _, id := range ids[:n] {
		pos++
		c.Tokens = append(c.Tokens, id)
		c.LogProbs = append(c.LogProbs, 0)
		c.Forced = append(c.Forced, true)
		rows = append(rows, kvRow{seq: seq, pos: pos, tok: id})
	}
	return rows
}

// maxPrefillRows bounds the rows of one prefill step. A simulator's reply
// to a batch of conversations at 1,024 tokens reads hundreds of thousands
// of prompt tokens at once (500 conversations of mathchat:h16), and step
// buffers for all of them took gigabytes (about 10 KB a row at width 128);
// in steps of this many rows they take tens of megabytes, and a step this
// large keeps the matrix products efficient.
const maxPrefillRows = 4096
