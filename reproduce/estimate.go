package reproduce

// Each stage's estimated wall time, for the run's ETA (progress.Board).
// An estimate is a reference rate measured for the stage's kind times the
// stage's work against the reference's. The board corrects every kind by
// the rate it measures in this run (and a kind not finished yet by all
// the finished stages, or before any, by the running stage's own steps
// per second), so the reference rates only set the proportions between
// kinds, chiefly how long RL and the evaluations take once the SFT
// stages, most of a quick run, are done. Counting stages as equal instead
// read "ETA ~6h31m" during the SFT of a 39-minute run.

import (
	"cmp"
	"time"

	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/progress"
)

// stageKind groups stages that run at one rate per unit of their work.
type stageKind string

const (
	kindPrep     stageKind = "prep"     // logs, tokenizer
	kindSFT      stageKind = "sft"      // supervised fits: base, simulator, filtered BC, re-fits
	kindRL       stageKind = "rl"       // an RL arm's training
	kindEval     stageKind = "eval"     // conversations with the human proxy on test problems
	kindTune     stageKind = "tune"     // the best-temperature sweeps on validation problems
	kindFidelity stageKind = "fidelity" // sim-to-real gaps and the simulator's gate
)

// cost is a stage's kind and estimated wall time.
type cost struct {
	kind stageKind
	est  time.Duration
}

// The reference rates: the stage profile of the quick mathchat run with
// seed 5 (results/mathchat-quick-seed5-optimizers/stages.md), two stages
// side by side on 2 cores, at the quick preset's shapes: models of 4
// layers of width 128, 512 tokens of context, SFT batches of 16, RL
// iterations of 8 problems × 8 conversations of up to 6 turns of 64 new
// tokens, 500 test problems.
const (
	refSFTStep           = 600 * time.Millisecond // base 0.51 s a step, simulator 0.77 s
	refRLIteration       = 4 * time.Second        // GRPO's arms 3.0–5.7 s an iteration
	refConversation      = 18 * time.Millisecond  // evaluations of 500 problems 6–15 s
	refGap               = 60 * time.Millisecond  // a sim-to-real gap, per test problem: 17–34 s
	refLog               = 500 * time.Microsecond // collecting 16000 logs: 8.4 s
	refGate              = 50 * time.Second       // the simulator's gate: 48.7 s
	refGateConversations = 60                     // the gate's default conversations
	refTokenizer         = 2 * time.Second        // 1.8 s
	refWidth             = 128                    // the reference models' width
	refLayers            = 4                      // and depth
	refContext           = 512                    // the reference models' context
	refBatch             = 16                     // SFT sequences a step
	refIteration         = 8 * 8 * 6 * 64         // RL tokens an iteration may generate
	refTurnTokens        = 6 * 64                 // an evaluated conversation's
)

// size is m's work per token against the reference models' (layers ×
// width²).
func size(m lm.Config) float64 {
	return float64(m.Layers*m.Dim*m.Dim) / float64(refLayers*refWidth*refWidth)
}

func scaled(d time.Duration, by float64) time.Duration { return time.Duration(float64(d) * by) }

// sftCost is an SFT stage of b's steps on model m.
func sftCost(m lm.Config, b preset.SFTBudget) cost {
	per := size(m) * float64(b.BatchSize*m.Context) / float64(refBatch*refContext)
	return cost{kindSFT, scaled(refSFTStep, per*float64(b.Steps))}
}

// rlCost is an RL arm of iterations whose rollouts cost factor times
// GRPO's (the optimizer's costFactor).
func rlCost(p preset.Preset, iterations int, factor float64) cost {
	b := p.RL
	per := size(p.Policy) * float64(b.InstancesPerStep*b.Group*p.MaxTurns*b.MaxNewTokens) / refIteration
	return cost{kindRL, scaled(refRLIteration, per*float64(iterations)*factor)}
}

// conversationsCost is n conversations of preset p's policy (kind eval
// or tune).
func conversationsCost(kind stageKind, p preset.Preset, n int) cost {
	per := size(p.Policy) * float64(p.MaxTurns*p.RL.MaxNewTokens) / refTurnTokens
	return cost{kind, scaled(refConversation, per*float64(n))}
}

// gapCost is a sim-to-real gap over n problems.
func gapCost(p preset.Preset, n int) cost {
	per := (size(p.Policy) + size(p.Sim)) / 2 * float64(p.MaxTurns*p.RL.MaxNewTokens) / refTurnTokens
	return cost{kindFidelity, scaled(refGap, per*float64(n))}
}

// armCost is arm a's one training stage: an RL arm's iterations at its
// optimizer's cost, filtered BC's SFT steps.
func (r *run) armCost(a arm) cost {
	p := r.cfg.Preset
	if !a.optimizer.rl {
		b := p.FilteredBC
		b.Steps = a.budget.iterations
		return sftCost(p.Policy, b)
	}
	return rlCost(p, a.budget.iterations, cmp.Or(a.optimizer.costFactor, 1))
}

// plan is groups' stages as a progress plan, under prefix (a pipeline's
// "seed-S/", or "").
func plan(groups [][]stage, prefix string) []progress.Planned {
	var out []progress.Planned
	for _, g := range groups {
		for _, s := range g {
			out = append(out, progress.Planned{Stage: prefix + s.name, Kind: string(s.cost.kind), Estimate: s.cost.est})
		}
	}
	return out
}
