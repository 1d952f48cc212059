package lm

import "fmt"

// Params is a set of named views into one flat buffer. The same type holds
// the weights, their gradients and AdamW's two moments, all with the same
// layout, so element i of Data means the same weight in each.
//
// Layout: wte, wpe, then each block's tensors contiguously (see
// LayerParams), then ln_f and, when untied, lm_head.
type Params struct {
	Data []float32 // every parameter, in layout order

	WTE    []float32 // [V,C] token embedding
	WPE    []float32 // [Context,C] position embedding
	LNFW   []float32 // [C] final LayerNorm gain
	LNFB   []float32 // [C] final LayerNorm bias
	LMHead []float32 // [V,C] output projection; aliases WTE when tied

	layers []LayerParams
}

// LayerParams views one transformer block. Linear weights are [in,out].
type LayerParams struct {
	LN1W, LN1B []float32 // [C]
	QKVW       []float32 // [C,3C]
	QKVB       []float32 // [3C]
	AttProjW   []float32 // [C,C]
	AttProjB   []float32 // [C]
	LN2W, LN2B []float32 // [C]
	FCW        []float32 // [C,4C]
	FCB        []float32 // [4C]
	FCProjW    []float32 // [4C,C]
	FCProjB    []float32 // [C]
}

// Layer returns block l's views.
func (p *Params) Layer(l int) *LayerParams { return &p.layers[l] }

// tensorInfo names one tensor of the layout. Names follow Hugging Face's
// GPT-2 (without the "transformer." prefix).
type tensorInfo struct {
	name   string
	shape  []int
	offset int
	decay  bool // AdamW weight decay applies (2-D weights and embeddings)
}

func (t tensorInfo) size() int {
	n := 1
	for _, d := range t.shape {
		n *= d
	}
	return n
}

// tensors lists every tensor of the layout in order.
func (c Config) tensors() []tensorInfo {
	var ts []tensorInfo
	off := 0
	add := func(name string, decay bool, shape ...int) {
		t := tensorInfo{name: name, shape: shape, offset: off, decay: decay}
		ts = append(ts, t)
		off += t.size()
	}
	C, H := c.Dim, c.Hidden()
	add("wte.weight", true, c.VocabSize, C)
	add("wpe.weight", true, c.Context, C)
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("h.%d.", l)
		add(p+"ln_1.weight", false, C)
		add(p+"ln_1.bias", false, C)
		add(p+"attn.c_attn.weight", true, C, 3*C)
		add(p+"attn.c_attn.bias", false, 3*C)
		add(p+"attn.c_proj.weight", true, C, C)
		add(p+"attn.c_proj.bias", false, C)
		add(p+"ln_2.weight", false, C)
		add(p+"ln_2.bias", false, C)
		add(p+"mlp.c_fc.weight", true, C, H)
		add(p+"mlp.c_fc.bias", false, H)
		add(p+"mlp.c_proj.weight", true, H, C)
		add(p+"mlp.c_proj.bias", false, C)
	}
	add("ln_f.weight", false, C)
	add("ln_f.bias", false, C)
	if c.Untied {
		add("lm_head.weight", true, c.VocabSize, C)
	}
	return ts
}

// newParams lays views over data, which must hold cfg.NumParams() floats
// (allocated when nil).
func newParams(cfg Config, data []float32) *Params {
	if data == nil {
		data = make([]float32, cfg.NumParams())
	}
	if len(data) != cfg.NumParams() {
		panic(fmt.Sprintf("lm: params buffer has %d floats, layout needs %d", len(data), cfg.NumParams()))
	}
	ts := cfg.tensors()
	view := func(i int) []float32 {
		t := ts[i]
		return data[t.offset : t.offset+t.size() : t.offset+t.size()]
	}
	p := &Params{Data: data, WTE: view(0), WPE: view(1), layers: make([]LayerParams, cfg.Layers)}
	for l := range p.layers {
		i := 2 + 12*l
		p.layers[l] = LayerParams{
			LN1W: view(i), LN1B: view(i + 1),
			QKVW: view(i + 2), QKVB: view(i + 3),
			AttProjW: view(i + 4), AttProjB: view(i + 5),
			LN2W: view(i + 6), LN2B: view(i + 7),
			FCW: view(i + 8), FCB: view(i + 9),
			FCProjW: view(i + 10), FCProjB: view(i + 11),
		}
	}
	i := 2 + 12*cfg.Layers
	p.LNFW, p.LNFB = view(i), view(i+1)
	p.LMHead = p.WTE
	if cfg.Untied {
		p.LMHead = view(i + 2)
	}
	return p
}
