package fidelity

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
)

// validationSetup is mathchat:easy's human proxy, naive simulator and 40
// validation-slice conversations of its scripted profiles with the proxy.
func validationSetup(t *testing.T) (human, naive dialog.User, eps []dialog.Episode) {
	t.Helper()
	tk, err := task.Lookup("mathchat:easy")
	if err != nil {
		t.Fatal(err)
	}
	if human, err = tk.User("human"); err != nil {
		t.Fatal(err)
	}
	if naive, err = tk.User("naive"); err != nil {
		t.Fatal(err)
	}
	ft, ok := tk.(Task)
	if !ok {
		t.Fatal("mathchat is not a fidelity.Task")
	}
	if eps, err = ValidationLogs(context.Background(), ft, nil, human, 40, 1, 6); err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		if ep.Split != "test" || ep.Index < 20000 {
			t.Fatalf("validation log %s: split %s problem %d, want the validation slice (test split from 20000)", ep.ID, ep.Split, ep.Index)
		}
	}
	return human, naive, eps
}

// The human proxy measured against itself is ≈ 0 apart per history: its
// excess over the split baseline lies within three standard errors of 0,
// while the plug-in floor (two sets of the proxy) is clearly above 0, so
// the baseline is what makes ≈ 0 meaningful. The naive simulator, on the same histories, is clearly
// farther: an excess above 0.1 and five of its standard errors above the
// proxy's.
func TestHistoryProxyAgainstItselfAndNaive(t *testing.T) {
	human, naive, eps := validationSetup(t)
	cfg := HistoryConfig{Samples: 16, Seed: 7}
	self, err := MeasureHistories(context.Background(), "human", human, human, eps, cfg)
	if err != nil {
		t.Fatal(err)
	}
	nv, err := MeasureHistories(context.Background(), "naive", naive, human, eps, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("human vs human: %s", self)
	t.Logf("naive vs human: %s", nv)
	if self.Histories < 100 || self.Histories != nv.Histories {
		t.Fatalf("histories: %d and %d, want the same ≥ 100", self.Histories, nv.Histories)
	}
	if self.Floor < 0.01 || self.Floor < 3*self.ExcessSE {
		t.Errorf("proxy floor %.3f: the plug-in bias at K=16 should be visible (≥ 0.01 and 3 se)", self.Floor)
	}
	if self.ExcessSE <= 0 || self.ExcessSE > 0.05 {
		t.Errorf("proxy excess se %.4f, want in (0, 0.05]", self.ExcessSE)
	}
	if math.Abs(self.Excess) > 3*self.ExcessSE {
		t.Errorf("proxy against itself: excess %+.4f, want within 3 se (%.4f) of 0", self.Excess, self.ExcessSE)
	}
	if nv.Excess < 0.1 || nv.Excess < self.Excess+5*nv.ExcessSE {
		t.Errorf("naive excess %+.3f ± %.3f, proxy's %+.3f: want naive > 0.1 and 5 se above", nv.Excess, nv.ExcessSE, self.Excess)
	}
	if self.HumanFacts == nil || self.HumanFacts.Accuracy == nil || *self.HumanFacts.Accuracy < 0.99 {
		t.Errorf("proxy's stated facts %+v: the proxy states only the problem's numbers", self.HumanFacts)
	}
	again, err := MeasureHistories(context.Background(), "human", human, human, eps, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(self, again) {
		t.Errorf("same seed, other report:\n%+v\n%+v", self, again)
	}
}

// misstateUser answers like a person who gives the hidden fact with its
// digits swapped ("Eva works for 30 days"): its act is the proxy's, its
// fact is false.
type misstateUser struct{ value string }

func (u misstateUser) NewSession(*dialog.Oracle, *rand.Rand) dialog.UserSession { return u }
func (u misstateUser) Open(context.Context) (string, error) {
	return "Help me. " + mathOracle.Opening, nil
}
func (u misstateUser) Reply(_ context.Context, h []dialog.Message) (string, bool, error) {
	return "Eva works for " + u.value + " days in total.", false, nil
}

// Stated facts are checked against the problem: a right number counts
// true, a misstated one false, and the counts are per draw.
func TestHistoryFactsCopyAccuracy(t *testing.T) {
	eps := handLogs()[:1] // three user turns: opening, fact, accept
	for _, tc := range []struct {
		value    string
		wantTrue int
	}{{"3", 2}, {"30", 0}} {
		u := misstateUser{tc.value}
		rep, err := MeasureHistories(context.Background(), "u", u, u, eps, HistoryConfig{Samples: 4})
		if err != nil {
			t.Fatal(err)
		}
		// Per draw: the opening states 17 and 2 (true); each of the two
		// replies states one number.
		f := rep.SimFacts
		if f == nil || f.Stated != 4*(2+2) || f.True != 4*(2+tc.wantTrue) {
			t.Errorf("value %s: facts %+v, want %d stated, %d true", tc.value, f, 16, 4*(2+tc.wantTrue))
		}
		if rep.Excess != 0 || rep.Distance != 0 {
			t.Errorf("value %s: a deterministic user against itself: distance %v excess %v, want 0", tc.value, rep.Distance, rep.Excess)
		}
	}
}

// The clustered standard error on hand-checkable clusters.
func TestClusteredSE(t *testing.T) {
	for _, tc := range []struct {
		name string
		sums []float64
		n    []int
		want float64
	}{
		// Cluster means 0 and 1, mean 0.5: residuals −1, +1 over 4
		// histories, √(2·2/1)/4.
		{"two clusters", []float64{0, 2}, []int{2, 2}, math.Sqrt(4) / 4},
		{"one cluster", []float64{3}, []int{3}, 0},
		{"empty cluster ignored", []float64{0, 2, 0}, []int{2, 2, 0}, math.Sqrt(4) / 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			total, sum := 0, 0.0
			for c := range tc.n {
				total += tc.n[c]
				sum += tc.sums[c]
			}
			if got := clusteredSE(tc.sums, tc.n, sum/float64(total)); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHistoryTableAndErrors(t *testing.T) {
	if _, err := MeasureHistories(context.Background(), "x", misstateUser{"3"}, misstateUser{"3"}, nil, HistoryConfig{}); err == nil {
		t.Error("no conversations: want an error")
	}
	if _, err := MeasureHistories(context.Background(), "x", misstateUser{"3"}, misstateUser{"3"}, handLogs(), HistoryConfig{Samples: maxSamples + 1}); err == nil {
		t.Error("samples past the limit: want an error")
	}
	rep, err := MeasureHistories(context.Background(), "x", misstateUser{"3"}, misstateUser{"3"}, handLogs(), HistoryConfig{Samples: 2})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteHistoryTable(&b, []HistoryReport{rep}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"excess ± se", "x", "user turn t"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
