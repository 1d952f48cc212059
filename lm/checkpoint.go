package lm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/calibrl/calibrl/atomicfile"
)

// Checkpoint folder layout, after Hugging Face's GPT-2:
//
//	config.json            model sizes (GPT-2 config keys)
//	model.safetensors      weights, named as in Config.tensors
//	tokenizer.json         the tokenizer, stored as given (optional)
//	optimizer.safetensors  AdamW moments exp_avg.<name>, exp_avg_sq.<name>;
//	                       step and hyper-parameters in its metadata (optional)
const (
	ConfigFile    = "config.json"
	WeightsFile   = "model.safetensors"
	TokenizerFile = "tokenizer.json"
	OptimizerFile = "optimizer.safetensors"
)

// Checkpoint is what a checkpoint folder holds.
type Checkpoint struct {
	Model     *Model
	Optimizer *AdamW // nil: no optimizer state (inference-only checkpoint)
	Tokenizer []byte // tokenizer.json contents; nil: none
}

// hfConfig is config.json: Hugging Face GPT-2 keys, so other tools can
// read the sizes.
type hfConfig struct {
	ModelType     string   `json:"model_type"`
	Architectures []string `json:"architectures,omitempty"`
	VocabSize     int      `json:"vocab_size"`
	NPositions    int      `json:"n_positions"`
	NCtx          int      `json:"n_ctx,omitempty"`
	NEmbd         int      `json:"n_embd"`
	NLayer        int      `json:"n_layer"`
	NHead         int      `json:"n_head"`
	NInner        *int     `json:"n_inner"`
	Activation    string   `json:"activation_function"`
	LayerNormEps  float64  `json:"layer_norm_epsilon"`
	Tie           *bool    `json:"tie_word_embeddings"`
	ResidPdrop    float64  `json:"resid_pdrop"`
	EmbdPdrop     float64  `json:"embd_pdrop"`
	AttnPdrop     float64  `json:"attn_pdrop"`
}

func toHF(c Config) hfConfig {
	tie := !c.Untied
	return hfConfig{
		ModelType: "gpt2", Architectures: []string{"GPT2LMHeadModel"},
		VocabSize: c.VocabSize, NPositions: c.Context, NCtx: c.Context,
		NEmbd: c.Dim, NLayer: c.Layers, NHead: c.Heads,
		Activation: "gelu_new", LayerNormEps: lnEps, Tie: &tie,
	}
}

// parseConfig reads config.json and rejects architectures this engine
// does not implement.
func parseConfig(data []byte) (Config, error) {
	var h hfConfig
	if err := json.Unmarshal(data, &h); err != nil {
		return Config{}, err
	}
	if h.ModelType != "" && h.ModelType != "gpt2" {
		return Config{}, fmt.Errorf("model_type %q, want gpt2", h.ModelType)
	}
	if h.Activation != "" && h.Activation != "gelu_new" {
		return Config{}, fmt.Errorf("activation_function %q, want gelu_new", h.Activation)
	}
	if h.LayerNormEps != 0 && h.LayerNormEps != lnEps {
		return Config{}, fmt.Errorf("layer_norm_epsilon %v, want %v", h.LayerNormEps, lnEps)
	}
	if h.NInner != nil && *h.NInner != 4*h.NEmbd {
		return Config{}, fmt.Errorf("n_inner %d, want 4·n_embd = %d", *h.NInner, 4*h.NEmbd)
	}
	c := Config{VocabSize: h.VocabSize, Context: h.NPositions, Dim: h.NEmbd, Layers: h.NLayer, Heads: h.NHead}
	c.Untied = h.Tie != nil && !*h.Tie
	return c, c.Validate()
}

// Mismatch describes how c differs from want, field by field, or returns
// nil when they are equal.
func (c Config) Mismatch(want Config) error {
	var errs []error
	diff := func(name string, got, w any) {
		if got != w {
			errs = append(errs, fmt.Errorf("%s is %v, want %v", name, got, w))
		}
	}
	diff("vocab_size", c.VocabSize, want.VocabSize)
	diff("n_positions", c.Context, want.Context)
	diff("n_embd", c.Dim, want.Dim)
	diff("n_layer", c.Layers, want.Layers)
	diff("n_head", c.Heads, want.Heads)
	diff("tie_word_embeddings", !c.Untied, !want.Untied)
	return errors.Join(errs...)
}

// SaveCheckpoint writes ck into dir (created if needed). Every file is
// written atomically; config.json goes last, so a folder whose config.json
// is present was completely written at least once.
func SaveCheckpoint(dir string, ck Checkpoint) error {
	if ck.Model == nil {
		return fmt.Errorf("save checkpoint %s: no model", dir)
	}
	m := ck.Model
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", dir, err)
	}
	if ck.Tokenizer != nil {
		if err := atomicfile.WriteBytes(filepath.Join(dir, TokenizerFile), ck.Tokenizer); err != nil {
			return fmt.Errorf("save checkpoint %s: %w", dir, err)
		}
	}
	ts := m.Config.tensors()
	if o := ck.Optimizer; o != nil {
		var named []namedTensor
		for _, prefix := range []string{"exp_avg.", "exp_avg_sq."} {
			src := o.M
			if prefix == "exp_avg_sq." {
				src = o.V
			}
			for _, t := range ts {
				named = append(named, namedTensor{prefix + t.name, t.shape, src.Data[t.offset : t.offset+t.size()]})
			}
		}
		f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
		meta := map[string]string{
			"step": strconv.Itoa(o.Step), "lr": f(o.Config.LR), "beta1": f(o.Config.Beta1),
			"beta2": f(o.Config.Beta2), "eps": f(o.Config.Eps), "weight_decay": f(o.Config.WeightDecay),
		}
		if err := writeTensors(filepath.Join(dir, OptimizerFile), named, meta); err != nil {
			return fmt.Errorf("save checkpoint %s: %w", dir, err)
		}
	}
	named := make([]namedTensor, len(ts))
	for i, t := range ts {
		named[i] = namedTensor{t.name, t.shape, m.Params.Data[t.offset : t.offset+t.size()]}
	}
	if err := writeTensors(filepath.Join(dir, WeightsFile), named, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", dir, err)
	}
	cj, err := json.MarshalIndent(toHF(m.Config), "", "  ")
	if err != nil {
		return fmt.Errorf("save checkpoint %s: %w", dir, err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, ConfigFile), append(cj, '\n')); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", dir, err)
	}
	return nil
}

func writeTensors(path string, named []namedTensor, meta map[string]string) error {
	return atomicfile.Write(path, func(w io.Writer) error { return writeSafetensors(w, named, meta) })
}

// LoadCheckpoint reads a folder written by SaveCheckpoint. Every tensor's
// name and shape is checked against config.json; the error names the
// first tensor that is missing, unexpected or of the wrong shape. The
// optimizer and tokenizer are loaded when their files exist.
func LoadCheckpoint(dir string) (*Checkpoint, error) {
	cdata, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %s: %w", dir, err)
	}
	cfg, err := parseConfig(cdata)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %s: %s: %w", dir, ConfigFile, err)
	}
	m := newModel(cfg)
	if _, err := readTensors(filepath.Join(dir, WeightsFile), cfg, "", m.Params); err != nil {
		return nil, fmt.Errorf("load checkpoint %s: %w", dir, err)
	}
	ck := &Checkpoint{Model: m}
	opath := filepath.Join(dir, OptimizerFile)
	if _, err := os.Stat(opath); err == nil {
		o, err := loadOptimizer(opath, cfg)
		if err != nil {
			return nil, fmt.Errorf("load checkpoint %s: %w", dir, err)
		}
		ck.Optimizer = o
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load checkpoint %s: %w", dir, err)
	}
	tok, err := os.ReadFile(filepath.Join(dir, TokenizerFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load checkpoint %s: %w", dir, err)
	}
	ck.Tokenizer = tok
	return ck, nil
}

func loadOptimizer(path string, cfg Config) (*AdamW, error) {
	o, err := NewAdamW(cfg, DefaultAdamW())
	if err != nil {
		return nil, err
	}
	file, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tensors, meta, err := parseSafetensors(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	var first, second []namedTensor
	for _, t := range tensors {
		switch {
		case strings.HasPrefix(t.name, "exp_avg."):
			first = append(first, t)
		case strings.HasPrefix(t.name, "exp_avg_sq."):
			second = append(second, t)
		default:
			return nil, fmt.Errorf("%s: unexpected tensor %s", filepath.Base(path), t.name)
		}
	}
	if err := fillParams(first, cfg, "exp_avg.", o.M); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if err := fillParams(second, cfg, "exp_avg_sq.", o.V); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	num := func(key string) (float64, error) {
		v, err := strconv.ParseFloat(meta[key], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: metadata %s: %w", filepath.Base(path), key, err)
		}
		return v, nil
	}
	step, err := strconv.Atoi(meta["step"])
	if err != nil || step < 0 {
		return nil, fmt.Errorf("%s: metadata step %q is not a step count", filepath.Base(path), meta["step"])
	}
	o.Step = step
	for key, dst := range map[string]*float64{"lr": &o.Config.LR, "beta1": &o.Config.Beta1, "beta2": &o.Config.Beta2, "eps": &o.Config.Eps, "weight_decay": &o.Config.WeightDecay} {
		if *dst, err = num(key); err != nil {
			return nil, err
		}
	}
	if err := o.Config.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return o, nil
}

// readTensors loads a safetensors file into p, checking names and shapes.
func readTensors(path string, cfg Config, prefix string, p *Params) (map[string]string, error) {
	file, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tensors, meta, err := parseSafetensors(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if err := fillParams(tensors, cfg, prefix, p); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return meta, nil
}

// fillParams copies tensors (named prefix+name) into p after checking that
// the set of names and every shape match the layout of cfg.
func fillParams(tensors []namedTensor, cfg Config, prefix string, p *Params) error {
	byName := make(map[string]namedTensor, len(tensors))
	for _, t := range tensors {
		byName[t.name] = t
	}
	want := cfg.tensors()
	for _, w := range want {
		t, ok := byName[prefix+w.name]
		if !ok {
			return fmt.Errorf("tensor %s missing (config wants shape %s)", prefix+w.name, shapeString(w.shape))
		}
		if shapeString(t.shape) != shapeString(w.shape) {
			return fmt.Errorf("tensor %s has shape %s, config wants %s", prefix+w.name, shapeString(t.shape), shapeString(w.shape))
		}
	}
	if len(byName) != len(want) {
		known := make(map[string]bool, len(want))
		for _, w := range want {
			known[prefix+w.name] = true
		}
		for _, t := range tensors {
			if !known[t.name] {
				return fmt.Errorf("unexpected tensor %s %s not in config", t.name, shapeString(t.shape))
			}
		}
	}
	for _, w := range want {
		copy(p.Data[w.offset:w.offset+w.size()], byName[prefix+w.name].data)
	}
	return nil
}
