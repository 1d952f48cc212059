package preset

import (
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/task/level"
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
	// RLLR is GRPO's learning rate (Preset.RL.LR), and the other
	// optimizers' where the preset sets none for them.
	RLLR float64
}

// taskSizings holds, by preset and task family, the families that size
// themselves.
func taskSizings() map[string]map[string]TaskSizing {
	// standard keeps quick's sizing with its own RL factor.
	doceditStandard := doceditQuick
	doceditStandard.RLIterations *= standardRLFactor
	return map[string]map[string]TaskSizing{
		"quick":    {"docedit": doceditQuick, "support": supportQuick},
		"standard": {"docedit": doceditStandard, "support": supportQuick},
	}
}

// doceditQuick fits `reproduce --task docedit --preset quick` (3 RL
// seeds) in about 30 minutes on 2 cores. Its level is easy: documents of
// 12–24 words with one or two edits, every copy of which the conversation
// carries (the draft, each current document the environment shows). At
// the default level (30–60 words, up to five edits), which quick ran
// before, a docedit SFT step cost about 1.45× mathchat's (its policy and
// simulator sequences, read with the easy level's tokenizer, 361 and 445
// tokens: 1.29× and 1.22× mathchat's) and the run took 38 minutes with
// the budgets of the time.
//
// At the easy level a step costs about as much as mathchat's default
// level's. Sequences, cut at the 512-token context (all 16000 quick logs
// of docedit:easy, 4000 of mathchat, each with its own 768-id
// tokenizer): the policy's 325 tokens against 279 (1.16×), the
// simulator's 369 against 364 (1.01×). Timed as CPU seconds on the shared
// 2-core machine (upper bounds; 150 and 10 steps, or 80 and 10, with one
// tokenizer): a policy step 0.70 s against 0.69. The budgets below are
// docedit's own, chosen to fit 30 minutes rather than to converge
// (mathchat's quick budgets, 3000 and 1500 SFT steps and 30 RL
// iterations, take about an hour; cut to 1500 and 700 steps its base fell
// from 0.690 to 0.198): whether 1200 base steps clone a policy above the
// untouched draft's BLEU (60.1 on the 300 held-out instances, the set the
// scripted agents are reported on and the evaluation uses) is for the
// timed run to show. Estimated stages, from mathchat's step costs (0.33 s
// a policy step, 0.6 s a simulator step; RL about 4.6 minutes a seed for
// 20 iterations of the four arms, from the README's 30-iteration run)
// times the sequence ratios:
//
//   - logs (16000 conversations) and tokenizer: about 1.5 minutes;
//   - base SFT 1200 steps: about 7.6 minutes (0.38 s a step);
//   - simulator SFT 700 steps: about 7 minutes;
//   - 16 RL iterations per arm and seed, 12 runs: about 12 minutes;
//   - 300 evaluation episodes for each of 13 policies, and the report:
//     about 1 minute.
var doceditQuick = TaskSizing{
	Level:          "easy",
	PolicySFTSteps: 1200, SimSFTSteps: 700,
	RLIterations: 16,
	EvalEpisodes: 300,
	RLLR:         preRLSettingsLR,
}

// supportQuick runs `reproduce --task support --preset quick` at the easy
// level: one goal on an account of two orders and one booking, three-digit
// ids, no user who changes their mind or holds two goals. At the default
// level (four-digit ids, a quarter of users with two goals, a quarter who
// switch) the quick budgets left a base that cannot do the task: its
// validation NLL stood at 0.433 after 3000 steps, and on the 500 held-out
// instances it succeeded on 0.002 sampled and 0.014 greedy, copying ids
// wrong ("[change booking B-5335 …]" for the user's B-5349) and repeating
// the failed call; every RL arm then stayed within 0.006 of it (28
// minutes on 2 cores, 7.5 GB peak). A base that cannot succeed gives GRPO
// no reward to compare, so the comparison says nothing. The budgets stay
// mathchat's quick ones.
var supportQuick = TaskSizing{Level: "easy", RLLR: preRLSettingsLR}

// preRLSettingsLR is quick's GRPO learning rate before each optimizer's
// was chosen on mathchat's validation problems (results/
// mathchat-quick-rlsettings/): docedit and support keep it, and train
// every optimizer at it, until a study on their own validation problems
// chooses theirs.
const preRLSettingsLR = 6e-5

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
		p.PolicySFT.Steps = s.PolicySFTSteps
	}
	if s.SimSFTSteps > 0 {
		p.SimSFT.Steps = s.SimSFTSteps
	}
	if s.RLIterations > 0 {
		p = p.WithRLIterations(s.RLIterations)
	}
	if s.EvalEpisodes > 0 {
		p.EvalEpisodes = s.EvalEpisodes
	}
	if s.RLLR > 0 {
		p.RL.LR = s.RLLR
		p.RL.RFTLR, p.RL.GreedyBaselineLR, p.RL.TurnCreditLR = 0, 0, 0
	}
	return p
}

// TaskName is the task p runs for name: name at p's level when name
// gives none (task.WithLevel: options such as ":quote" keep it), else
// name itself.
// Every command that takes a preset plays its task through TaskName, so
// that train-policy, train-sim and reproduce at one preset play the same
// level.
func (p Preset) TaskName(name string) string {
	return task.WithLevel(name, p.Level)
}

// TurnLimit is the agent's turn limit per episode p plays taskName with:
// the N of an hN level, at which the horizon study plays it, else
// p.MaxTurns, which reproduce's logs, RL and verdict play. A standalone
// evaluation of a policy p trained defaults to it, so that it plays the
// episodes the verdict does (studies that played the level's default of
// 10 turns against a verdict of 6 were not comparable with it).
func (p Preset) TurnLimit(taskName string) int {
	n, err := task.ParseName(taskName)
	if err == nil {
		if l, err := level.Parse(n.Level); err == nil && l.Horizon > 0 {
			return l.Horizon
		}
	}
	return p.MaxTurns
}
