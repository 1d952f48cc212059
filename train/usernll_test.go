package train

import (
	"math"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/chatlm/chatlmtest"
	"github.com/calibrl/calibrl/dialog"
)

// UserNLL scores the users' turns as the simulator renders them: with its
// oracle context the sequences differ from the blind ablation's, and an
// episode it cannot render is left out rather than failing.
func TestUserNLLRendersAsTheSimulatorSees(t *testing.T) {
	eps := chatlmtest.AddEpisodes(12, 3)
	m := chatlmtest.TinyModel(t, eps)
	oracle, blind := &chatlm.User{Model: m, Oracle: true}, &chatlm.User{Model: m}
	var seqs []chatlm.Sequence
	for i := range eps {
		s, err := m.UserSequence(&eps[i], true, nil)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, s)
	}
	got, want := UserNLL(oracle, eps), MeanNLL(m, seqs)
	if math.IsNaN(got) || got != want {
		t.Fatalf("UserNLL %v, want the oracle sequences' MeanNLL %v", got, want)
	}
	if b := UserNLL(blind, eps); b == got {
		t.Errorf("blind simulator's NLL %v equals the oracle one's: not rendered as each sees it", b)
	}
	odd := eps[0]
	odd.Messages = append([]dialog.Message{{Role: dialog.Role("narrator"), Content: "meanwhile"}}, odd.Messages...)
	if _, err := m.UserSequence(&odd, true, nil); err == nil {
		t.Fatal("an episode with a narrator renders: the test needs one that does not")
	}
	if with := UserNLL(oracle, append(eps, odd)); with != got {
		t.Errorf("with an episode it cannot render: %v, want %v (left out)", with, got)
	}
}
