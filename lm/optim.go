package lm

import (
	"errors"
	"fmt"
	"math"
)

// AdamWConfig sets the optimizer (Loshchilov & Hutter 2019, "Decoupled
// Weight Decay Regularization", https://arxiv.org/abs/1711.05101).
type AdamWConfig struct {
	LR          float64 // peak learning rate; default 1e-3
	Beta1       float64 // first-moment decay; default 0.9
	Beta2       float64 // second-moment decay; default 0.95 (nanoGPT/llm.c)
	Eps         float64 // denominator guard; default 1e-8
	WeightDecay float64 // decoupled decay; default 0.1
	// Decay applies to the 2-D tensors (linear weights and both
	// embeddings, as nanoGPT does); LayerNorm gains and all biases are
	// never decayed.
}

// DefaultAdamW returns the defaults documented on AdamWConfig.
func DefaultAdamW() AdamWConfig {
	return AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1}
}

// Validate reports the first out-of-range field.
func (c AdamWConfig) Validate() error {
	switch {
	case !(c.LR >= 0):
		return fmt.Errorf("adamw: lr %v, want ≥ 0", c.LR)
	case !(c.Beta1 >= 0 && c.Beta1 < 1):
		return fmt.Errorf("adamw: beta1 %v, want in [0,1)", c.Beta1)
	case !(c.Beta2 >= 0 && c.Beta2 < 1):
		return fmt.Errorf("adamw: beta2 %v, want in [0,1)", c.Beta2)
	case !(c.Eps > 0):
		return fmt.Errorf("adamw: eps %v, want > 0", c.Eps)
	case !(c.WeightDecay >= 0):
		return fmt.Errorf("adamw: weight decay %v, want ≥ 0", c.WeightDecay)
	}
	return nil
}

// AdamW holds the moments, laid out like the parameters, and the step
// count. Its state is saved in checkpoints for resuming.
type AdamW struct {
	Config AdamWConfig
	M, V   *Params // first and second moments
	Step   int     // updates taken so far
	decay  []bool  // per parameter: weight decay applies
}

// NewAdamW returns a zeroed optimizer for a model config.
func NewAdamW(cfg Config, ac AdamWConfig) (*AdamW, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := ac.Validate(); err != nil {
		return nil, err
	}
	o := &AdamW{Config: ac, M: newParams(cfg, nil), V: newParams(cfg, nil), decay: make([]bool, cfg.NumParams())}
	for _, t := range cfg.tensors() {
		for i := t.offset; i < t.offset+t.size(); i++ {
			o.decay[i] = t.decay
		}
	}
	return o, nil
}

// ErrNonFinite marks an update refused because a gradient (or a loss)
// was NaN or infinite: training has diverged, and taking the step would
// only spread NaN through the weights and the checkpoints after them.
var ErrNonFinite = errors.New("non-finite")

// Update takes one AdamW step on m.Params from m.Grads at learning rate lr
// (usually LRSchedule.At(o.Step)). It does not clear the gradients. A
// gradient holding a NaN or an infinity is refused (ErrNonFinite) before
// anything changes: the weights, the moments and the step stay as they
// were.
func (o *AdamW) Update(m *Model, lr float64) error {
	if len(o.M.Data) != len(m.Params.Data) {
		return fmt.Errorf("adamw: optimizer has %d moments, model %d parameters", len(o.M.Data), len(m.Params.Data))
	}
	if !(lr >= 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("adamw: learning rate %v: %w", lr, ErrNonFinite)
	}
	if err := finite(m.Config, m.Grads.Data, "grad "); err != nil {
		return fmt.Errorf("adamw: step %d refused, weights unchanged: %w: %w", o.Step+1, ErrNonFinite, err)
	}
	o.Step++
	c := o.Config
	b1, b2 := float32(c.Beta1), float32(c.Beta2)
	bc1 := float32(1 / (1 - math.Pow(c.Beta1, float64(o.Step))))
	bc2 := float32(1 / (1 - math.Pow(c.Beta2, float64(o.Step))))
	lr32, eps, wd := float32(lr), float32(c.Eps), float32(c.WeightDecay)
	p, g, mm, vv := m.Params.Data, m.Grads.Data, o.M.Data, o.V.Data
	n := len(p)
	// Elementwise, so any split over workers gives the same result.
	parallelFor(m.workers(), (n+4095)/4096, func(lo, hi int) {
		for i := lo * 4096; i < hi*4096 && i < n; i++ {
			gi := g[i]
			mi := b1*mm[i] + (1-b1)*gi
			vi := b2*vv[i] + (1-b2)*gi*gi
			mm[i], vv[i] = mi, vi
			upd := (mi * bc1) / (sqrtf(vi*bc2) + eps)
			if o.decay[i] {
				upd += wd * p[i]
			}
			p[i] -= lr32 * upd
		}
	})
	return nil
}

// ClipGradNorm scales m.Grads so its global L2 norm is at most maxNorm
// (no-op when maxNorm ≤ 0) and returns the norm before clipping. The
// squared norm is summed in float64 over fixed chunks, in chunk order.
func ClipGradNorm(m *Model, maxNorm float64) float64 {
	g := m.Grads.Data
	const chunk = 1 << 14
	nch := (len(g) + chunk - 1) / chunk
	part := make([]float64, nch)
	parallelFor(m.workers(), nch, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			var s float64
			for _, v := range g[ch*chunk : min((ch+1)*chunk, len(g))] {
				s += float64(v) * float64(v)
			}
			part[ch] = s
		}
	})
	var sq float64
	for _, s := range part {
		sq += s
	}
	norm := math.Sqrt(sq)
	if maxNorm > 0 && norm > maxNorm {
		scale := float32(maxNorm / (norm + 1e-6))
		for i := range g {
			g[i] *= scale
		}
	}
	return norm
}

// LRSchedule is linear warm-up then cosine decay:
//
//	step < Warmup:           lr = Peak·(step+1)/Warmup
//	Warmup ≤ step < Total:   lr = Min + ½(Peak−Min)(1 + cos(π·progress))
//	step ≥ Total:            lr = Min
//
// with progress = (step−Warmup)/(Total−Warmup). Total 0 means constant
// Peak after warm-up.
type LRSchedule struct {
	Peak   float64 // default 1e-3
	Min    float64 // floor reached at Total (nanoGPT uses Peak/10); default 0
	Warmup int     // warm-up steps; default 0
	Total  int     // total steps, warm-up included; default 0 (no decay)
}

// At returns the learning rate for a 0-based step.
func (s LRSchedule) At(step int) float64 {
	if step < s.Warmup {
		return s.Peak * float64(step+1) / float64(s.Warmup)
	}
	if s.Total <= 0 {
		return s.Peak
	}
	if step >= s.Total {
		return s.Min
	}
	if s.Total <= s.Warmup {
		return s.Min
	}
	progress := float64(step-s.Warmup) / float64(s.Total-s.Warmup)
	return s.Min + 0.5*(s.Peak-s.Min)*(1+math.Cos(math.Pi*progress))
}
