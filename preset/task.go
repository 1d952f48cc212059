package preset

import (
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

// TaskSizing is what one task family sets for itself within a preset,
// where its conversations cost otherwise than the preset's budgets
// assume. A zero field keeps the preset's.
type TaskSizing struct {
	// Level is the task level the family runs at (Preset.Level).
	Level string
	// PolicySFTSteps and SimSFTSteps are the two supervised budgets'
	// steps (batch, learning rate and evaluation cadence stay the
	// preset's).
	PolicySFTSteps, SimSFTSteps int
	// RLIterations is every RL arm's iterations (Preset.RL).
	RLIterations int
	// EvalEpisodes is the held-out evaluation size (Preset.EvalEpisodes).
	EvalEpisodes int
}

// taskSizings holds, by preset and task family, the families that size
// themselves.
func taskSizings() map[string]map[string]TaskSizing {
	return map[string]map[string]TaskSizing{
		"quick": {"docedit": doceditQuick},
	}
}

// doceditQuick fits `reproduce --task docedit --preset quick` (3 RL
// seeds) in about 30 minutes on 2 cores. Its level is easy: documents of
// 12–24 words with one or two edits, every copy of which the conversation
// carries (the draft, each current document the environment shows); at
// the default level (30–60 words, up to five edits) the run took 38
// minutes with the budgets of the time, and a 0.9M-parameter policy
// must quote far more.
//
// A docedit step costs about 1.45× mathchat's (the policy's sequences
// carry the draft and each current document, the simulator's the target,
// the draft and the edits). Measured as CPU seconds on the shared 2-core
// machine (upper bounds of an idle one's wall time ×2), the policy's SFT
// step is 0.70 s (150 steps 117.6 s, 10 steps 20.1 s, same tokenizer).
// At mathchat's quick budgets (1500 and 700 SFT steps at 0.33 and 0.6 s,
// 20 RL iterations, 500 evaluation episodes; about 30 minutes) docedit
// would take about 45, so each budget is about two-thirds of mathchat's.
// Estimated stages, at 1.45× mathchat's costs:
//
//   - logs (16000 conversations) and tokenizer: about 1.5 minutes;
//   - base SFT 1000 steps: about 8 minutes (0.48 s a step);
//   - simulator SFT 450 steps: about 6.5 minutes (0.87 s a step);
//   - 12 RL iterations per arm and seed, 12 runs: about 12 minutes
//     (mathchat's 20 iterations: about 4.6 minutes a seed for the four
//     arms);
//   - 300 evaluation episodes for each of 13 policies, the same 300
//     held-out instances the scripted agents and the untouched draft
//     (BLEU 60.1) are reported on, and the report: about 1.5 minutes.
var doceditQuick = TaskSizing{
	Level:          "easy",
	PolicySFTSteps: 1000, SimSFTSteps: 450,
	RLIterations: 12,
	EvalEpisodes: 300,
}

// For is p as the task named taskName runs it ("docedit:easy": its family
// before the first colon): p with the family's own sizing for this preset
// put over it, or p itself for a family without one.
func (p Preset) For(taskName string) Preset {
	s, ok := taskSizings()[p.Name][task.Family(taskName)]
	if !ok {
		return p
	}
	if s.Level != "" {
		p.Level = s.Level
	}
	if s.PolicySFTSteps > 0 {
		p.PolicySFT = withSFTSteps(p.PolicySFT, s.PolicySFTSteps)
	}
	if s.SimSFTSteps > 0 {
		p.SimSFT = withSFTSteps(p.SimSFT, s.SimSFTSteps)
	}
	if s.RLIterations > 0 {
		p = p.WithRLIterations(s.RLIterations)
	}
	if s.EvalEpisodes > 0 {
		p.EvalEpisodes = s.EvalEpisodes
	}
	return p
}

// withSFTSteps is c with n steps, its checkpoints and warm-up derived as
// sft derives them.
func withSFTSteps(c train.SFTConfig, n int) train.SFTConfig {
	return sft(n, c.BatchSize, c.LR, c.EvalEvery)
}
