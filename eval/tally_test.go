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
			ep.Metrics = map[string]float64{"bleu": 100 * rng.Float64(), "chrf": 50 + 50*rng.Float64(), "delivered": float64(rng.IntN(2))}
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
	if *got.NoDelivery != *want.NoDelivery {
		t.Errorf("no delivery: %v, want %v", *got.NoDelivery, *want.NoDelivery)
	}
	got.BLEU, got.ChrF, want.BLEU, want.ChrF = nil, nil, nil, nil
	got.NoDelivery, want.NoDelivery = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tally %+v\nSummarize %+v", got, want)
	}
	if s := NewTally(1).Summary(); s.Episodes != 0 || s.Seed != 1 {
		t.Errorf("empty tally: %+v", s)
	}
}

// NoDelivery is the share of episodes whose task metric "delivered" is 0,
// and absent for tasks that do not record it.
func TestNoDelivery(t *testing.T) {
	var eps []dialog.Episode
	for _, d := range []float64{1, 0, 0, 1, 1, 1, 0, 1} {
		eps = append(eps, dialog.Episode{Metrics: map[string]float64{"bleu": 50 * d, "delivered": d}})
	}
	s := Summarize(eps, 1)
	if s.NoDelivery == nil || *s.NoDelivery != 3.0/8 {
		t.Errorf("no delivery %v, want 3/8", s.NoDelivery)
	}
	tally := NewTally(1)
	for i := range eps {
		tally.Add(&eps[i])
	}
	if got := tally.Summary().NoDelivery; got == nil || *got != 3.0/8 {
		t.Errorf("tally: no delivery %v, want 3/8", got)
	}
	if s := Summarize([]dialog.Episode{{Success: true}}, 1); s.NoDelivery != nil {
		t.Errorf("a task without the metric: no delivery %v", *s.NoDelivery)
	}
}
