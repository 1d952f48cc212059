package train

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/chatlm/chatlmtest"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task"
)

var long = flag.Bool("long", false, "run the slow learning tests")

// addTask is chatlmtest's toy sum task as a rollout.Task: the reward is 1
// when the agent's last message contains the right sum.
type addTask struct{}

func (addTask) Name() string { return "add" }
func (addTask) Spec() string { return "add" }

func (addTask) Instance(split string, index int) (*dialog.Oracle, *dialog.View, error) {
	if split != "train" && split != "test" {
		return nil, nil, fmt.Errorf("add: unknown split %q", split)
	}
	stream := uint64(1)
	if split == "test" {
		stream = 2
	}
	rng := rand.New(rand.NewPCG(uint64(index), stream))
	a, b := rng.IntN(5), rng.IntN(5)
	return &dialog.Oracle{Task: "add", Split: split, ID: fmt.Sprintf("add/%s/%d", split, index),
			Instruction: fmt.Sprintf("add %d and %d", a, b), Opening: fmt.Sprintf("what is %d plus %d?", a, b),
			Truth: fmt.Sprint(a + b), Persona: dialog.Persona{Patience: 3}},
		&dialog.View{Task: "add", Instructions: "Answer sums."}, nil
}

func (addTask) Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == dialog.RoleAssistant {
			if strings.Contains(msgs[i].Content, "= "+o.Truth) {
				return dialog.Score{Outcome: o.Truth, Reward: 1, Success: true}
			}
			return dialog.Score{Outcome: msgs[i].Content}
		}
	}
	return dialog.Score{}
}

// addUser asks its sum, then says right (and ends) or wrong; a lenient
// user (a "naive" simulator) ends after any reply.
type addUser struct{ lenient bool }

type addSession struct {
	o       *dialog.Oracle
	lenient bool
	tries   int
}

func (u addUser) NewSession(o *dialog.Oracle, _ *rand.Rand) dialog.UserSession {
	return &addSession{o: o, lenient: u.lenient}
}

func (s *addSession) Open(context.Context) (string, error) { return s.o.Opening, nil }

func (s *addSession) Reply(_ context.Context, h []dialog.Message) (string, bool, error) {
	s.tries++
	if strings.Contains(h[len(h)-1].Content, "= "+s.o.Truth) || s.lenient {
		return "right, thanks!", true, nil
	}
	return "no, that is wrong.", s.tries >= 2, nil
}

// toyPolicy is chatlmtest's tiny model after sft steps of SFT on the toy
// episodes (0: untrained).
func toyPolicy(t testing.TB, sft int) *chatlm.Model {
	t.Helper()
	eps := chatlmtest.AddEpisodes(64, 3)
	m := chatlmtest.TinyModel(t, eps)
	if sft == 0 {
		return m
	}
	toyMu.Lock()
	defer toyMu.Unlock()
	if w, ok := toyWeights[sft]; ok {
		copy(m.LM.Params.Data, w)
		return m
	}
	var seqs []chatlm.Sequence
	for i := range eps {
		s, err := m.AgentSequence(&eps[i], nil)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, s)
	}
	c := DefaultSFTConfig()
	c.Steps, c.BatchSize, c.LR, c.Warmup, c.ValFraction, c.EvalEvery, c.CheckpointEvery, c.Patience = sft, 16, 1e-2, 5, 0, sft, sft, 0
	dir := t.TempDir()
	if _, err := SFT(context.Background(), m, seqs, c, dir, nil); err != nil {
		t.Fatal(err)
	}
	toyWeights[sft] = append([]float32(nil), m.LM.Params.Data...)
	return m
}

// toyWeights caches toyPolicy's SFT results by step count.
var (
	toyMu      sync.Mutex
	toyWeights = map[int][]float32{}
)

func smallGRPO() RLConfig {
	c := DefaultRLConfig()
	c.Iterations, c.InstancesPerStep, c.Group, c.MaxTurns, c.MiniBatch = 3, 2, 4, 2, 4
	c.Gen.MaxNewTokens, c.MonitorGen.MaxNewTokens = 12, 12
	c.MonitorEvery, c.MonitorInstances, c.MonitorStart = 2, 4, 0
	c.LR, c.Warmup, c.CheckpointEvery, c.Seed = 1e-3, 0, 1, 5
	return c
}

func TestRLConfigValidate(t *testing.T) {
	if err := DefaultRLConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, edit := range map[string]func(*RLConfig){
		"no iterations": func(c *RLConfig) { c.Iterations = 0 },
		"group of one":  func(c *RLConfig) { c.Group = 1 },
		"clip 0":        func(c *RLConfig) { c.ClipEps = 0 },
		"negative beta": func(c *RLConfig) { c.Beta = -1 },
		"no minibatch":  func(c *RLConfig) { c.MiniBatch = 0 },
		"no split":      func(c *RLConfig) { c.Split = "" },
		"monitor empty": func(c *RLConfig) { c.MonitorInstances = 0 },
		"no tokens":     func(c *RLConfig) { c.Gen.MaxNewTokens = 0 },
	} {
		c := DefaultRLConfig()
		edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: got nil, want an error", name)
		}
	}
}

// A conversation's sequence, built the way GRPO builds it, passes the
// loss only to the agent's sampled tokens: PolicyLoss gives every user
// and system token zero gradient.
func TestGRPOMasksUserTokens(t *testing.T) {
	m := toyPolicy(t, 0)
	cfg := smallGRPO()
	r, err := newRLRun(m, addTask{}, addUser{}, nil, cfg, "grpo", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := &chatlm.Agent{Model: m, Gen: cfg.Gen}
	rc := rollout.Config{Split: "train", Instances: 1, Group: 2, MaxTurns: 2, Seed: 1}
	eps, sessions, err := rollout.Play(context.Background(), addTask{}, agent, addUser{}, rc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.conversations(eps, sessions)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]int, len(eps))
	for k, seq := range b.seqs {
		i := b.owner[k]
		for p, w := range seq.Mask {
			if w > 0 {
				got[i] = append(got[i], seq.IDs[p+1])
			}
		}
		// The user's opening is in the sequence but carries no gradient.
		if !strings.Contains(m.Tok.Decode(seq.IDs), eps[i].Messages[0].Content) {
			t.Fatalf("sequence %d: user opening missing", k)
		}
		tok, B, T, lens, mask := m.Pack([]chatlm.Sequence{seq})
		logp, err := m.LM.Forward(tok, B, T, lens)
		if err != nil {
			t.Fatal(err)
		}
		adv := make([]float32, len(logp))
		for j := range adv {
			adv[j] = 1
		}
		_, dlogp := PolicyLoss(logp, logp, logp, adv, mask, 0.2, 0.1)
		for p := range dlogp {
			if (dlogp[p] != 0) != (mask[p] > 0) {
				t.Fatalf("sequence %d position %d: gradient %g with mask %g, want non-zero exactly on agent tokens", k, p, dlogp[p], mask[p])
			}
		}
	}
	for i := range eps {
		var want []int
		for _, turn := range sessions[i].(*chatlm.AgentSession).Turns {
			want = append(want, turn.IDs...)
		}
		if !reflect.DeepEqual(got[i], want) {
			t.Fatalf("episode %d: trained tokens %v, want the sampled ids %v", i, got[i], want)
		}
	}
}

// When every group's rewards are equal there is nothing to learn: with
// β = 0 and flat groups kept, or with flat groups dropped, no step is
// taken and the weights do not move.
func TestGRPOFlatGroupsLeaveWeights(t *testing.T) {
	for _, keep := range []bool{false, true} {
		m := toyPolicy(t, 0) // untrained: every sum is wrong, every reward 0
		before := append([]float32(nil), m.LM.Params.Data...)
		cfg := smallGRPO()
		cfg.Iterations, cfg.MonitorEvery, cfg.Beta, cfg.KeepFlatGroups = 2, 0, 0, keep
		var recs []map[string]any
		res, err := GRPO(context.Background(), m, addTask{}, addUser{}, nil, cfg, t.TempDir(), func(r map[string]any) { recs = append(recs, r) })
		if err != nil {
			t.Fatal(err)
		}
		if res.LastReward != 0 || res.Updates != 0 {
			t.Fatalf("keep=%v: reward %v, %d updates; want 0 and 0", keep, res.LastReward, res.Updates)
		}
		if !reflect.DeepEqual(before, m.LM.Params.Data) {
			t.Fatalf("keep=%v: weights moved on flat groups", keep)
		}
		if _, ok := recs[len(recs)-1]["rollout/reward_mean"]; !ok {
			t.Fatalf("keep=%v: skipped iteration not logged: %v", keep, recs[len(recs)-1])
		}
	}
}

// checkKeys fails unless rec holds every key.
func checkKeys(t *testing.T, rec map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := rec[k]; !ok {
			t.Errorf("record %v lacks %s", rec, k)
		}
	}
}

var iterKeys = []string{"step", "rollout/reward_mean", "rollout/success", "rollout/turns", "rollout/agent_tokens",
	"loss/policy", "loss/kl", "loss/clip_frac", "grad/norm", "perf/tokens_per_s", "perf/iter_s", MetricGradTokens}

// The whole algorithm on the toy task: updates happen, every key is
// logged, KL is zero on the first pass (policy = reference), the monitor
// logs both rewards side by side, and the run folder holds the model.
func TestGRPOSmoke(t *testing.T) {
	m := toyPolicy(t, 80)
	cfg := smallGRPO()
	out := t.TempDir()
	var iters, mons []map[string]any
	res, err := GRPO(context.Background(), m, addTask{}, addUser{lenient: true}, addUser{}, cfg, out, func(r map[string]any) {
		switch {
		case r["monitor/train_user_reward"] != nil:
			mons = append(mons, r)
		case r["rollout/reward_mean"] != nil:
			iters = append(iters, r)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(iters) != cfg.Iterations || res.Iterations != cfg.Iterations {
		t.Fatalf("%d iteration records, result %d; want %d", len(iters), res.Iterations, cfg.Iterations)
	}
	if res.Updates == 0 {
		t.Fatal("no optimizer step in 3 iterations of a partly trained policy: want some")
	}
	stepped := 0
	for _, rec := range iters {
		if rec["train/updates"].(int) > 0 {
			checkKeys(t, rec, iterKeys...)
			stepped++
		}
		// The sampled tokens' mean surprisal: positive, and at most a
		// little above the uniform distribution's over the vocabulary
		// (a sample mean can exceed the entropy it estimates).
		if h, ok := rec[MetricEntropy].(float64); !ok || !(h > 0 && h < 1.5*math.Log(80)) {
			t.Errorf("rollout entropy %v, want in (0, 1.5·ln 80)", rec[MetricEntropy])
		}
	}
	if stepped == 0 {
		t.Fatal("no iteration logged its losses")
	}
	// Monitor at 0, 2 and at the end (3).
	if len(mons) != 3 {
		t.Fatalf("%d monitor records, want 3 (iterations 0, 2, 3)", len(mons))
	}
	for _, rec := range mons {
		checkKeys(t, rec, "monitor/train_user_reward", "monitor/human_reward", "monitor/reward_gap")
	}
	if _, _, err := chatlm.Load(out); err != nil {
		t.Fatalf("final model: %v", err)
	}
}

// The KL term is zero while the policy equals the reference.
func TestGRPOFirstStepKLIsZero(t *testing.T) {
	m := toyPolicy(t, 80)
	cfg := smallGRPO()
	cfg.Iterations, cfg.MonitorEvery, cfg.UpdatesPerBatch, cfg.MiniBatch = 1, 0, 1, 64
	var kl any
	res, err := GRPO(context.Background(), m, addTask{}, addUser{}, nil, cfg, t.TempDir(), func(r map[string]any) {
		if v, ok := r["loss/kl"]; ok {
			kl = v
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Updates != 1 {
		t.Skipf("%d updates (flat batch); the seed gives no signal", res.Updates)
	}
	if kl.(float64) != 0 {
		t.Fatalf("KL on the first step: got %v, want 0", kl)
	}
}

// grpoWeights runs GRPO and returns the final weights.
func grpoWeights(t *testing.T, cfg RLConfig, out string, ctx context.Context, log func(map[string]any)) ([]float32, error) {
	m := toyPolicy(t, 80)
	_, err := GRPO(ctx, m, addTask{}, addUser{}, nil, cfg, out, log)
	return m.LM.Params.Data, err
}

func TestGRPODeterministicAndResumable(t *testing.T) {
	cfg := smallGRPO()
	cfg.MonitorEvery = 0
	a, err := grpoWeights(t, cfg, filepath.Join(t.TempDir(), "a"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := grpoWeights(t, cfg, filepath.Join(t.TempDir(), "b"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different weights")
	}
	other := cfg
	other.Seed++
	c, err := grpoWeights(t, other, filepath.Join(t.TempDir(), "c"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds, identical weights")
	}

	// Interrupt after iteration 2, resume in a fresh model.
	out := filepath.Join(t.TempDir(), "d")
	ctx, cancel := context.WithCancel(context.Background())
	_, err = grpoWeights(t, cfg, out, ctx, func(r map[string]any) {
		if r["step"] == 2 && r["rollout/reward_mean"] != nil {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: got %v, want context.Canceled", err)
	}
	resumedAt := -1
	d, err := grpoWeights(t, cfg, out, context.Background(), func(r map[string]any) {
		if r["event"] == "resume" {
			resumedAt = r["step"].(int)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if resumedAt != 2 {
		t.Fatalf("resumed at %d, want 2", resumedAt)
	}
	if !reflect.DeepEqual(a, d) {
		t.Fatal("resumed run's weights differ from the uninterrupted run's")
	}
	// Another seed on the same folder is refused, not mixed in.
	if _, err := grpoWeights(t, other, out, context.Background(), nil); err == nil {
		t.Fatal("resuming with another seed: want an error")
	}
}

// TestGRPOLearnsToySums is the learning check (go test -run LearnsToy
// -long): from a policy that gets about one sum in five right, GRPO
// raises the sampled training reward.
func TestGRPOLearnsToySums(t *testing.T) {
	if !*long {
		t.Skip("slow: run with -long")
	}
	m := toyPolicy(t, 80)
	cfg := smallGRPO()
	cfg.Iterations, cfg.InstancesPerStep, cfg.Group, cfg.MaxTurns, cfg.MiniBatch = 80, 8, 8, 1, 32
	cfg.LR, cfg.Beta, cfg.MonitorEvery, cfg.MonitorInstances, cfg.CheckpointEvery = 3e-3, 0, 20, 64, 1000
	var curve []float64
	sum := 0.0
	_, err := GRPO(context.Background(), m, addTask{}, addUser{}, addUser{}, cfg, t.TempDir(), func(r map[string]any) {
		if v, ok := r["monitor/human_reward"]; ok {
			t.Logf("iteration %v: monitor (greedy) reward %.3f", r["step"], v)
		}
		if v, ok := r["rollout/reward_mean"]; ok {
			sum += v.(float64)
			if r["step"].(int)%10 == 0 {
				curve = append(curve, sum/10)
				sum = 0
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("training reward per 10 iterations: %.3f", curve)
	if first, last := curve[0], curve[len(curve)-1]; !(last > first+0.1) {
		t.Fatalf("training reward %.3f → %.3f: want a rise of more than 0.1", first, last)
	}
}

// Every training sequence reproduces the context its tokens were sampled
// in: Forward's log-probs on the trained positions equal the ones the
// sampler recorded. Mathchat conversations overflow the toy model's
// 128-token context, so this covers both the whole-conversation
// sequences and the per-turn ones of overflowing conversations.
func TestGRPOSequencesMatchSampling(t *testing.T) {
	tk, err := task.Lookup("mathchat")
	if err != nil {
		t.Fatal(err)
	}
	naive, _ := tk.User("naive")
	m := toyPolicy(t, 80)
	cfg := smallGRPO()
	cfg.Gen.MaxNewTokens = 10
	r, err := newRLRun(m, tk, naive, nil, cfg, "grpo", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := &chatlm.Agent{Model: m, Gen: cfg.Gen}
	eps, sessions, err := rollout.Play(context.Background(), tk, agent, naive, rollout.Config{Split: "train", Instances: 3, Group: 2, MaxTurns: 3, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	// A short conversation of the toy task as well, which fits whole.
	toy, toySessions, err := rollout.Play(context.Background(), addTask{}, agent, addUser{}, rollout.Config{Split: "train", Instances: 8, MaxTurns: 2, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	eps, sessions = append(eps, toy...), append(sessions, toySessions...)
	b, err := r.conversations(eps, sessions)
	if err != nil {
		t.Fatal(err)
	}
	if b.metrics["rollout/split_turns"].(float64) == 0 || len(b.seqs) == len(eps) {
		t.Fatalf("no conversation was split into turns (%d sequences for %d conversations)", len(b.seqs), len(eps))
	}
	seqsOf := make([]int, len(eps))
	for _, o := range b.owner {
		seqsOf[o]++
	}
	whole := 0
	for i, n := range seqsOf {
		if n == 1 && eps[i].Turns == 2 {
			whole++
		}
	}
	if whole == 0 {
		t.Fatalf("no two-turn conversation was kept whole (sequences per conversation %v)", seqsOf)
	}
	want := make([][]float32, len(eps)) // each conversation's sampled log-probs, in order
	for i, s := range sessions {
		for _, turn := range s.(*chatlm.AgentSession).Turns {
			want[i] = append(want[i], turn.LogProbs...)
		}
	}
	got := make([][]float32, len(eps))
	for k, seq := range b.seqs {
		if len(seq.IDs) > m.LM.Config.Context {
			t.Fatalf("sequence %d has %d tokens, context is %d", k, len(seq.IDs), m.LM.Config.Context)
		}
		logp, err := m.LM.Forward(seq.IDs, 1, len(seq.IDs), nil)
		if err != nil {
			t.Fatal(err)
		}
		// The sampler's own log-probs stand in for the old ones: every
		// sequence carries them, on its trained positions.
		if len(b.sampled) != len(b.seqs) || b.sampled[k] == nil {
			t.Fatalf("sequence %d carries no sampled log-probs", k)
		}
		for p, w := range seq.Mask {
			if w > 0 {
				got[b.owner[k]] = append(got[b.owner[k]], logp[p])
				if d := math.Abs(float64(logp[p] - b.sampled[k][p])); d > 1e-5 {
					t.Fatalf("sequence %d position %d: Forward log-prob %g, sampled %g", k, p, logp[p], b.sampled[k][p])
				}
			}
		}
	}
	for i := range eps {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("conversation %d: %d trained tokens, %d sampled", i, len(got[i]), len(want[i]))
		}
		for j := range got[i] {
			if d := got[i][j] - want[i][j]; d > 1e-3 || d < -1e-3 {
				t.Fatalf("conversation %d token %d: Forward log-prob %g, sampled %g", i, j, got[i][j], want[i][j])
			}
		}
	}
}

// recordingTask notes which instances were asked for.
type recordingTask struct {
	addTask
	seen []int
	// size is the split's size; 0 means 5.
	size int
}

func (r *recordingTask) Instance(split string, index int) (*dialog.Oracle, *dialog.View, error) {
	if n := cmp.Or(r.size, 5); index >= n {
		return nil, nil, fmt.Errorf("instance %d of a %d-instance split", index, n)
	}
	r.seen = append(r.seen, index)
	return r.addTask.Instance(split, index)
}

// The training cursor moves InstancesPerStep each iteration and wraps
// around a finite split.
func TestGRPOCursorWraps(t *testing.T) {
	tk := &recordingTask{}
	cfg := smallGRPO()
	cfg.TrainInstances, cfg.InstancesPerStep, cfg.Iterations, cfg.MonitorEvery = 5, 2, 4, 0
	if _, err := GRPO(context.Background(), toyPolicy(t, 80), tk, addUser{}, nil, cfg, t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	var want []int
	for i := range 8 {
		want = append(want, (seedOffset(cfg.Seed)+i)%5)
	}
	if !reflect.DeepEqual(tk.seen, want) {
		t.Fatalf("instances %v, want %v", tk.seen, want)
	}
}

// Each RL seed trains on its own problems: two seeds' first iterations
// share none, and the same seed plays the same ones again.
func TestGRPOSeedsTrainOnTheirOwnProblems(t *testing.T) {
	seen := func(seed uint64) []int {
		tk := &recordingTask{size: 1 << 21}
		cfg := smallGRPO()
		cfg.TrainInstances, cfg.InstancesPerStep, cfg.Iterations, cfg.MonitorEvery, cfg.Seed = 1<<21, 2, 2, 0, seed
		if _, err := GRPO(context.Background(), toyPolicy(t, 80), tk, addUser{}, nil, cfg, t.TempDir(), nil); err != nil {
			t.Fatal(err)
		}
		return tk.seen
	}
	a, b, again := seen(1), seen(2), seen(1)
	if !reflect.DeepEqual(a, again) {
		t.Errorf("seed 1 played %v, then %v", a, again)
	}
	for _, i := range a {
		if slices.Contains(b, i) {
			t.Errorf("seeds 1 and 2 both trained on problem %d (%v, %v)", i, a, b)
		}
	}
}

// One update step raises the log-likelihood of a conversation with a
// positive advantage and lowers it for a negative one.
func TestGRPOUpdateFollowsAdvantage(t *testing.T) {
	for _, a := range []float64{1, -1} {
		m := toyPolicy(t, 80)
		cfg := smallGRPO()
		cfg.UpdatesPerBatch, cfg.Beta = 1, 0
		r, err := newRLRun(m, addTask{}, addUser{}, nil, cfg, "grpo", t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		agent := &chatlm.Agent{Model: m, Gen: cfg.Gen}
		eps, sessions, err := rollout.Play(context.Background(), addTask{}, agent, addUser{}, rollout.Config{Split: "train", Instances: 1, MaxTurns: 1, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.conversations(eps, sessions)
		if err != nil {
			t.Fatal(err)
		}
		loglik := func() float64 {
			lp, err := sequenceLogp(m, b.seqs, []int{0}, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			s := 0.0
			for p, w := range b.seqs[0].Mask {
				s += float64(w) * float64(lp[0][p])
			}
			return s
		}
		before := loglik()
		us, err := r.update(b.seqs[:1], []float64{a}, make([][]float32, 1), 0)
		if err != nil {
			t.Fatal(err)
		}
		after := loglik()
		if us.steps != 1 || (after-before)*a <= 0 {
			t.Fatalf("advantage %v: %d steps, log-likelihood %.4f → %.4f; want one step moving it with the advantage's sign", a, us.steps, before, after)
		}
	}
}

// With (almost) no advantage, the β·KL term pulls a perturbed policy back
// toward the reference.
func TestGRPOKLPullsTowardReference(t *testing.T) {
	m := toyPolicy(t, 80)
	cfg := smallGRPO()
	cfg.UpdatesPerBatch, cfg.Beta, cfg.MiniBatch = 3, 1, 8
	r, err := newRLRun(m, addTask{}, addUser{}, nil, cfg, "grpo", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range m.LM.Params.Data {
		m.LM.Params.Data[i] += float32(rng.NormFloat64() * 0.02)
	}
	agent := &chatlm.Agent{Model: m, Gen: cfg.Gen}
	eps, sessions, err := rollout.Play(context.Background(), addTask{}, agent, addUser{}, rollout.Config{Split: "train", Instances: 4, Group: 2, MaxTurns: 1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.conversations(eps, sessions)
	if err != nil {
		t.Fatal(err)
	}
	idx := make([]int, len(b.seqs))
	adv := make([]float64, len(b.seqs))
	for i := range idx {
		idx[i], adv[i] = i, 1e-9*float64(1-2*(i%2))
	}
	kl := func() float64 {
		pol, err := sequenceLogp(m, b.seqs, idx, 8, 1)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := sequenceLogp(r.ref, b.seqs, idx, 8, 1)
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for k := range idx {
			s += meanKL(pol[k], ref[k], b.seqs[k].Mask[:len(pol[k])])
		}
		return s
	}
	before := kl()
	if _, err := r.update(b.seqs, adv, make([][]float32, len(b.seqs)), 0); err != nil {
		t.Fatal(err)
	}
	if after := kl(); !(after < before) || before == 0 {
		t.Fatalf("KL to the reference %.5f → %.5f: want it to fall", before, after)
	}
}

// Against a learned user (both sides keep their caches across turns, and
// the first pass takes its old log-probs from the sampler) a run is still
// deterministic and resumes to the same weights.
func TestGRPOLearnedUserDeterministicAndResumable(t *testing.T) {
	cfg := smallGRPO()
	cfg.MonitorEvery = 0
	updates := 0
	run := func(out string, ctx context.Context, log func(map[string]any)) ([]float32, error) {
		m := toyPolicy(t, 80)
		sim := toyPolicy(t, 0)
		user := &chatlm.User{Model: sim, Oracle: true, Gen: chatlm.GenConfig{MaxNewTokens: 10, Temperature: 1, TopP: 1}}
		res, err := GRPO(ctx, m, addTask{}, user, nil, cfg, out, log)
		updates = res.Updates
		return m.LM.Params.Data, err
	}
	dir := t.TempDir()
	a, err := run(filepath.Join(dir, "a"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if updates == 0 {
		t.Fatal("no optimizer step: the check would compare untouched weights")
	}
	b, err := run(filepath.Join(dir, "b"), context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different weights")
	}
	out := filepath.Join(dir, "c")
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := run(out, ctx, func(r map[string]any) {
		if r["step"] == 2 && r["rollout/reward_mean"] != nil {
			cancel()
		}
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: got %v, want context.Canceled", err)
	}
	c, err := run(out, context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, c) {
		t.Fatal("resumed run's weights differ from the uninterrupted run's")
	}
}

// Rollouts sampled at a temperature other than 1 are scored under the
// tempered policy that drew them: the sampler's untempered log-probs are
// not reused, and the first step's ratio of new to old log-probs is 1 (it
// is far from 1 if either side is scored untempered).
func TestGRPOScoresAtTheRolloutTemperature(t *testing.T) {
	m := toyPolicy(t, 80)
	cfg := smallGRPO()
	cfg.UpdatesPerBatch, cfg.Gen.Temperature = 1, 0.5
	cfg.MiniBatch = 64
	r, err := newRLRun(m, addTask{}, addUser{}, nil, cfg, "grpo", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := &chatlm.Agent{Model: m, Gen: cfg.Gen}
	eps, sessions, err := rollout.Play(context.Background(), addTask{}, agent, addUser{}, rollout.Config{Split: "train", Instances: 4, MaxTurns: 2, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.conversations(eps, sessions)
	if err != nil {
		t.Fatal(err)
	}
	for k, lp := range b.sampled {
		if lp != nil {
			t.Fatalf("sequence %d keeps the sampler's untempered log-probs", k)
		}
	}
	adv := make([]float64, len(b.seqs))
	for k := range adv {
		adv[k] = float64(k%2)*2 - 1
	}
	us, err := r.update(b.seqs, adv, b.sampled, 0)
	if err != nil {
		t.Fatal(err)
	}
	if us.steps != 1 || math.Abs(us.ratio-1) > 1e-5 {
		t.Fatalf("%d steps, first-step ratio %v: want one step at ratio 1", us.steps, us.ratio)
	}
}
