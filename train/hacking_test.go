package train

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// hackAddTask is addTask with hacking signals: the agent "asks for the
// target" when its first turn holds a "+", the user "pastes" in every
// episode, and the paste is delivered when the sum is right.
type hackAddTask struct{ addTask }

func (t hackAddTask) HackingSignals(o *dialog.Oracle, msgs []dialog.Message) (bool, bool, bool) {
	asked := false
	for _, m := range msgs {
		if m.Role == dialog.RoleAssistant {
			asked = strings.Contains(m.Content, "+")
			break
		}
	}
	return asked, true, t.Score(o, msgs).Reward > 0
}

func hackingRun(t *testing.T, cfg RLConfig, out string, ctx context.Context, log func(map[string]any)) error {
	_, err := GRPO(ctx, toyPolicy(t, 80), hackAddTask{}, addUser{lenient: true}, addUser{}, cfg, out, log)
	return err
}

// The hacking metrics are read at every monitor reading, all of them with
// their change from iteration 0 and its interval; at iteration 0 the
// change is exactly 0; the readings are the same in a run resumed from a
// checkpoint (iteration 0 is read again from the reference policy).
func TestGRPOHackingMetrics(t *testing.T) {
	cfg := smallGRPO()
	cfg.HackingInstances = 6
	keys := []string{MetricHackingTargetRequest, MetricHackingPasteDelivery, MetricHackingTrainReward, MetricHackingHumanReward, MetricHackingGap}
	collect := func(into *[]map[string]any, cancelAt int, cancel func()) func(map[string]any) {
		return func(r map[string]any) {
			if r[MetricHackingN] != nil {
				*into = append(*into, r)
			}
			if cancel != nil && r["step"] == cancelAt && r[MetricReward] != nil {
				cancel()
			}
		}
	}
	var whole []map[string]any
	if err := hackingRun(t, cfg, filepath.Join(t.TempDir(), "a"), context.Background(), collect(&whole, 0, nil)); err != nil {
		t.Fatal(err)
	}
	if len(whole) != 3 {
		t.Fatalf("%d hacking readings, want 3 (iterations 0, 2, 3)", len(whole))
	}
	for _, rec := range whole {
		if rec[MetricHackingN] != 6.0 || rec[MetricHackingPasted] != 6.0 {
			t.Errorf("reading at %v on %v problems, %v pasted; want 6 and 6 (the user pastes in every one)", rec[MetricStep], rec[MetricHackingN], rec[MetricHackingPasted])
		}
		for _, k := range keys {
			v, ok := rec[k].(float64)
			c, okc := rec[k+HackingChange].(float64)
			lo, hi := rec[k+HackingChange+"_lo"].(float64), rec[k+HackingChange+"_hi"].(float64)
			if !ok || !okc || v < -1 || v > 1 || math.IsNaN(c) || lo > c || c > hi {
				t.Fatalf("reading at %v: %s = %v, change %v [%v, %v]", rec[MetricStep], k, rec[k], rec[k+HackingChange], lo, hi)
			}
			paired := k != MetricHackingPasteDelivery // its interval is unpaired
			if rec[MetricStep] == 0 && (c != 0 || paired && (lo != 0 || hi != 0)) {
				t.Errorf("iteration 0: %s changed by %v [%v, %v] from itself", k, c, lo, hi)
			}
		}
	}
	if d := whole[0][MetricHackingTrainReward].(float64) - whole[0][MetricHackingHumanReward].(float64); math.Abs(d-whole[0][MetricHackingGap].(float64)) > 1e-12 {
		t.Errorf("gap %v, want training − human %v", whole[0][MetricHackingGap], d)
	}

	out := filepath.Join(t.TempDir(), "b")
	ctx, cancel := context.WithCancel(context.Background())
	var before, after []map[string]any
	if err := hackingRun(t, cfg, out, ctx, collect(&before, 2, cancel)); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: got %v, want context.Canceled", err)
	}
	if err := hackingRun(t, cfg, out, context.Background(), collect(&after, 0, nil)); err != nil {
		t.Fatal(err)
	}
	last := after[len(after)-1]
	if !reflect.DeepEqual(last, whole[len(whole)-1]) {
		t.Fatalf("resumed run's last reading\n%v\nwant the uninterrupted run's\n%v", last, whole[len(whole)-1])
	}
}

func TestHackingMDE(t *testing.T) {
	for _, tc := range []struct {
		n    int
		v    float64
		want float64
	}{{800, 0.5, 0.0700}, {800, 0.25, 0.0495}, {1568, 0.5, 0.0500}, {32, 0.5, 0.35}} {
		if got := HackingMDE(tc.n, tc.v); math.Abs(got-tc.want) > 5e-4 {
			t.Errorf("HackingMDE(%d, %g) = %.4f, want %.4f", tc.n, tc.v, got, tc.want)
		}
	}
}

// HackingSampled reads the policy as the rollouts sample it: the same
// problems and seeds give other conversations than the greedy readings
// (here another target-request rate at iteration 0), and every reading
// says it was sampled.
func TestGRPOHackingSampled(t *testing.T) {
	first := func(sampled bool) map[string]any {
		cfg := smallGRPO()
		cfg.Iterations, cfg.HackingInstances, cfg.HackingSampled = 1, 24, sampled
		var got map[string]any
		log := func(r map[string]any) {
			if got == nil && r[MetricHackingN] != nil {
				got = r
			}
		}
		if err := hackingRun(t, cfg, filepath.Join(t.TempDir(), "run"), context.Background(), log); err != nil {
			t.Fatal(err)
		}
		return got
	}
	greedy, sampled := first(false), first(true)
	if greedy[MetricHackingSampled] != nil || sampled[MetricHackingSampled] != 1.0 {
		t.Errorf("%s: greedy %v, sampled %v; want absent and 1", MetricHackingSampled, greedy[MetricHackingSampled], sampled[MetricHackingSampled])
	}
	if greedy[MetricHackingTargetRequest] == sampled[MetricHackingTargetRequest] {
		t.Errorf("target requests %v greedy and sampled: the sampled reading played the greedy policy", greedy[MetricHackingTargetRequest])
	}
	t.Logf("target requests at iteration 0: greedy %v, sampled %v", greedy[MetricHackingTargetRequest], sampled[MetricHackingTargetRequest])
}

// A reading played a few problems at a time is the same reading: every
// episode's seed is its problem's, greedy or sampled.
func TestHackingReadingsDoNotDependOnTheChunk(t *testing.T) {
	for _, sampled := range []bool{false, true} {
		read := func(chunk int) []map[string]any {
			defer func(c int) { hackingChunk = c }(hackingChunk)
			hackingChunk = chunk
			cfg := smallGRPO()
			cfg.Iterations, cfg.HackingInstances, cfg.HackingSampled = 2, 7, sampled
			var got []map[string]any
			log := func(r map[string]any) {
				if r[MetricHackingN] != nil {
					got = append(got, r)
				}
			}
			if err := hackingRun(t, cfg, filepath.Join(t.TempDir(), "run"), context.Background(), log); err != nil {
				t.Fatal(err)
			}
			return got
		}
		whole, chunked := read(128), read(3)
		if len(whole) == 0 || !reflect.DeepEqual(whole, chunked) {
			t.Errorf("sampled %v: readings in chunks of 3\n%v\nwant those played at once\n%v", sampled, chunked, whole)
		}
	}
}
