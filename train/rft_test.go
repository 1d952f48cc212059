package train

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
)

// askRFT is askGRPO's budget for RFT: 12 iterations of 8 problems × 8
// conversations, two passes of minibatch 32 at 1e-3.
func askRFT(seed uint64) RFTConfig {
	return RFTConfig{RLConfig: askGRPO(seed, false)}
}

// learnedToAsk is the learning tests' bar for RFT and the GRPO variants
// on the ask task: the sampled held-out success at least doubles and
// ends above 0.6, and greedy decoding asks on more than 80% of held-out
// instances. (GRPO clears it: TestGRPOLearnsToAsk.)
func learnedToAsk(r askRun) bool {
	return r.sampled1 >= 2*r.sampled0 && r.sampled1 > 0.6 && r.greedy1 > 0.8
}

// runAskWith trains askBase by train and reports held-out success before
// and after, and each iteration's batch reward.
func runAskWith(t *testing.T, name string, train func(m *chatlm.Model, out string, log func(map[string]any)) error) askRun {
	t.Helper()
	m := askBase(t)
	var r askRun
	r.greedy0, r.sampled0 = askSuccess(t, m, 0, 64, 1), askSuccess(t, m, 1, 32, 4)
	err := train(m, t.TempDir(), func(rec map[string]any) {
		if v, ok := rec[MetricReward]; ok {
			r.rewards = append(r.rewards, v.(float64))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	r.greedy1, r.sampled1 = askSuccess(t, m, 0, 64, 1), askSuccess(t, m, 1, 32, 4)
	t.Logf("%s: held-out greedy success %.3f → %.3f, sampled %.3f → %.3f; batch reward %.2f",
		name, r.greedy0, r.greedy1, r.sampled0, r.sampled1, r.rewards)
	return r
}

func rftAsk(t *testing.T, name string, cfg RFTConfig) askRun {
	return runAskWith(t, name, func(m *chatlm.Model, out string, log func(map[string]any)) error {
		_, err := RFT(context.Background(), m, askTask{}, askUser{}, nil, cfg, out, func(rec map[string]any) {
			if _, ok := rec[MetricReward]; ok {
				checkKeys(t, rec, MetricSuccess, MetricRFTKept, MetricRFTKeptProblems, MetricGradTokens)
			}
			log(rec)
		})
		return err
	})
}

// RFT on the ask task: keeping the conversations that asked and
// fine-tuning on them makes the policy ask, for every seed.
func TestRFTLearnsToAsk(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		if r := rftAsk(t, "rft", askRFT(seed)); !learnedToAsk(r) {
			t.Errorf("seed %d: greedy %.3f → %.3f, sampled %.3f → %.3f: want the sampled success doubled and above 0.6, greedy above 0.8",
				seed, r.greedy0, r.greedy1, r.sampled0, r.sampled1)
		}
	}
}

// The learning test's bar fails when the filter or the update is
// sabotaged: keeping every conversation (self-imitation), keeping the
// failures, taking no step, or flipping the gradient's sign.
func TestRFTSabotagedFailsToLearn(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*RFTConfig)
	}{
		{"keep all", func(c *RFTConfig) { c.keep = keepAll }},
		{"keep failures", func(c *RFTConfig) { c.keep = keepFailures }},
		{"no step", func(c *RFTConfig) { c.noStep = true }},
		{"sign flipped", func(c *RFTConfig) { c.flipAdvantages = true }},
	} {
		cfg := askRFT(1)
		c.edit(&cfg)
		if r := rftAsk(t, c.name, cfg); learnedToAsk(r) {
			t.Errorf("%s: greedy %.3f → %.3f, sampled %.3f → %.3f: the bar holds though the run is sabotaged",
				c.name, r.greedy0, r.greedy1, r.sampled0, r.sampled1)
		}
	}
}

// The filter on a hand-built batch of two problems × 4: the successes
// get weight 1 (at most MaxKeptPerProblem per problem, the first ones),
// every sequence of a kept conversation too; the sabotages keep all or
// the failures.
func TestRFTFilter(t *testing.T) {
	b := rlBatch{
		rewards: []float64{1, 0, 1, 1, 0, 0, 0, 0},
		success: []bool{true, false, true, true, false, false, false, false},
		seqs:    make([]chatlm.Sequence, 9),
		owner:   []int{0, 0, 1, 2, 3, 4, 5, 6, 7},
	}
	for _, c := range []struct {
		name              string
		cfg               RFTConfig
		want              []float64
		kept, keptProblem int
	}{
		{"successes", RFTConfig{}, []float64{1, 1, 0, 1, 1, 0, 0, 0, 0}, 3, 1},
		{"at most 2 per problem", RFTConfig{MaxKeptPerProblem: 2}, []float64{1, 1, 0, 1, 0, 0, 0, 0, 0}, 2, 1},
		{"keep all", RFTConfig{keep: keepAll}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1}, 8, 2},
		{"keep failures", RFTConfig{keep: keepFailures}, []float64{0, 0, 1, 0, 0, 1, 1, 1, 1}, 5, 2},
		{"no step", RFTConfig{noStep: true}, []float64{0, 0, 0, 0, 0, 0, 0, 0, 0}, 0, 0},
	} {
		c.cfg.Group = 4
		a := rftFilter(b, c.cfg)
		if !reflect.DeepEqual(a.seq, c.want) || a.pos != nil {
			t.Errorf("%s: got weights %v (positions %v), want %v", c.name, a.seq, a.pos, c.want)
		}
		if a.metrics[MetricRFTKept] != c.kept || a.metrics[MetricRFTKeptProblems] != c.keptProblem {
			t.Errorf("%s: got %v, want %d kept in %d problems", c.name, a.metrics, c.kept, c.keptProblem)
		}
	}
}

// The cross-entropy loss is SFT's masked mean NLL, its gradient
// −mask·adv/Σmask: (1, 1) weights with advantages (1, 1) give
// −1/2 each, and the flipped sign +1/2.
func TestCrossEntropyInto(t *testing.T) {
	logp := []float32{-1, -3, -7}
	mask := []float32{1, 1, 0}
	for _, c := range []struct {
		adv  []float32
		want []float32
	}{
		{[]float32{1, 1, 1}, []float32{-0.5, -0.5, 0}},
		{[]float32{-1, -1, -1}, []float32{0.5, 0.5, 0}},
	} {
		d := make([]float32, 3)
		st, err := crossEntropyInto(d, logp, c.adv, mask)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d, c.want) || st.Loss != 2 || st.Tokens != 2 || st.Weight != 2 {
			t.Errorf("adv %v: got gradient %v, %+v; want %v, loss 2 over 2 tokens", c.adv, d, st, c.want)
		}
	}
}

func TestRFTConfigValidate(t *testing.T) {
	if err := DefaultRFTConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, edit := range map[string]func(*RFTConfig){
		"negative cap":    func(c *RFTConfig) { c.MaxKeptPerProblem = -1 },
		"cap over group":  func(c *RFTConfig) { c.MaxKeptPerProblem = c.Group + 1 },
		"greedy baseline": func(c *RFTConfig) { c.Baseline = BaselineGreedy },
		"turn credit":     func(c *RFTConfig) { c.TurnContinuations = 1 },
		"keep flat":       func(c *RFTConfig) { c.KeepFlatGroups = true },
		"bad rl config":   func(c *RFTConfig) { c.Iterations = 0 },
	} {
		c := DefaultRFTConfig()
		edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: got nil, want an error", name)
		}
	}
}

func smallRFT() RFTConfig {
	c := RFTConfig{RLConfig: smallGRPO()}
	c.MonitorEvery = 0
	return c
}

func rftWeights(t *testing.T, cfg RFTConfig, out string, ctx context.Context, log func(map[string]any)) ([]float32, error) {
	m := toyPolicy(t, 80)
	_, err := RFT(ctx, m, addTask{}, addUser{}, nil, cfg, out, log)
	return m.LM.Params.Data, err
}

// RFT on the multi-turn toy task: steps are taken after iteration 2, the
// same seed gives the same weights and another seed others, and a run
// interrupted after iteration 2 resumes (in a fresh model) to the
// uninterrupted weights. A GRPO checkpoint is not resumed as RFT.
func TestRFTDeterministicAndResumable(t *testing.T) {
	cfg := smallRFT()
	cfg.Iterations = 6
	var late int // steps after the interruption below: the resume has something to get right
	a, err := rftWeights(t, cfg, filepath.Join(t.TempDir(), "a"), context.Background(), func(r map[string]any) {
		if n, ok := r[MetricUpdates].(int); ok {
			if r[MetricStep].(int) > 2 {
				late += n
			}
			if n > 0 {
				checkKeys(t, r, MetricNLL, MetricGradTokens, MetricRFTKept, MetricSuccess, "grad/norm")
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if late == 0 {
		t.Fatal("no step taken after iteration 2")
	}
	b, err := rftWeights(t, cfg, filepath.Join(t.TempDir(), "b"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different weights")
	}
	other := cfg
	other.Seed++
	c, err := rftWeights(t, other, filepath.Join(t.TempDir(), "c"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds, identical weights")
	}
	out := filepath.Join(t.TempDir(), "d")
	ctx, cancel := context.WithCancel(context.Background())
	_, err = rftWeights(t, cfg, out, ctx, func(r map[string]any) {
		if r[MetricStep] == 2 && r[MetricReward] != nil {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: got %v, want context.Canceled", err)
	}
	if got := lastIteration(t, out); got != 2 {
		t.Fatalf("out/last holds iteration %d, want 2", got)
	}
	d, err := rftWeights(t, cfg, out, context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, d) {
		t.Fatal("resumed run's weights differ from the uninterrupted run's")
	}
	res, err := ReadRLResult(out)
	if err != nil || res.Iterations != cfg.Iterations {
		t.Fatalf("result: %+v, %v; want %d iterations", res, err, cfg.Iterations)
	}

	g := filepath.Join(t.TempDir(), "g")
	gc := cfg.RLConfig
	gc.Iterations = 1
	if _, err := grpoWeights(t, gc, g, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := rftWeights(t, cfg, g, context.Background(), nil); err == nil {
		t.Fatal("RFT resumed a GRPO checkpoint")
	}
}

// StaticRFT on logged ask conversations: candidates for the logged first
// turn, each continued by the frozen base against the user, kept when the
// task marks the conversation a success. Fine-tuning on them makes the
// policy ask on held-out instances; keeping the failures instead does not.
func TestStaticRFTLearnsToAsk(t *testing.T) {
	logs := askLog(128)
	behaviour := func(string) (dialog.Agent, error) { return askUserAgent{}, nil }
	for _, c := range []struct {
		name  string
		keep  rftKeep
		learn bool
	}{{"static rft", keepSuccess, true}, {"static rft, failures kept", keepFailures, false}} {
		cfg := StaticRFTConfig{RFTConfig: askRFT(1), Reward: StaticContinuation}
		cfg.keep = c.keep
		r := runAskWith(t, c.name, func(m *chatlm.Model, out string, log func(map[string]any)) error {
			_, err := StaticRFT(context.Background(), m, askTask{}, logs, behaviour, askUser{}, nil, cfg, out, log)
			return err
		})
		if learnedToAsk(r) != c.learn {
			t.Errorf("%s: greedy %.3f → %.3f, sampled %.3f → %.3f; want the bar met: %v",
				c.name, r.greedy0, r.greedy1, r.sampled0, r.sampled1, c.learn)
		}
	}
}

// askUserAgent stands for the logs' agent, which StaticContinuation
// replaces by the frozen base: it is never asked to speak.
type askUserAgent struct{}

func (askUserAgent) NewSession(*dialog.View, *rand.Rand) dialog.AgentSession { return nil }

// StaticRFT on the toy task's logs, candidates continued by the frozen
// base: steps are taken on kept candidates, and a run interrupted after
// iteration 1 resumes to the uninterrupted weights.
func TestStaticRFTDeterministicResumable(t *testing.T) {
	logs := addLogs(t, 12)
	cfg := StaticRFTConfig{RFTConfig: smallRFT(), Reward: StaticContinuation}
	cfg.InstancesPerStep = 6
	run := func(out string, ctx context.Context, log func(map[string]any)) ([]float32, RLResult, error) {
		m := toyPolicy(t, 80)
		res, err := StaticRFT(ctx, m, addTask{}, logs, addBehaviour, addUser{}, nil, cfg, out, log)
		return m.LM.Params.Data, res, err
	}
	a, res, err := run(filepath.Join(t.TempDir(), "a"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Updates == 0 {
		t.Fatal("no step taken")
	}
	out := filepath.Join(t.TempDir(), "c")
	ctx, cancel := context.WithCancel(context.Background())
	if _, _, err := run(out, ctx, func(r map[string]any) {
		if r[MetricStep] == 1 && r[MetricReward] != nil {
			cancel()
		}
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: got %v, want context.Canceled", err)
	}
	c, _, err := run(out, context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, c) {
		t.Fatal("resumed run's weights differ from the uninterrupted run's")
	}
}
