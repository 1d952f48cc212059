package train

import (
	"context"
	"math"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
)

// scriptedSelector returns scores from a list, one per evaluation (the
// starting weights' first), each with standard error se.
func scriptedSelector(scores []float64, se float64) *Selector {
	i := 0
	return &Selector{Name: "scripted", Score: func(context.Context, *chatlm.Model) (float64, float64, error) {
		s := scores[min(i, len(scores)-1)]
		i++
		return s, se, nil
	}}
}

// SFTSelect keeps the weights the selector scores lowest, not those of
// the lowest validation NLL; its result names their step and its
// validation NLL is theirs (as the evaluations logged it). Scores the
// selector cannot tell apart (within a standard error) leave the choice
// to the NLL, which is SFT's.
func TestSFTSelectKeepsTheSelectorsChoice(t *testing.T) {
	cfg := smallSFT() // 60 steps, evaluations at 0, 10, …, 60
	m0, seqs := toySFT(t)
	plain, err := SFT(context.Background(), m0, seqs, cfg, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		scores   []float64
		se       float64
		wantStep int
	}{
		{"lowest score at step 20", []float64{0.9, 0.5, 0.1, 0.4, 0.3, 0.35, 0.3}, 0.01, 20},
		{"ties go to the NLL", []float64{0.9, 0.5, 0.1, 0.4, 0.3, 0.35, 0.3}, 1, plain.BestStep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := toySFT(t)
			nllAt := map[int]float64{}
			log := func(rec map[string]any) {
				if v, ok := rec[MetricSFTValNLL].(float64); ok {
					nllAt[rec[MetricStep].(int)] = v
				}
			}
			res, err := SFTSelect(context.Background(), m, seqs, cfg, t.TempDir(), log, scriptedSelector(tc.scores, tc.se))
			if err != nil {
				t.Fatal(err)
			}
			if res.BestStep != tc.wantStep {
				t.Fatalf("kept step %d, want %d (NLL's choice %d)", res.BestStep, tc.wantStep, plain.BestStep)
			}
			if res.Steps != plain.Steps {
				t.Errorf("steps %d, SFT's %d: the selector must not change when training stops", res.Steps, plain.Steps)
			}
			if math.Abs(res.ValNLL-nllAt[tc.wantStep]) > 1e-9 {
				t.Errorf("result NLL %v, the kept step's %v", res.ValNLL, nllAt[tc.wantStep])
			}
			if got := MeanNLL(m, valOf(seqs, cfg)); math.Abs(got-nllAt[tc.wantStep]) > 1e-6 {
				t.Errorf("model left with validation NLL %v, the kept step's %v", got, nllAt[tc.wantStep])
			}
			if res.Selected == nil || *res.Selected != tc.scores[tc.wantStep/cfg.EvalEvery] {
				t.Errorf("selected score %v, want %v", res.Selected, tc.scores[tc.wantStep/cfg.EvalEvery])
			}
		})
	}
}

func valOf(seqs []chatlm.Sequence, cfg SFTConfig) []chatlm.Sequence {
	_, val := splitSequences(seqs, cfg.ValFraction, cfg.Seed)
	return val
}

// better: the score decides beyond the larger standard error, the NLL
// within it.
func TestSelectorBetter(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		score, se, nll            float64
		bestScore, bestSE, bestNL float64
		want                      bool
	}{
		{"clearly lower score", 0.1, 0.01, 9, 0.5, 0.01, 1, true},
		{"clearly higher score", 0.5, 0.01, 0.1, 0.1, 0.01, 9, false},
		{"tie, lower NLL", 0.11, 0.05, 1, 0.1, 0.01, 2, true},
		{"tie, higher NLL", 0.09, 0.01, 3, 0.1, 0.05, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := better(tc.score, tc.se, tc.nll, tc.bestScore, tc.bestSE, tc.bestNL); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
