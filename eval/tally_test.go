package eval

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

func TestTallyMatchesSummarize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ends := []dialog.EndReason{dialog.Solved, dialog.UserEnded, dialog.MaxTurns}
	var eps []dialog.Episode
	for i := range 537 {
		ep := dialog.Episode{Task: "docedit", Agent: "a", User: "human", Split: "test", Turns: 1 + rng.IntN(6),
			Reward: rng.Float64()*2 - 0.5, Success: rng.IntN(3) == 0, End: ends[rng.IntN(3)], Tokens: rng.IntN(400),
			Messages: []dialog.Message{{Role: dialog.RoleUser, Tokens: 5}, {Role: dialog.RoleAssistant, Tokens: rng.IntN(50)}}}
		if i%4 != 0 {
			ep.Metrics = map[string]float64{"bleu": 100 * rng.Float64(), "chrf": 50 + 50*rng.Float64()}
		}
		eps = append(eps, ep)
	}
	want := Summarize(eps, 9)
	tally := NewTally(9)
	for i := range eps {
		tally.Add(&eps[i])
	}
	got := tally.Summary()
	close := func(name string, a, b float64) {
		if math.Abs(a-b) > 1e-12*math.Max(1, math.Abs(b)) {
			t.Errorf("%s: tally %v, Summarize %v", name, a, b)
		}
	}
	close("reward ci lo", got.RewardCI95[0], want.RewardCI95[0])
	close("reward ci hi", got.RewardCI95[1], want.RewardCI95[1])
	for k, v := range want.Metrics {
		close(k, got.Metrics[k], v)
	}
	// Everything but the running-variance intervals is exactly equal.
	got.RewardCI95, want.RewardCI95 = [2]float64{}, [2]float64{}
	got.Metrics, want.Metrics = nil, nil
	if *got.BLEU != *want.BLEU || *got.ChrF != *want.ChrF {
		t.Errorf("bleu/chrf: %v %v, want %v %v", *got.BLEU, *got.ChrF, *want.BLEU, *want.ChrF)
	}
	got.BLEU, got.ChrF, want.BLEU, want.ChrF = nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tally %+v\nSummarize %+v", got, want)
	}
	if s := NewTally(1).Summary(); s.Episodes != 0 || s.Seed != 1 {
		t.Errorf("empty tally: %+v", s)
	}
}
