package lm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/calibrl/calibrl/gemm"
)

// Model is a GPT decoder with its gradients and the activations of the
// last Forward. It is not safe for concurrent use; Workers goroutines are
// used inside each call.
type Model struct {
	Config Config
	Params *Params // weights
	Grads  *Params // ∂loss/∂weights, accumulated by Backward, cleared by ZeroGrad

	// Workers is how many goroutines a call spreads its work over; ≤ 0
	// means the package's setting (SetWorkers; by default
	// runtime.GOMAXPROCS(0)). Results do not depend on it.
	Workers int
	// nw is the worker count the last Forward sized its scratch for:
	// Backward keeps to it, whatever SetWorkers says meanwhile.
	nw int

	acts   activations
	nb, nt int // B and T of the last Forward's [B,T] batch
	// The last Forward's batch without its padding: its sequences end to
	// end (batch), rows their positions. Every layer runs on these rows
	// only, so a batch padded to its longest sequence costs what its
	// tokens cost (quick mathchat's SFT batches are about a tenth padding).
	batch   ragged
	tokens  []int // [N] inputs
	pos     []int // [N] positions t within their sequence
	targets []int // [N] next token, or -1 where there is none
	pending bool  // Forward ran and Backward has not consumed its activations
	// temp is the last Forward's sampling temperature (ForwardAt): its
	// logp are under softmax(logits/temp), and Backward divides by it.
	temp float32

	dec *decodeState // Sample's KV cache, kept between calls

	// bf16 is &packed while the last Forward ran in bf16, else nil; it
	// stays valid for the Backward that follows (weights do not change
	// in between).
	bf16   *packedWeights
	packed packedWeights
}

// New builds a model with GPT-2's initialisation: weights and wte
// N(0, 0.02), wpe N(0, 0.01), residual projections (attn.c_proj,
// mlp.c_proj) N(0, 0.02/√(2L)), biases 0, LayerNorm gains 1.
func New(cfg Config, rng *rand.Rand) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := newModel(cfg)
	proj := 0.02 / math.Sqrt(2*float64(cfg.Layers))
	normal := func(x []float32, std float64) {
		for i := range x {
			x[i] = float32(rng.NormFloat64() * std)
		}
	}
	p := m.Params
	normal(p.WTE, 0.02)
	normal(p.WPE, 0.01)
	for l := 0; l < cfg.Layers; l++ {
		lp := p.Layer(l)
		fill(lp.LN1W, 1)
		fill(lp.LN2W, 1)
		normal(lp.QKVW, 0.02)
		normal(lp.AttProjW, proj)
		normal(lp.FCW, 0.02)
		normal(lp.FCProjW, proj)
	}
	fill(p.LNFW, 1)
	if cfg.Untied {
		normal(p.LMHead, 0.02)
	}
	return m, nil
}

// newModel allocates a zeroed model for a valid config.
func newModel(cfg Config) *Model {
	return &Model{Config: cfg, Params: newParams(cfg, nil), Grads: newParams(cfg, nil)}
}

func fill(x []float32, v float32) {
	for i := range x {
		x[i] = v
	}
}

func (m *Model) workers() int {
	if m.Workers > 0 {
		return m.Workers
	}
	return defaultWorkers()
}

// ZeroGrad clears the gradient buffer.
func (m *Model) ZeroGrad() { clear(m.Grads.Data) }

// ErrNoForward is returned by Backward when no Forward preceded it.
var ErrNoForward = errors.New("lm: backward without a preceding forward")

// checkBatch validates a [B,T] token batch and per-row lengths.
func (m *Model) checkBatch(tokens []int, B, T int, lens []int) error {
	cfg := m.Config
	if B < 1 || T < 1 {
		return fmt.Errorf("lm: batch %d×%d, want ≥ 1×1", B, T)
	}
	if T > cfg.Context {
		return fmt.Errorf("lm: sequence length %d exceeds context %d", T, cfg.Context)
	}
	if len(tokens) != B*T {
		return fmt.Errorf("lm: %d tokens for a %d×%d batch", len(tokens), B, T)
	}
	for i, tok := range tokens {
		if tok < 0 || tok >= cfg.VocabSize {
			return fmt.Errorf("lm: token %d at [%d,%d] outside vocab [0,%d)", tok, i/T, i%T, cfg.VocabSize)
		}
	}
	if lens != nil {
		if len(lens) != B {
			return fmt.Errorf("lm: %d lengths for %d sequences", len(lens), B)
		}
		for b, n := range lens {
			if n < 0 || n > T {
				return fmt.Errorf("lm: length %d of sequence %d outside [0,%d]", n, b, T)
			}
		}
	}
	return nil
}

// Forward runs the model over tokens [B,T] and returns logp [B,T] with
//
//	logp[b,t] = log p(tokens[b,t+1] | tokens[b,≤t])   for t < lens[b]−1
//
// and 0 elsewhere (the last position of each row, and padding). lens gives
// each row's real length; nil means every row is T long. Padding must still
// be valid token ids; causal attention keeps it from touching real
// positions. The activations are kept for one Backward.
func (m *Model) Forward(tokens []int, B, T int, lens []int) ([]float32, error) {
	return m.ForwardAt(tokens, B, T, lens, 1)
}

// ForwardAt is Forward for the distribution sampled at temperature temp:
//
//	logp[b,t] = log softmax(logits[b,t]/temp)[tokens[b,t+1]]
//
// RL that samples its rollouts at temp ≠ 1 must score them, and take its
// gradient, under that distribution: the untempered log-probs of tempered
// samples are not the policy that drew them, and training them on such
// samples sharpened the quick base to collapse in 60 iterations (greedy
// success 0.69 → 0.08 at temp 0.7). Backward carries the 1/temp through.
// temp 1 is Forward, bit for bit.
func (m *Model) ForwardAt(tokens []int, B, T int, lens []int, temp float32) ([]float32, error) {
	return m.ForwardMaskedAt(tokens, B, T, lens, temp, nil)
}

// ForwardMaskedAt is ForwardAt for a trainer that reads only the
// predictions mask marks (mask [B,T], > 0: marked; nil: all): logp is 0
// elsewhere, and the head (its product, softmax and, in Backward, its two
// gradient products) runs on the marked rows alone, since SFT marks one
// role's turns and RL the agent's. The marked log-probs, and the
// gradients of a Backward whose dlogp is zero off the mask, are the
// bits ForwardAt and Backward give. Backward refuses a gradient at an
// unmarked prediction.
func (m *Model) ForwardMaskedAt(tokens []int, B, T int, lens []int, temp float32, mask []float32) ([]float32, error) {
	if err := m.checkBatch(tokens, B, T, lens); err != nil {
		return nil, err
	}
	if !(temp > 0) || math.IsInf(float64(temp), 0) {
		return nil, fmt.Errorf("lm: forward at temperature %v, want a positive finite one", temp)
	}
	if mask != nil && len(mask) != B*T {
		return nil, fmt.Errorf("lm: forward: mask has %d entries for a %d×%d batch", len(mask), B, T)
	}
	m.temp = temp
	m.setBatch(tokens, B, T, lens)
	m.forwardHidden()
	m.forwardHead(mask)
	m.pending = true
	return m.padded(m.acts.logp), nil
}

// setBatch takes a [B,T] batch, row b real up to lens[b] (nil: all T),
// into the model's ragged rows: tokens, positions and next-token targets
// of each sequence's real positions, end to end.
func (m *Model) setBatch(tokens []int, B, T int, lens []int) {
	m.nb, m.nt = B, T
	if lens == nil {
		lens = make([]int, B)
		for b := range lens {
			lens[b] = T
		}
	}
	m.batch.layout(lens, m.Config.Heads)
	N := m.batch.rows
	m.tokens = resizeInts(m.tokens, N)
	m.pos = resizeInts(m.pos, N)
	m.targets = resizeInts(m.targets, N)
	for b, s := range m.batch.spans {
		for t := 0; t < s.n; t++ {
			i := s.start + t
			m.tokens[i] = tokens[b*T+t]
			m.pos[i] = t
			m.targets[i] = -1
			if t < s.n-1 {
				m.targets[i] = tokens[b*T+t+1]
			}
		}
	}
}

// padded returns x [N], one value per ragged row, laid out [B,T] with 0
// at padding.
func (m *Model) padded(x []float32) []float32 {
	T := m.nt
	out := make([]float32, m.nb*T)
	for b, s := range m.batch.spans {
		copy(out[b*T:b*T+s.n], x[s.start:s.start+s.n])
	}
	return out
}

// forwardHidden runs embeddings, blocks and the final LayerNorm over
// m.tokens, leaving acts.lnf [N,C].
func (m *Model) forwardHidden() {
	cfg, p, a := m.Config, m.Params, &m.acts
	C, NH := cfg.Dim, cfg.Heads
	N, H, W := m.batch.rows, cfg.Hidden(), m.workers()
	m.nw = W
	a.ensure(cfg, &m.batch, W)
	m.bf16 = nil
	pw := &unpacked
	if ActivePrecision() == BF16 {
		m.packed.pack(m)
		m.bf16, pw = &m.packed, &m.packed
	}
	bf := m.bf16 != nil
	encoderForward(a.encoded, m.tokens, m.pos, p.WTE, p.WPE, N, C)
	x := a.encoded
	for l := 0; l < cfg.Layers; l++ {
		lp, la := p.Layer(l), &a.layers[l]
		layernormForward(W, la.ln1, la.ln1Mean, la.ln1Rstd, x, lp.LN1W, lp.LN1B, N, C)
		layerMM(W, bf, la.qkv, la.ln1, lp.QKVW, pw.qkv, l, lp.QKVB, nil, N, C, 3*C)
		attentionForward(W, la.atty, la.att, la.qkv, &m.batch, C, NH)
		layerMM(W, bf, la.res2, la.atty, lp.AttProjW, pw.attProj, l, lp.AttProjB, x, N, C, C)
		layernormForward(W, la.ln2, la.ln2Mean, la.ln2Rstd, la.res2, lp.LN2W, lp.LN2B, N, C)
		layerMM(W, bf, la.fch, la.ln2, lp.FCW, pw.fc, l, lp.FCB, nil, N, C, H)
		geluForward(W, la.fchGelu, la.fchTanh, la.fch, N*H)
		layerMM(W, bf, la.res3, la.fchGelu, lp.FCProjW, pw.fcProj, l, lp.FCProjB, la.res2, N, H, C)
		x = la.res3
	}
	layernormForward(W, a.lnf, a.lnfMean, a.lnfRstd, x, p.LNFW, p.LNFB, N, C)
}

// forwardHead: probs = softmax(lnf·LMHeadᵀ) on the rows with a target
// (and, with mask, marked), logp [N] = log probs[target] (0 on the
// others). The log-softmax is fused: one pass for the max, one for Σexp
// that also leaves the probabilities. With mask the marked rows are
// acts.keep; in fp32 they are moved to the front of lnf and probs, in
// order (compactHead), and the head's product runs on them alone, while
// in bf16 (whose weight gradient pairs rows) the product runs on every
// row and the softmax on the marked ones in place.
func (m *Model) forwardHead(mask []float32) {
	cfg, a := m.Config, &m.acts
	N, V, C := m.batch.rows, cfg.VocabSize, cfg.Dim
	a.masked = mask != nil
	var on []int // the batch rows the softmax runs on; nil: all
	if mask != nil {
		on = a.keep[:0]
		for b, sp := range m.batch.spans {
			for t := 0; t < sp.n; t++ {
				if i := sp.start + t; m.targets[i] >= 0 && mask[b*m.nt+t] > 0 {
					on = append(on, i)
				}
			}
		}
		a.keep = on
	}
	compact := m.compactHead()
	rows := N
	if compact {
		for k, i := range on { // k ≤ i: row i is read before anything lands on it
			if k != i {
				copy(a.lnf[k*C:(k+1)*C], a.lnf[i*C:(i+1)*C])
			}
		}
		rows = len(on)
	}
	m.headLogits(a.probs, rows)
	inv := 1 / m.temp
	clear(a.logp[:N])
	n := N
	if on != nil {
		n = len(on)
	}
	parallelFor(m.nw, n, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			i, r := k, k // batch row, row of probs
			if on != nil {
				i, r = on[k], on[k]
			}
			if compact {
				r = k
			}
			y := m.targets[i]
			if y < 0 {
				continue
			}
			row := a.probs[r*V : (r+1)*V]
			if inv != 1 {
				scalef(row, inv)
			}
			mx := maxf(row)
			ly := row[y] - mx
			sum := expShiftSum(row, mx)
			scalef(row, 1/sum)
			a.logp[i] = ly - logf(sum)
		}
	})
}

// compactHead reports whether the last forward ran the head on its
// marked rows (acts.keep) moved to the front of lnf and probs: a masked
// forward in fp32.
func (m *Model) compactHead() bool { return m.acts.masked && m.bf16 == nil }

// headLogits sets out [N,V] = lnf·LMHeadᵀ, in the last Forward's precision.
func (m *Model) headLogits(out []float32, N int) {
	C, V := m.Config.Dim, m.Config.VocabSize
	if m.bf16 != nil {
		gemm.Bgemm(N, 1, m.acts.lnf, C, &m.bf16.lmHead, 0, out, V)
		return
	}
	gemm.Sgemm(false, true, N, V, C, 1, m.acts.lnf, C, m.Params.LMHead, C, 0, out, V)
}

// Backward accumulates into m.Grads the gradient of Σ dlogp[b,t]·logp[b,t]
// for the logp of the last Forward. dlogp is [B,T]; entries where Forward
// returned 0 for lack of a target are ignored. It consumes the activations:
// call Forward again before the next Backward.
func (m *Model) Backward(dlogp []float32) error {
	if !m.pending {
		return ErrNoForward
	}
	cfg, p, g, a := m.Config, m.Params, m.Grads, &m.acts
	B, T, C, V, NH := m.nb, m.nt, cfg.Dim, cfg.VocabSize, cfg.Heads
	N, H, W := m.batch.rows, cfg.Hidden(), m.nw
	if len(dlogp) != B*T {
		return fmt.Errorf("lm: backward got %d upstream gradients for a %d×%d batch", len(dlogp), B, T)
	}
	if a.masked {
		marked := a.keep // ascending ragged rows, spans in order
		for b, sp := range m.batch.spans {
			for t := 0; t < sp.n; t++ {
				if len(marked) > 0 && marked[0] == sp.start+t {
					marked = marked[1:]
					continue
				}
				if m.targets[sp.start+t] >= 0 && dlogp[b*T+t] != 0 {
					return fmt.Errorf("lm: backward: gradient %v at [%d,%d], a prediction the masked forward did not score", dlogp[b*T+t], b, t)
				}
			}
		}
	}
	m.pending = false
	// dlogp [B,T] onto the ragged rows; padding had no logp to weigh.
	dl := a.dlogp[:N]
	for b, s := range m.batch.spans {
		copy(dl[s.start:s.start+s.n], dlogp[b*T:b*T+s.n])
	}
	rows := N // head rows: all, or the marked ones at the front (compactHead)
	var from []int
	if m.compactHead() {
		rows, from = len(a.keep), a.keep
	}

	// dlogits = dlogp·(onehot(y) − probs)/temp, in place over probs.
	dlogits := a.probs
	inv := 1 / m.temp
	parallelFor(W, rows, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			i := k
			if from != nil {
				i = from[k]
			}
			row := dlogits[k*V : (k+1)*V]
			y, d := m.targets[i], dl[i]*inv
			if y < 0 || d == 0 {
				clear(row)
				continue
			}
			scalef(row, -d)
			row[y] += d
		}
	})
	dres, dtmp := a.dres, a.dtmp
	// In bf16 the input gradients dx = dy·Wᵀ run on the weights packed
	// transposed, and the weight gradients dW = xᵀ·dy on dy packed as
	// each product reaches it (pw.dy); the gradients themselves are fp32.
	pw := &unpacked
	if m.bf16 != nil {
		m.bf16.packT(m)
		pw = m.bf16
	}
	dy := &pw.dy
	wT := func(ps []gemm.PackedB, l int) *gemm.PackedB {
		if m.bf16 == nil {
			return nil
		}
		return &ps[l]
	}
	// dlnf = dlogits·LMHead; dLMHead += dlogitsᵀ·lnf
	if m.bf16 != nil {
		gemm.Bgemm(N, 1, dlogits, V, &pw.lmHeadT, 0, dtmp, C)
		weightGradBF16(g.LMHead, dlogits, a.lnf, dy, N, V, C)
	} else {
		m.headBackward(dlogits, dtmp, dl, N, from)
	}
	clear(dres[:N*C])
	layernormBackward(W, dres, g.LNFW, g.LNFB, dtmp, m.layerInput(cfg.Layers), p.LNFW, a.lnfMean, a.lnfRstd, N, C, a.reduce)

	for l := cfg.Layers - 1; l >= 0; l-- {
		lp, lg, la := p.Layer(l), g.Layer(l), &a.layers[l]
		x := m.layerInput(l)
		// res3 = res2 + fcproj(gelu(fc(ln2(res2)))); dres holds ∂res3.
		matmulBackward(W, a.dfc, lg.FCProjW, lg.FCProjB, dres, la.fchGelu, lp.FCProjW, wT(pw.fcProjT, l), dy, N, H, C, false, a.reduce)
		geluBackward(W, a.dfc, a.dfc, la.fch, la.fchTanh, N*H)
		matmulBackward(W, dtmp, lg.FCW, lg.FCB, a.dfc, la.ln2, lp.FCW, wT(pw.fcT, l), dy, N, C, H, false, a.reduce)
		layernormBackward(W, dres, lg.LN2W, lg.LN2B, dtmp, la.res2, lp.LN2W, la.ln2Mean, la.ln2Rstd, N, C, a.reduce)
		// res2 = x + attproj(attn(qkv(ln1(x)))); dres now holds ∂res2.
		matmulBackward(W, dtmp, lg.AttProjW, lg.AttProjB, dres, la.atty, lp.AttProjW, wT(pw.attProjT, l), dy, N, C, C, false, a.reduce)
		attentionBackward(W, a.dqkv, dtmp, la.att, la.qkv, la.atty, &m.batch, C, NH, a.attScratch)
		matmulBackward(W, dtmp, lg.QKVW, lg.QKVB, a.dqkv, la.ln1, lp.QKVW, wT(pw.qkvT, l), dy, N, C, 3*C, false, a.reduce)
		layernormBackward(W, dres, lg.LN1W, lg.LN1B, dtmp, x, lp.LN1W, la.ln1Mean, la.ln1Rstd, N, C, a.reduce)
	}
	encoderBackward(g.WTE, g.WPE, dres, m.tokens, m.pos, N, C)
	return nil
}

// denseHead makes headBackward run on every row (tests compare the two).
var denseHead bool

// headBackward is the head's fp32 backward, dlnf = dlogits·LMHead into
// dtmp [N,C] and dLMHead += dlogitsᵀ·lnf, over the rows that carry a
// gradient (a target and dl ≠ 0; the others' dlogits are zero). from
// lists the batch row of each of dlogits' and lnf's rows (nil: row k is
// row k, all N). Training marks only some predictions (SFT one role's
// turns, RL the agent's), and the head's two products on all rows were
// about two thirds of the head's time. The bits are those of the
// products over all rows: a row's dlnf depends only on that row, the
// others' is +0 either way, and dLMHead's sum over rows is taken per
// gemm.SliceK slice of the batch's rows, which a zero row does not
// change (gemm.SliceK). It moves dlogits' and lnf's gradient rows to
// their front, in order: Backward reads neither again.
func (m *Model) headBackward(dlogits, dtmp, dl []float32, N int, from []int) {
	C, V := m.Config.Dim, m.Config.VocabSize
	a, p, g := &m.acts, m.Params, m.Grads
	rows := N
	if from != nil {
		rows = len(from)
	}
	row := func(k int) int {
		if from != nil {
			return from[k]
		}
		return k
	}
	var keep []int // batch rows of the gradient rows, ascending
	var at []int   // where each is in dlogits and lnf
	for k := 0; k < rows; k++ {
		if i := row(k); m.targets[i] >= 0 && dl[i] != 0 {
			keep, at = append(keep, i), append(at, k)
		}
	}
	K := len(keep)
	if from == nil && (10*K > 9*N || denseHead) { // nearly every row: moving rows would cost what it saves
		gemm.Sgemm(false, false, N, C, V, 1, dlogits, V, p.LMHead, C, 0, dtmp, C)
		gemm.Sgemm(true, false, V, C, N, 1, dlogits, V, a.lnf, C, 1, g.LMHead, C)
		return
	}
	for k, j := range at { // k ≤ j: row j is read before anything lands on it
		if k != j {
			copy(dlogits[k*V:(k+1)*V], dlogits[j*V:(j+1)*V])
			copy(a.lnf[k*C:(k+1)*C], a.lnf[j*C:(j+1)*C])
		}
	}
	gemm.Sgemm(false, false, K, C, V, 1, dlogits, V, p.LMHead, C, 0, dtmp, C)
	// Back to each row's place, last first (keep[k] ≥ k), and +0 between.
	next := N
	for k := K - 1; k >= 0; k-- {
		i := keep[k]
		clear(dtmp[(i+1)*C : next*C])
		if k != i {
			copy(dtmp[i*C:(i+1)*C], dtmp[k*C:(k+1)*C])
		}
		next = i
	}
	clear(dtmp[:next*C])
	for lo, k0 := 0, 0; lo < N; lo += gemm.SliceK {
		k1 := k0
		for k1 < K && keep[k1] < lo+gemm.SliceK {
			k1++
		}
		if k1 > k0 {
			gemm.Sgemm(true, false, V, C, k1-k0, 1, dlogits[k0*V:], V, a.lnf[k0*C:], C, 1, g.LMHead, C)
		}
		k0 = k1
	}
}

// layerInput is the residual stream entering block l (l = L: leaving the
// last block).
func (m *Model) layerInput(l int) []float32 {
	if l == 0 {
		return m.acts.encoded
	}
	return m.acts.layers[l-1].res3
}

// MaskedNLL is the supervised loss: the masked mean negative log-likelihood
//
//	nll = −Σ mask[b,t]·logp[b,t] / Σ mask
//
// and its upstream gradient dlogp = −mask/Σmask, ready for Backward. mask
// is aligned with logp: mask[b,t] weights the prediction of token t+1, so
// to train on a role's tokens set mask[b,t] = 1 where tokens[b,t+1] belongs
// to that role. An all-zero mask gives nll 0 and a zero gradient.
func MaskedNLL(logp, mask []float32) (nll float64, dlogp []float32, err error) {
	if len(mask) != len(logp) {
		return 0, nil, fmt.Errorf("lm: mask has %d entries, logp %d", len(mask), len(logp))
	}
	var sum, total float64
	for i, w := range mask {
		sum += float64(w)
		total += float64(w) * float64(logp[i])
	}
	dlogp = make([]float32, len(logp))
	if sum == 0 {
		return 0, dlogp, nil
	}
	for i, w := range mask {
		dlogp[i] = float32(-float64(w) / sum)
	}
	return -total / sum, dlogp, nil
}

func resizeInts(x []int, n int) []int {
	if cap(x) < n {
		return make([]int, n)
	}
	return x[:n]
}

// Logits returns the raw next-token logits [B,T,V] for tokens [B,T]. It
// reuses Forward's buffers, so a Backward after it fails with ErrNoForward.
func (m *Model) Logits(tokens []int, B, T int) ([]float32, error) {
	if err := m.checkBatch(tokens, B, T, nil); err != nil {
		return nil, err
	}
	m.pending = false
	m.setBatch(tokens, B, T, nil)
	m.forwardHidden()
	cfg := m.Config
	out := make([]float32, B*T*cfg.VocabSize)
	m.headLogits(out, B*T)
	return out, nil
}

// Clone returns an independent copy of the weights (a frozen reference
// policy, a simulator snapshot) with zero gradients and no activations.
func (m *Model) Clone() *Model {
	c := newModel(m.Config)
	copy(c.Params.Data, m.Params.Data)
	c.Workers = m.Workers
	return c
}
