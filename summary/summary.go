// Package summary defines the records a run folder's reports are made
// from: the rows of summary.json (the primary evaluation) and
// summary-NAME.json (others, such as the greedy one), and the policies'
// sim-to-real gaps under fidelity/: what reproduce writes and the report
// renderer and the horizon study read, defined once.
package summary

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// Row is one arm's line of summary.json: for an RL arm, the mean over its
// RL seeds, each seed's own figures and the paper's claims that it beats
// another arm.
type Row struct {
	Arm string `json:"arm"`
	// Decoding is how the policies played the evaluation: "sampled" (at
	// the RL rollouts' temperature; summary.json) or "greedy"
	// (summary-greedy.json).
	Decoding string `json:"decoding"`
	Figures
	// Seeds holds each RL seed's figures, by seed index (none for the
	// base, which has no RL seed).
	Seeds []SeedRow `json:"seeds,omitempty"`
	// Comparisons are the paper's claims that this arm does better than
	// another, each measured on paired evaluations.
	Comparisons []Comparison `json:"comparisons,omitempty"`
}

// Figures are one evaluation's headline numbers, or their mean over RL
// seeds.
type Figures struct {
	// Success (mathchat) or BLEU (docedit) against the human proxy on the
	// held-out split, with its 95% interval. Over several seeds the
	// interval of the mean is Wilson's with n the number of problems
	// (conservative: a problem's mean over seeds, in [0, 1], has variance
	// at most p(1−p)), or, for BLEU, Student's over the problems' means.
	Success *float64   `json:"success,omitempty"`
	BLEU    *float64   `json:"bleu,omitempty"`
	CI95    [2]float64 `json:"ci95"`
	Turns   float64    `json:"turns"`
	Tokens  float64    `json:"tokens"`
	// NoDelivery is the fraction of held-out episodes in which the agent
	// delivered nothing (eval.Summary's), for tasks that record it.
	NoDelivery *float64 `json:"no_delivery,omitempty"`
	// TrainReward is the last reward-hacking monitor's mean reward against
	// the arm's training user (nil for the base, which has none).
	TrainReward *float64 `json:"train_reward"`
	// RealReward is the mean reward against the human proxy on the
	// held-out split.
	RealReward float64 `json:"real_reward"`
	// Gap is TrainReward − the monitor's human reward on the same
	// instances: how much the training user flatters the policy.
	Gap *float64 `json:"gap"`
}

// SeedRow is one RL seed's figures.
type SeedRow struct {
	// Seed is the seed index (checkpoints/ARM/seed-K), RLSeed the seed it
	// trained with (reproduce.RLSeed(run seed, K)).
	Seed   int    `json:"seed"`
	RLSeed uint64 `json:"rl_seed"`
	Figures
}

// Comparison is one claim of the paper, "Arm > Than", on the held-out
// evaluations.
type Comparison struct {
	Claim string `json:"claim"`
	Than  string `json:"than"`
	// Paper is the paper's two figures ("91.5 > 85.0"), or why it has none.
	Paper string `json:"paper"`
	// Difference is the arm's score minus Than's, averaged over problems
	// and RL seeds, with its paired bootstrap 95% interval.
	Difference float64    `json:"difference"`
	CI95       [2]float64 `json:"ci95"`
	// Seeds is each seed index's difference (a base is the same
	// evaluation against every seed).
	Seeds []float64 `json:"seeds"`
	// Holds is whether the interval excludes 0 in the claimed direction.
	Holds bool `json:"holds"`
}

// SimToReal is one policy's sim-to-real gap on the held-out split, as
// reproduce's fidelity stage writes it (fidelity/ARM/seed-K.json,
// fidelity/base.json).
type SimToReal struct {
	Arm string `json:"arm"`
	// Seed is the RL seed index (0 for the base).
	Seed int `json:"seed"`
	// Simulator is the simulator's checkpoint, relative to the run folder
	// where it lies inside it.
	Simulator string `json:"simulator"`
	Decoding  string `json:"decoding"`
	// SimScore and HumanScore are the policy's success (BLEU for a task
	// with it) against each user; Gap = SimScore − HumanScore, paired by
	// problem and seed, with a percentile bootstrap 95% interval over the
	// problems (metric.PairedBootstrap).
	SimScore   float64    `json:"sim_score"`
	HumanScore float64    `json:"human_score"`
	Gap        float64    `json:"gap"`
	CI95       [2]float64 `json:"ci95"`
	Problems   int        `json:"problems"`
	// Delta[t] is the total-variation distance between the simulator's and
	// the human proxy's user acts at user turn t in these conversations
	// (fidelity.ActsByTurn), DeltaMean its mean: δ under this policy.
	Delta     []float64 `json:"delta"`
	DeltaMean float64   `json:"delta_mean"`
	// HumanFrom is the file the human side was read from, relative to the
	// run folder: the evaluation's, or this stage's own when it played it.
	HumanFrom string `json:"human_from"`
}

// Value is the headline figure: BLEU where the task has it, else success
// (NaN when the row has neither).
func (f Figures) Value() float64 {
	switch {
	case f.BLEU != nil:
		return *f.BLEU
	case f.Success != nil:
		return *f.Success
	}
	return math.NaN()
}

// HumanMonitor is the reward-hacking monitor's human-proxy reward
// (training-user reward − gap), or nil for an arm without a monitor.
func (f Figures) HumanMonitor() *float64 {
	if f.TrainReward == nil || f.Gap == nil {
		return nil
	}
	v := *f.TrainReward - *f.Gap
	return &v
}

// Read reads a summary file's rows, refusing a file that holds none.
func Read(path string) ([]Row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	var rows []Row
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("summary: %s: want an array of arm rows: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("summary: %s holds no arm rows", path)
	}
	return rows, nil
}
