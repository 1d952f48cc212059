package lm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/calibrl/calibrl/gemm"
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
	// the number of new tokens so far, and the token is drawn among the
	// ids it returns only (nil: the whole vocabulary), renormalised as
	// top-p renormalises; LogProbs stay the model's own, over the whole
	// vocabulary. Benchmarks use it to give turns a fixed shape whatever
	// the weights. Default nil.
	Allow func(seq, n int) []int `json:"-"`
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
	skip := make([]int, S)
	prefill := 0
	for s, p := range prompts {
		skip[s] = min(commonPrefix(seqs[s].ids, p), len(p)-1)
		prefill += len(p) - skip[s]
	}
	stepRows := S
	if sc.Force != nil {
		stepRows += S * sc.maxForced() // a step may carry forced rows
	}
	st := m.decoder(max(min(prefill, maxPrefillRows), stepRows))
	st.bf16 = nil
	if ActivePrecision() == BF16 {
		st.packed.pack(m)
		st.bf16 = &st.packed
	}
	stop := make(map[int]bool, len(sc.Stop))
	for _, t := range sc.Stop {
		stop[t] = true
	}
	rows := st.rows[:0]
	var heads []int
	active := make([]int, 0, S) // sequences still generating
	for s, p := range prompts {
		kv := seqs[s]
		kv.ids = append(kv.ids[:skip[s]], p[skip[s]:]...)
		slots[s] = kv.ensureSlot()
		for t := skip[s]; t < len(p); t++ {
			rows = append(rows, kvRow{seq: s, pos: t, tok: p[t]})
		}
		heads = append(heads, len(rows)-1)
		active = append(active, s)
	}
	logits := st.prefill(m, rows, heads, slots)
	for {
		next := rows[:0]
		var keep []int
		heads = heads[:0]
		for i, s := range active {
			row := logits[i*cfg.VocabSize : (i+1)*cfg.VocabSize]
			c := &out[s]
			var allow []int
			if sc.Allow != nil {
				if allow = sc.Allow(s, len(c.Tokens)); allow != nil {
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

// KV is one sequence's key/value cache kept across SampleKV calls. It is
// valid for the weights it was filled with: Release it when the sequence
// is over or the weights change. Like the model, it is not safe for
// concurrent use.
type KV struct {
	m    *Model
	ids  []int   // the tokens whose keys and values slot holds, at positions 0, 1, …
	slot *kvSlot // nil while it holds nothing
}

// NewKV returns an empty cache for a sequence of m.
func (m *Model) NewKV() *KV { return &KV{m: m} }

// Len is how many leading tokens of the sequence the cache holds.
func (kv *KV) Len() int { return len(kv.ids) }

// Release empties the cache and gives its memory back to the model for
// other sequences; the cache can be filled again.
func (kv *KV) Release() {
	if kv.slot != nil {
		d := kv.m.decoder(0)
		d.free = append(d.free, kv.slot)
		kv.slot = nil
	}
	kv.ids = kv.ids[:0]
}

func (kv *KV) ensureSlot() *kvSlot {
	if kv.slot == nil {
		kv.slot = kv.m.newSlot()
	}
	return kv.slot
}

// kvSlot is the memory of one sequence's cache: per layer [NH,Context,HS],
// each head's keys (values) contiguous.
type kvSlot struct{ k, v [][]float32 }

// newSlot takes a free slot of the model's, or allocates one.
func (m *Model) newSlot() *kvSlot {
	d := m.decoder(0)
	if n := len(d.free); n > 0 {
		sl := d.free[n-1]
		d.free = d.free[:n-1]
		return sl
	}
	cfg := m.Config
	sl := &kvSlot{k: make([][]float32, cfg.Layers), v: make([][]float32, cfg.Layers)}
	for l := range sl.k {
		sl.k[l], sl.v[l] = make([]float32, cfg.Context*cfg.Dim), make([]float32, cfg.Context*cfg.Dim)
	}
	return sl
}

func commonPrefix(a, b []int) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
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

func checkAllowed(allow []int, V int) error {
	if len(allow) == 0 {
		return errors.New("Allow returned no token")
	}
	for _, id := range allow {
		if id < 0 || id >= V {
			return fmt.Errorf("Allow returned token %d outside vocab [0,%d)", id, V)
		}
	}
	return nil
}

// pickToken draws the next token from one row of logits [V] and returns it
// with its untempered log-probability. order and buf are [V] scratch.
// allow, when not nil, holds the only ids that may be drawn.
func pickToken(logits []float32, sc SampleConfig, rng *rand.Rand, order []int, buf []float32, allow []int) (int, float32) {
	V := len(logits)
	mx := logits[0]
	arg := 0
	for j, v := range logits {
		if v > mx {
			mx, arg = v, j
		}
	}
	probs := buf[:V]
	copy(probs, logits)
	lse := mx + logf(expShiftSum(probs, mx))
	if allow != nil {
		tok := pickAllowed(logits, sc, rng, order, probs, allow)
		return tok, logits[tok] - lse
	}
	if sc.Temperature == 0 {
		return arg, logits[arg] - lse
	}
	if sc.Temperature != 1 {
		inv := float32(1 / sc.Temperature)
		for j, v := range logits {
			probs[j] = v * inv
		}
		expShiftSum(probs, mx*inv)
	}
	order = order[:V]
	for j := range order {
		order[j] = j
	}
	if sc.TopP < 1 {
		// Highest probability first, lower id first on ties; keep the
		// shortest prefix holding TopP of the mass.
		slices.SortFunc(order, func(a, b int) int {
			if probs[a] != probs[b] {
				if probs[a] > probs[b] {
					return -1
				}
				return 1
			}
			return a - b
		})
		var z float64
		for _, p := range probs {
			z += float64(p)
		}
		order = nucleus(order, probs, sc.TopP*z)
	}
	tok := draw(order, probs, rng)
	return tok, logits[tok] - lse
}

// pickAllowed is pickToken's draw restricted to the ids in allow: the
// greedy choice is the allowed id with the highest logit (the lowest on
// ties); otherwise the tempered probabilities of the allowed ids, cut to
// top-p among them, are renormalised.
func pickAllowed(logits []float32, sc SampleConfig, rng *rand.Rand, order []int, probs []float32, allow []int) int {
	order = append(order[:0], allow...)
	slices.Sort(order)
	order = slices.Compact(order)
	best := order[0]
	for _, j := range order {
		if logits[j] > logits[best] {
			best = j
		}
	}
	if sc.Temperature == 0 || len(order) == 1 {
		return best
	}
	inv := 1 / sc.Temperature
	for _, j := range order {
		probs[j] = float32(math.Exp((float64(logits[j]) - float64(logits[best])) * inv))
	}
	if sc.TopP < 1 {
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case probs[a] > probs[b]:
				return -1
			case probs[a] < probs[b]:
				return 1
			}
			return 0
		})
		var z float64
		for _, j := range order {
			z += float64(probs[j])
		}
		order = nucleus(order, probs, sc.TopP*z)
	}
	return draw(order, probs, rng)
}

// nucleus keeps the shortest prefix of order (most likely first) whose
// probabilities reach mass.
func nucleus(order []int, probs []float32, mass float64) []int {
	var cum float64
	for k, j := range order {
		cum += float64(probs[j])
		if cum >= mass {
			return order[:k+1]
		}
	}
	return order
}

// draw picks one of order in proportion to its unnormalised probs.
func draw(order []int, probs []float32, rng *rand.Rand) int {
	var mass float64
	for _, j := range order {
		mass += float64(probs[j])
	}
	u := rng.Float64() * mass
	var cum float64
	for _, j := range order {
		cum += float64(probs[j])
		if u < cum {
			return j
		}
	}
	return order[len(order)-1]
}

// kvRow is one token to push through the decoder: sequence, position, id.
type kvRow struct{ seq, pos, tok int }

// decodeState is the step buffers of the model's sampler and the free
// cache slots.
type decodeState struct {
	x, ln, att []float32 // [R,C]
	qkv        []float32 // [R,3C]
	h, hTanh   []float32 // [R,4C]
	mean, rstd []float32 // [R]
	logits     []float32 // [R,V]
	scores     []float32 // [workers,Context]
	rows       []kvRow
	order      []int     // [V] top-p scratch
	probs      []float32 // [V] sampling scratch
	free       []*kvSlot // released cache slots
	// bf16 is &packed while this Sample call runs in bf16, else nil.
	bf16   *packedWeights
	packed packedWeights
}

// decoder returns the model's sampler state with step buffers for R rows,
// growing the previous one when it is too small.
func (m *Model) decoder(R int) *decodeState {
	cfg := m.Config
	C, H, V, W := cfg.Dim, cfg.Hidden(), cfg.VocabSize, m.workers()
	d := m.dec
	if d == nil {
		d = &decodeState{order: make([]int, V), probs: make([]float32, V)}
		m.dec = d
	}
	if len(d.mean) < R || len(d.scores) < W*cfg.Context {
		R = max(R, len(d.mean))
		f := func(n int) []float32 { return make([]float32, n) }
		d.x, d.ln, d.att, d.qkv = f(R*C), f(R*C), f(R*C), f(3*R*C)
		d.h, d.hTanh, d.mean, d.rstd = f(R*H), f(R*H), f(R), f(R)
		d.logits, d.scores = f(R*V), f(max(W, len(d.scores)/cfg.Context)*cfg.Context)
		d.rows = make([]kvRow, 0, R)
	}
	return d
}

// maxPrefillRows bounds the rows of one prefill step. A simulator's reply
// to a batch of conversations at 1,024 tokens reads hundreds of thousands
// of prompt tokens at once (500 conversations of mathchat:h16), and step
// buffers for all of them took gigabytes (about 10 KB a row at width 128);
// in steps of this many rows they take tens of megabytes, and a step this
// large keeps the matrix products efficient.
const maxPrefillRows = 4096

// prefill steps rows through in order, in steps of at most the rows the
// decoder was sized for, and returns the logits of the rows listed in heads
// (ascending), as one step would: a sequence whose rows fall in two steps
// attends, in the later one, to the keys and values the earlier one
// cached, by the same per-row arithmetic.
func (d *decodeState) prefill(m *Model, rows []kvRow, heads []int, slots []*kvSlot) []float32 {
	n := len(d.mean)
	if len(rows) <= n {
		return d.step(m, rows, heads, slots)
	}
	V := m.Config.VocabSize
	out := make([]float32, 0, len(heads)*V)
	h := 0
	for a := 0; a < len(rows); a += n {
		b := min(a+n, len(rows))
		var hs []int
		for ; h < len(heads) && heads[h] < b; h++ {
			hs = append(hs, heads[h]-a)
		}
		out = append(out, d.step(m, rows[a:b], hs, slots)...)
	}
	return out
}

// step pushes rows through every block, writing their keys and values into
// their sequence's cache slot (slots[row.seq]), and returns logits
// [len(heads),V] for the rows listed in heads. A row attends to its own
// sequence's cache up to its position, so several rows of one sequence (a
// prompt) can share a step.
func (d *decodeState) step(m *Model, rows []kvRow, heads []int, slots []*kvSlot) []float32 {
	cfg, p := m.Config, m.Params
	HS, ctx := cfg.HeadSize(), cfg.Context
	// At most the workers decoder sized the score scratch for: SetWorkers
	// may have raised the count since.
	R, C, H, V, NH, W := len(rows), cfg.Dim, cfg.Hidden(), cfg.VocabSize, cfg.Heads, min(m.workers(), len(d.scores)/ctx)
	scale := float32(1 / math.Sqrt(float64(HS)))
	x := d.x[:R*C]
	for i, r := range rows {
		xi := x[i*C : (i+1)*C]
		w, pe := p.WTE[r.tok*C:(r.tok+1)*C], p.WPE[r.pos*C:(r.pos+1)*C]
		for c := range xi {
			xi[c] = w[c] + pe[c]
		}
	}
	bf, pw := d.bf16 != nil, d.bf16
	if !bf {
		pw = &unpacked
	}
	for l := 0; l < cfg.Layers; l++ {
		lp := p.Layer(l)
		layernormForward(W, d.ln, d.mean, d.rstd, x, lp.LN1W, lp.LN1B, R, C)
		layerMM(W, bf, d.qkv, d.ln, lp.QKVW, pw.qkv, l, lp.QKVB, nil, R, C, 3*C)
		for i, r := range rows {
			kc, vc := slots[r.seq].k[l], slots[r.seq].v[l]
			for h := 0; h < NH; h++ {
				at := (h*ctx + r.pos) * HS
				copy(kc[at:at+HS], d.qkv[i*3*C+C+h*HS:])
				copy(vc[at:at+HS], d.qkv[i*3*C+2*C+h*HS:])
			}
		}
		parallelForW(W, R*NH, func(w, lo, hi int) {
			sc := d.scores[w*ctx : (w+1)*ctx]
			for task := lo; task < hi; task++ {
				i, h := task/NH, task%NH
				r := rows[i]
				q := d.qkv[i*3*C+h*HS : i*3*C+(h+1)*HS]
				base := h * ctx * HS
				o := d.att[i*C+h*HS : i*C+(h+1)*HS]
				sl := slots[r.seq]
				attendRow(o, sc, q, sl.k[l][base:], sl.v[l][base:], r.pos+1, HS, scale)
			}
		})
		layerMM(W, bf, x, d.att, lp.AttProjW, pw.attProj, l, lp.AttProjB, x, R, C, C)
		layernormForward(W, d.ln, d.mean, d.rstd, x, lp.LN2W, lp.LN2B, R, C)
		layerMM(W, bf, d.h, d.ln, lp.FCW, pw.fc, l, lp.FCB, nil, R, C, H)
		geluForward(W, d.h, d.hTanh, d.h, R*H)
		layerMM(W, bf, x, d.h, lp.FCProjW, pw.fcProj, l, lp.FCProjB, x, R, H, C)
	}
	// Final norm and logits only for the rows that sample.
	K := len(heads)
	if K == 0 {
		return nil // a prefill step with no prompt's last token
	}
	for k, i := range heads {
		copy(d.att[k*C:(k+1)*C], x[i*C:(i+1)*C])
	}
	layernormForward(W, d.ln, d.mean, d.rstd, d.att, p.LNFW, p.LNFB, K, C)
	if d.bf16 != nil {
		gemm.Bgemm(K, 1, d.ln, C, &d.bf16.lmHead, 0, d.logits, V)
	} else {
		gemm.Sgemm(false, true, K, V, C, 1, d.ln, C, p.LMHead, C, 0, d.logits, V)
	}
	return d.logits[:K*V]
}
