package lm

import (
	"fmt"
	"math"
)

// TrainConfig is what one supervised step needs besides the batch.
type TrainConfig struct {
	LR       float64 // learning rate for this step (see LRSchedule)
	ClipNorm float64 // global gradient-norm clip; ≤ 0 disables. Typical 1.
}

// StepStats reports one training step.
type StepStats struct {
	NLL      float64 // masked mean negative log-likelihood before the update
	GradNorm float64 // global gradient norm before clipping
}

// SFTStep is one supervised step on tokens [B,T]: zero the gradients,
// Forward, MaskedNLL, Backward, clip, AdamW update. mask is aligned with
// logp (see MaskedNLL); nil trains on every position that has a next
// token within lens.
func SFTStep(m *Model, opt *AdamW, tc TrainConfig, tokens []int, B, T int, lens []int, mask []float32) (StepStats, error) {
	// The head runs on the marked predictions only (ForwardMaskedAt):
	// MaskedNLL reads no other.
	logp, err := m.ForwardMaskedAt(tokens, B, T, lens, 1, mask)
	if err != nil {
		return StepStats{}, fmt.Errorf("sft step: %w", err)
	}
	if mask == nil {
		mask = make([]float32, B*T)
		for b, s := range m.batch.spans {
			for t := 0; t < s.n; t++ {
				if m.targets[s.start+t] >= 0 {
					mask[b*T+t] = 1
				}
			}
		}
	}
	nll, dlogp, err := MaskedNLL(logp, mask)
	if err != nil {
		return StepStats{}, fmt.Errorf("sft step: %w", err)
	}
	if math.IsNaN(nll) || math.IsInf(nll, 0) {
		return StepStats{}, fmt.Errorf("sft step: loss %v: %w (training diverged; no update taken)", nll, ErrNonFinite)
	}
	m.ZeroGrad()
	if err := m.Backward(dlogp); err != nil {
		return StepStats{}, fmt.Errorf("sft step: %w", err)
	}
	norm := ClipGradNorm(m, tc.ClipNorm)
	if err := opt.Update(m, tc.LR); err != nil {
		return StepStats{}, fmt.Errorf("sft step: %w", err)
	}
	return StepStats{NLL: nll, GradNorm: norm}, nil
}
