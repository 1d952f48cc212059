package train

import (
	"context"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/rollout"
)

// monitorRecords runs cfg's GRPO from the toy policy after sft SFT steps
// and returns its monitor records in order.
func monitorRecords(t *testing.T, cfg RLConfig, sft int, tk rollout.Task, human dialog.User) []map[string]any {
	t.Helper()
	var mons []map[string]any
	_, err := GRPO(context.Background(), toyPolicy(t, sft), tk, addUser{lenient: true}, human, cfg, t.TempDir(), func(r map[string]any) {
		if r[MetricMonitorTrainReward] != nil {
			mons = append(mons, r)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return mons
}

// With MonitorSampled the monitor also reads the policy sampled at the
// rollouts' temperature on the same problems: a partly trained policy,
// which is stochastic, succeeds at another rate sampled than greedy; with
// rollouts at a temperature near 0 (greedy ones are refused: every group
// would be flat), the two readings are equal.
func TestMonitorSampledReadsTheRolloutsDecoding(t *testing.T) {
	cfg := smallGRPO()
	cfg.Iterations, cfg.MonitorEvery, cfg.MonitorInstances, cfg.MonitorSampled = 1, 1, 24, true
	mons := monitorRecords(t, cfg, 30, addTask{}, addUser{})
	if len(mons) != 2 {
		t.Fatalf("%d monitor readings, want 2 (iterations 0 and 1)", len(mons))
	}
	for _, rec := range mons {
		checkKeys(t, rec, MetricMonitorHumanSuccess, MetricMonitorSampledSuccess, "monitor/human_sampled_reward", "monitor/human_sampled_turns")
	}
	g, s := mons[0][MetricMonitorHumanSuccess].(float64), mons[0][MetricMonitorSampledSuccess].(float64)
	if g == s {
		t.Errorf("iteration 0: sampled success %v equals greedy's %v: the sampled reading did not sample", s, g)
	}
	cfg.Gen.Temperature = 1e-3
	mons = monitorRecords(t, cfg, 30, addTask{}, addUser{})
	if g, s := mons[0][MetricMonitorHumanSuccess], mons[0][MetricMonitorSampledSuccess]; g != s {
		t.Errorf("near-greedy rollouts: the sampled reading %v differs from the greedy one %v", s, g)
	}
	cfg.Gen.Temperature = 0
	if err := cfg.Validate(); err == nil {
		t.Error("greedy rollouts: no error")
	}
	// Off by default: no sampled reading.
	cfg = smallGRPO()
	cfg.Iterations, cfg.MonitorEvery = 1, 1
	if rec := monitorRecords(t, cfg, 30, addTask{}, addUser{})[0]; rec[MetricMonitorSampledSuccess] != nil {
		t.Errorf("default monitor recorded %s = %v", MetricMonitorSampledSuccess, rec[MetricMonitorSampledSuccess])
	}
}

// splitTask records the test-split instances it is asked for.
type splitTask struct {
	addTask
	mu   sync.Mutex
	test []int
}

func (s *splitTask) Instance(split string, index int) (*dialog.Oracle, *dialog.View, error) {
	if split == "test" {
		s.mu.Lock()
		s.test = append(s.test, index)
		s.mu.Unlock()
	}
	return s.addTask.Instance(split, index)
}

// drawUser is addUser that records each session's first draw of its
// generator, which identifies the episode's user seed.
type drawUser struct {
	addUser
	mu    *sync.Mutex
	draws map[string][]uint64 // by problem id, in session order
}

func (u drawUser) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	u.mu.Lock()
	u.draws[o.ID] = append(u.draws[o.ID], rng.Uint64())
	u.mu.Unlock()
	return u.addUser.NewSession(o, rng)
}

// MonitorOn places the monitor on eval.ValidationSlice: it plays the
// slice's first problems (test split from 20000) with the slice's user
// seeds for the run's seed, whatever the RL seed; the default monitor
// plays from MonitorStart with users of the RL seed's own.
func TestMonitorOnValidationSlice(t *testing.T) {
	const runSeed, n = 7, 3
	play := func(rlSeed uint64, on bool) ([]int, map[string][]uint64) {
		cfg := smallGRPO()
		cfg.Iterations, cfg.MonitorEvery, cfg.MonitorInstances, cfg.MonitorStart, cfg.Seed = 1, 1, n, 100, rlSeed
		if on {
			cfg.MonitorOn(eval.ValidationSlice, runSeed)
		}
		tk := &splitTask{}
		u := drawUser{mu: &sync.Mutex{}, draws: map[string][]uint64{}}
		monitorRecords(t, cfg, 30, tk, u)
		return tk.test, u.draws
	}
	wantDraws := func(seed uint64, start int) map[string][]uint64 {
		out := map[string][]uint64{}
		for i := start; i < start+n; i++ {
			d := rollout.UserRand(rollout.EpisodeSeed(seed, i, 0)).Uint64()
			o, _, _ := addTask{}.Instance("test", i)
			out[o.ID] = []uint64{d, d} // two readings, the same users
		}
		return out
	}
	s := eval.ValidationSlice
	var want []int
	for range 2 * 2 { // two readings, each against both users
		for i := range n {
			want = append(want, s.Start+i)
		}
	}
	for _, rlSeed := range []uint64{5, 6} {
		idx, draws := play(rlSeed, true)
		if !reflect.DeepEqual(idx, want) {
			t.Errorf("RL seed %d: the monitor played test problems %v, want %v", rlSeed, idx, want)
		}
		if w := wantDraws(s.Seed(runSeed), s.Start); !reflect.DeepEqual(draws, w) {
			t.Errorf("RL seed %d: the human proxy's users drew %v, want the validation slice's %v", rlSeed, draws, w)
		}
	}
	idx, draws := play(5, false)
	if idx[0] != 100 {
		t.Errorf("default monitor played from problem %d, want MonitorStart 100", idx[0])
	}
	if w := wantDraws(5^seedMonitor, 100); !reflect.DeepEqual(draws, w) {
		t.Errorf("default monitor's users drew %v, want the RL seed's %v", draws, w)
	}
}
