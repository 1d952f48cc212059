package lm

import (
	"errors"
	"fmt"
)

// Config sizes a model. The zero value is not valid; start from
// DefaultConfig. There is no dropout: the models are small and trained on
// procedurally generated data that does not run out.
type Config struct {
	// VocabSize is V, the number of token ids. Default 512.
	VocabSize int
	// Context is the longest sequence the model reads (the number of
	// learned positions). Default 256.
	Context int
	// Dim is C, the width of the residual stream. Default 128.
	Dim int
	// Layers is L, the number of transformer blocks. Default 4.
	Layers int
	// Heads is NH, the number of attention heads; it must divide Dim.
	// Default 4.
	Heads int
	// Untied gives the model its own output projection lm_head [V,C]
	// instead of reusing the token embedding wte. Default false (tied), as
	// in GPT-2: fewer parameters and better small-data behaviour.
	Untied bool
}

// DefaultConfig is benchmark config A: vocab 512, context 256, d 128,
// 4 layers, 4 heads, tied output (891,648 parameters).
func DefaultConfig() Config {
	return Config{VocabSize: 512, Context: 256, Dim: 128, Layers: 4, Heads: 4}
}

// Bounds on a Config. They are far above anything this CPU engine trains
// (GPT-2 XL has vocab 50257, context 1024, width 1600, 48 layers, 1.6e9
// parameters) and exist so that a corrupt or hostile config.json is refused
// with an error instead of asking for terabytes.
const (
	MaxVocab   = 1 << 20
	MaxContext = 1 << 16
	MaxDim     = 1 << 14
	MaxLayers  = 1 << 10
	// MaxParams bounds the parameter count: the weights, their gradients
	// and AdamW's two moments take 16 bytes a parameter.
	MaxParams = 1 << 31
)

// Validate reports every field that cannot build a model. The fields are
// named as in config.json.
func (c Config) Validate() error {
	var errs []error
	bound := func(name string, v, lo, hi int) bool {
		switch {
		case v < lo:
			errs = append(errs, fmt.Errorf("%s %d, want ≥ %d", name, v, lo))
		case v > hi:
			errs = append(errs, fmt.Errorf("%s %d, want ≤ %d", name, v, hi))
		default:
			return true
		}
		return false
	}
	okV := bound("vocab_size", c.VocabSize, 2, MaxVocab)
	okT := bound("n_positions", c.Context, 2, MaxContext)
	okC := bound("n_embd", c.Dim, 1, MaxDim)
	okL := bound("n_layer", c.Layers, 1, MaxLayers)
	if bound("n_head", c.Heads, 1, MaxDim) && okC && c.Dim%c.Heads != 0 {
		errs = append(errs, fmt.Errorf("dim %d not divisible by heads %d (n_embd %% n_head must be 0)", c.Dim, c.Heads))
	}
	// Each factor is bounded, so the count cannot overflow an int64.
	if okV && okT && okC && okL {
		if n := c.NumParams(); n > MaxParams {
			errs = append(errs, fmt.Errorf("%d parameters, want ≤ %d", n, MaxParams))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("lm config: %w", err)
	}
	return nil
}

// HeadSize is HS = C/NH.
func (c Config) HeadSize() int { return c.Dim / c.Heads }

// Hidden is the MLP width, 4C.
func (c Config) Hidden() int { return 4 * c.Dim }

// LayerParams is the number of parameters in one block.
func (c Config) LayerParams() int {
	C, H := c.Dim, c.Hidden()
	return 2*C + // ln_1
		C*3*C + 3*C + // attn.c_attn
		C*C + C + // attn.c_proj
		2*C + // ln_2
		C*H + H + // mlp.c_fc
		H*C + C // mlp.c_proj
}

// NumParams is the total parameter count.
func (c Config) NumParams() int {
	n := c.VocabSize*c.Dim + c.Context*c.Dim + c.Layers*c.LayerParams() + 2*c.Dim
	if c.Untied {
		n += c.VocabSize * c.Dim
	}
	return n
}
