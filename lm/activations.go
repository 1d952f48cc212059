package lm

// activations holds what Forward saves for Backward, and Backward's own
// scratch, sized for the largest batch seen so far.
type activations struct {
	rows, attFloats, workers, scratchT int // capacities

	encoded          []float32 // [N,C] embeddings, the input of block 0
	layers           []layerActs
	lnf              []float32 // [N,C]
	lnfMean, lnfRstd []float32 // [N]
	probs            []float32 // [N,V] softmax of the logits; Backward turns it into dlogits
	logp             []float32 // [N]
	dlogp            []float32 // [N] Backward's upstream gradient on the rows

	// Backward scratch.
	dres, dtmp []float32 // [N,C] residual-stream gradient; per-op gradient
	dqkv       []float32 // [N,3C]
	dfc        []float32 // [N,4C]
	attScratch []float32 // [workers,T,T], T the longest sequence
	masked     bool      // the last forward was ForwardMaskedAt's
	keep       []int     // its marked rows, ascending
	reduce     []float32 // [reduceChunks,4C] column-reduction partials
}

// layerActs is what one block saves.
type layerActs struct {
	ln1, ln1Mean, ln1Rstd []float32 // [N,C], [N], [N]
	qkv                   []float32 // [N,3C]
	att                   []float32 // [Σ NH·n²] attention probabilities (span.att)
	atty                  []float32 // [N,C] attention output before c_proj
	res2                  []float32 // [N,C] residual after attention
	ln2, ln2Mean, ln2Rstd []float32 // [N,C], [N], [N]
	fch                   []float32 // [N,4C] MLP pre-activation
	fchTanh               []float32 // [N,4C] GELU's tanh term, for backward
	fchGelu               []float32 // [N,4C]
	res3                  []float32 // [N,C] residual after the MLP
}

// ensure grows the buffers to hold the ragged batch r with the given
// workers.
func (a *activations) ensure(cfg Config, r *ragged, workers int) {
	N, attF, T := r.rows, r.attF, r.longest
	if N <= a.rows && attF <= a.attFloats && workers*T*T <= len(a.attScratch) && len(a.layers) == cfg.Layers {
		return
	}
	N, attF = max(N, a.rows), max(attF, a.attFloats)
	T = max(T, a.scratchT)
	C, H, V := cfg.Dim, cfg.Hidden(), cfg.VocabSize
	f := func(n int) []float32 { return make([]float32, n) }
	*a = activations{rows: N, attFloats: attF, workers: workers, scratchT: T}
	a.encoded = f(N * C)
	a.layers = make([]layerActs, cfg.Layers)
	for l := range a.layers {
		a.layers[l] = layerActs{
			ln1: f(N * C), ln1Mean: f(N), ln1Rstd: f(N),
			qkv: f(3 * N * C), att: f(attF), atty: f(N * C), res2: f(N * C),
			ln2: f(N * C), ln2Mean: f(N), ln2Rstd: f(N),
			fch: f(N * H), fchTanh: f(N * H), fchGelu: f(N * H), res3: f(N * C),
		}
	}
	a.lnf, a.lnfMean, a.lnfRstd = f(N*C), f(N), f(N)
	a.probs, a.logp, a.dlogp = f(N*V), f(N), f(N)
	a.dres, a.dtmp, a.dqkv, a.dfc = f(N*C), f(N*C), f(3*N*C), f(N*H)
	a.attScratch = f(max(workers, 1) * T * T)
	a.reduce = f(reduceChunks * max(H, 2*C))
}
