package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/rollout"
)

// BaselineGreedy on the ask task: A = r − r_greedy makes the policy ask;
// with the sign flipped, or no step taken, the same bar fails.
func TestGRPOGreedyBaselineLearnsToAsk(t *testing.T) {
	for _, c := range []struct {
		name  string
		seed  uint64
		edit  func(*RLConfig)
		learn bool
	}{
		{"seed 1", 1, func(*RLConfig) {}, true},
		{"seed 2", 2, func(*RLConfig) {}, true},
		{"seed 3", 3, func(*RLConfig) {}, true},
		{"sign flipped", 1, func(c *RLConfig) { c.flipAdvantages = true }, false},
		{"no step", 1, func(c *RLConfig) { c.LR = 1e-12 }, false},
	} {
		cfg := askGRPO(c.seed, false)
		cfg.Baseline = BaselineGreedy
		c.edit(&cfg)
		r := runAskWith(t, "greedy baseline, "+c.name, func(m *chatlm.Model, out string, log func(map[string]any)) error {
			_, err := GRPO(context.Background(), m, askTask{}, askUser{}, nil, cfg, out, func(rec map[string]any) {
				if _, ok := rec[MetricReward]; ok {
					checkKeys(t, rec, MetricGreedyReward)
				}
				log(rec)
			})
			return err
		})
		if learnedToAsk(r) != c.learn {
			t.Errorf("%s: greedy %.3f → %.3f, sampled %.3f → %.3f; want the bar met: %v", c.name, r.greedy0, r.greedy1, r.sampled0, r.sampled1, c.learn)
		}
	}
}

// The greedy baseline's conversation is the policy's greedy one against
// the user of the group's first sample: its reward is that of a
// temperature-0 rollout of the same problems, and the advantages are the
// rewards less it.
func TestGreedyBaselineIsTheGreedyConversation(t *testing.T) {
	cfg := smallGRPO()
	cfg.Baseline, cfg.InstancesPerStep = BaselineGreedy, 6
	m := toyPolicy(t, 80)
	r, err := newRLRun(m, addTask{}, addUser{}, nil, cfg, algoGRPO, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.interactiveBatch(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	gen := cfg.Gen
	gen.Temperature = 0
	eps, err := rollout.Run(context.Background(), addTask{}, &chatlm.Agent{Model: m, Gen: gen}, addUser{},
		rollout.Config{Split: cfg.Split, Start: r.cursor(0), Instances: cfg.InstancesPerStep, Group: 1, Seed: iterSeed(cfg.Seed, 0), MaxTurns: cfg.MaxTurns})
	if err != nil {
		t.Fatal(err)
	}
	for g, ep := range eps {
		if b.greedy[g] != ep.Reward {
			t.Fatalf("group %d: greedy baseline %v, the greedy rollout's reward %v", g, b.greedy[g], ep.Reward)
		}
	}
	adv := greedyAdvantages(b.rewards, b.greedy, cfg.Group)
	for i, a := range adv {
		if a != b.rewards[i]-b.greedy[i/cfg.Group] {
			t.Fatalf("advantage %d: %v, want %v − %v", i, a, b.rewards[i], b.greedy[i/cfg.Group])
		}
	}
}

// turnAdvantages on hand-computed values: base 0.25, V̂ before turn 2
// 0.5 and before turn 3 1, reward 1, scale 2: (0.5, 1, 0), adding up to
// 2·(1 − 0.25). One turn: the whole advantage.
func TestTurnAdvantages(t *testing.T) {
	for _, c := range []struct {
		value             []float64
		base, reward, scl float64
		want              []float64
	}{
		{[]float64{0, 0.5, 1}, 0.25, 1, 2, []float64{0.5, 1, 0}},
		{[]float64{0, 0.5, 0.75}, 0.5, 0, 1, []float64{0, 0.25, -0.75}},
		{[]float64{0}, 0.25, 1, 1, []float64{0.75}},
	} {
		got := turnAdvantages(c.value, c.base, c.reward, c.scl)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("turnAdvantages(%v, %v, %v, %v) = %v, want %v", c.value, c.base, c.reward, c.scl, got, c.want)
		}
		sum := 0.0
		for _, a := range got {
			sum += a
		}
		if math.Abs(sum-c.scl*(c.reward-c.base)) > 1e-12 {
			t.Errorf("%v adds up to %v, want %v", got, sum, c.scl*(c.reward-c.base))
		}
	}
}

// positionAdvantages: the trained positions, in order, take their turn's
// advantage, 2 of turn 0's then 3 of turn 1's; untrained positions 0.
func TestPositionAdvantages(t *testing.T) {
	seq := chatlm.Sequence{IDs: make([]int, 10), Mask: []float32{0, 1, 1, 0, 0, 1, 0, 1, 1, 0}}
	got := positionAdvantages(seq, []int{2, 3}, []float64{0.5, -1})
	want := []float32{0, 0.5, 0.5, 0, 0, -1, 0, -1, -1, 0}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Turn credit on the toy task of two turns: the batch's values come from
// continuations, and its sequences' advantages add up, turn by turn, to
// GRPO's conversation advantage.
func TestTurnCreditAddsUpToGRPO(t *testing.T) {
	cfg := smallGRPO()
	cfg.TurnContinuations, cfg.InstancesPerStep = 2, 6
	r, err := newRLRun(toyPolicy(t, 80), addTask{}, addUser{}, nil, cfg, algoGRPO, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.interactiveBatch(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.turns == nil || b.metrics[MetricTurnContinuations].(int) == 0 {
		t.Fatalf("no continuations played (%v)", b.metrics)
	}
	grpo := GroupAdvantages(b.rewards, cfg.Group, cfg.AdvEps)
	a := r.grpoCredit(b)
	sum := make([]float64, len(b.rewards))
	multi := 0
	for s, o := range b.owner {
		if a.pos[s] == nil {
			sum[o] += a.seq[s] * float64(b.seqs[s].Trained())
			continue
		}
		for _, x := range a.pos[s] {
			sum[o] += float64(x)
		}
	}
	for i, tr := range b.turns.trained {
		if len(tr) > 1 {
			multi++
		}
		// Per-token sums: turn k's advantage times its tokens.
		want := 0.0
		if b.turns.value[i] != nil {
			g := b.rewards[i/cfg.Group*cfg.Group : i/cfg.Group*cfg.Group+cfg.Group]
			ta := turnAdvantages(b.turns.value[i], mean(g), b.rewards[i], 1/(popStd(g)+cfg.AdvEps))
			for k, n := range tr {
				want += ta[k] * float64(n)
			}
			total := 0.0
			for _, x := range ta {
				total += x
			}
			if math.Abs(total-grpo[i]) > 1e-9 {
				t.Errorf("sample %d: turn advantages %v add up to %v, GRPO's is %v", i, ta, total, grpo[i])
			}
		} else if grpo[i] != 0 {
			t.Errorf("sample %d: skipped, but its GRPO advantage is %v", i, grpo[i])
		}
		if math.Abs(sum[i]-want) > 1e-4 {
			t.Errorf("sample %d: sequences carry %v advantage·tokens, the turns %v", i, sum[i], want)
		}
	}
	if multi == 0 {
		t.Fatal("no conversation of more than one turn: the test checks nothing")
	}
}

// GRPO's variants are resumable like GRPO (steps are taken after the
// interruption, so the resume has state to restore), and a checkpoint of
// one variant is not resumed by plain GRPO.
func TestGRPOVariantsDeterministicAndResumable(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*RLConfig)
	}{
		{"greedy", func(c *RLConfig) { c.Baseline = BaselineGreedy }},
		{"turns", func(c *RLConfig) { c.TurnContinuations = 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := smallGRPO()
			cfg.MonitorEvery, cfg.Iterations = 0, 6
			c.edit(&cfg)
			late := 0 // steps after the interruption below: the resume has something to get right
			a, err := grpoWeights(t, cfg, filepath.Join(t.TempDir(), "a"), context.Background(), func(r map[string]any) {
				if n, ok := r[MetricUpdates].(int); ok && r[MetricStep].(int) > 2 {
					late += n
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if late == 0 {
				t.Fatal("no step taken after iteration 2")
			}
			out := filepath.Join(t.TempDir(), "d")
			ctx, cancel := context.WithCancel(context.Background())
			_, err = grpoWeights(t, cfg, out, ctx, func(r map[string]any) {
				if r[MetricStep] == 2 && r[MetricReward] != nil {
					cancel()
				}
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: got %v, want context.Canceled", err)
			}
			resumesFrom(t, cfg, out, 2, a)
			plain := smallGRPO()
			plain.MonitorEvery = 0
			if _, err := grpoWeights(t, plain, out, context.Background(), nil); err == nil || !strings.Contains(err.Error(), "other settings") {
				t.Fatalf("plain GRPO on a %s checkpoint: got %v, want a refusal naming the settings", c.name, err)
			}
		})
	}
}

func TestGRPOVariantsValidate(t *testing.T) {
	for name, edit := range map[string]func(*RLConfig){
		"unknown baseline":        func(c *RLConfig) { c.Baseline = "median" },
		"negative continuations":  func(c *RLConfig) { c.TurnContinuations = -1 },
		"too many continuations":  func(c *RLConfig) { c.TurnContinuations = maxTurnContinuations + 1 },
		"turn credit by sequence": func(c *RLConfig) { c.TurnContinuations, c.LossMean = 1, LossMeanSequence },
	} {
		c := DefaultRLConfig()
		edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: got nil, want an error", name)
		}
	}
	c := DefaultRLConfig()
	c.Baseline, c.TurnContinuations = BaselineGroup, 2
	if err := c.Validate(); err != nil {
		t.Errorf("group baseline with turn credit: %v", err)
	}
}

// The two-turn ask task: the user opens, says "go on." after the agent's
// first turn and ends after its second; only the second turn counts (a
// question there). The first turn is irrelevant, so credit belongs to
// the second.
type askLaterTask struct{ askTask }

func (askLaterTask) Score(_ *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	turn := 0
	for _, m := range msgs {
		if m.Role != dialog.RoleAssistant {
			continue
		}
		if turn++; turn == 2 {
			if strings.Contains(m.Content, "?") {
				return dialog.Score{Outcome: "asked", Reward: 1, Success: true}
			}
			return dialog.Score{Outcome: "told"}
		}
	}
	return dialog.Score{Outcome: "unfinished"}
}

type askLaterUser struct{}

type askLaterSession struct {
	o       *dialog.Oracle
	replies int
}

func (askLaterUser) NewSession(o *dialog.Oracle, _ *rand.Rand) dialog.UserSession {
	return &askLaterSession{o: o}
}

func (s *askLaterSession) Open(context.Context) (string, error) { return s.o.Opening, nil }

func (s *askLaterSession) Reply(context.Context, []dialog.Message) (string, bool, error) {
	if s.replies++; s.replies == 1 {
		return "go on.", false, nil
	}
	return "ok, thanks.", true, nil
}

// askLaterLog is askLog's corpus with two agent turns, each asking with
// askLog's chances, independently.
func askLaterLog(n int) []dialog.Episode {
	rng := rand.New(rand.NewPCG(8, 8))
	eps := make([]dialog.Episode, n)
	for i := range eps {
		topic, opening, kind := askCase("train", i)
		p := 0.1
		if kind == 2 {
			p = 0.6
		}
		reply := func() string {
			if rng.Float64() < p {
				return fmt.Sprintf(askQuestions[rng.IntN(len(askQuestions))], topic)
			}
			return fmt.Sprintf(askStatement[rng.IntN(len(askStatement))], topic)
		}
		eps[i] = dialog.Episode{
			Oracle: dialog.Oracle{Instruction: "get help with the " + topic, Persona: dialog.Persona{Patience: 2}},
			View:   dialog.View{Instructions: "Help the user."},
			Messages: []dialog.Message{
				{Role: dialog.RoleUser, Content: opening},
				{Role: dialog.RoleAssistant, Content: reply()},
				{Role: dialog.RoleUser, Content: "go on."},
				{Role: dialog.RoleAssistant, Content: reply()},
				{Role: dialog.RoleUser, Content: "ok, thanks."},
			},
			End: dialog.Solved,
		}
	}
	return eps
}

var (
	askLaterOnce    sync.Once
	askLaterWeights []float32
	askLaterErr     error
)

// askLaterBase is the tiny chat model after SFT on askLaterLog.
func askLaterBase(t testing.TB) *chatlm.Model {
	t.Helper()
	eps := askLaterLog(256)
	tok, err := chatlm.TrainTokenizer(context.Background(), eps, 512)
	if err != nil {
		t.Fatal(err)
	}
	m, err := chatlm.NewModel(tok, lm.Config{Context: 96, Dim: 32, Layers: 2, Heads: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	askLaterOnce.Do(func() {
		var seqs []chatlm.Sequence
		for i := range eps {
			s, err := m.AgentSequence(&eps[i], nil)
			if err != nil {
				askLaterErr = err
				return
			}
			seqs = append(seqs, s)
		}
		c := DefaultSFTConfig()
		c.Steps, c.BatchSize, c.LR, c.Warmup, c.ValFraction, c.EvalEvery, c.CheckpointEvery, c.Patience = 200, 16, 1e-2, 10, 0, 200, 200, 0
		if _, askLaterErr = SFT(context.Background(), m, seqs, c, t.TempDir(), nil); askLaterErr == nil {
			askLaterWeights = append([]float32(nil), m.LM.Params.Data...)
		}
	})
	if askLaterErr != nil {
		t.Fatal(askLaterErr)
	}
	copy(m.LM.Params.Data, askLaterWeights)
	return m
}

// askLaterSuccess is m's success on the two-turn task's first n test
// instances, group samples each, at the given temperature (0: greedy).
func askLaterSuccess(t testing.TB, m *chatlm.Model, temperature float64, n, group int) float64 {
	t.Helper()
	gen := chatlm.DefaultGenConfig()
	gen.Temperature, gen.MaxNewTokens = temperature, 12
	eps, err := rollout.Run(context.Background(), askLaterTask{}, &chatlm.Agent{Model: m, Gen: gen}, askLaterUser{},
		rollout.Config{Split: "test", Instances: n, Group: group, MaxTurns: 2, Seed: 99})
	if err != nil {
		t.Fatal(err)
	}
	s := 0.0
	for _, ep := range eps {
		if ep.Success {
			s++
		}
	}
	return s / float64(len(eps))
}

// Turn-level credit on the two-turn task: the policy learns to ask in
// its second turn. With the sign flipped, or the turns' advantages
// swapped (the second turn's credit given to the first, which does not
// count), the bar fails. (The first turns' mean |advantage| is not small:
// with K = 2 continuations V̂ before the second turn is a noisy estimate;
// its noise is mean zero, which the swap shows matters: credited with
// it, the second turn does not learn.)
func TestGRPOTurnCreditLearnsWhichTurnCounts(t *testing.T) {
	for _, c := range []struct {
		name  string
		seed  uint64
		edit  func(*RLConfig)
		learn bool
	}{
		{"seed 1", 1, func(*RLConfig) {}, true},
		{"seed 2", 2, func(*RLConfig) {}, true},
		{"sign flipped", 1, func(c *RLConfig) { c.flipAdvantages = true }, false},
		{"turns swapped", 1, func(c *RLConfig) { c.swapTurnCredit = true }, false},
	} {
		cfg := askGRPO(c.seed, false)
		cfg.MaxTurns, cfg.TurnContinuations, cfg.Iterations = 2, 2, 10
		c.edit(&cfg)
		m := askLaterBase(t)
		var r askRun
		r.greedy0, r.sampled0 = askLaterSuccess(t, m, 0, 64, 1), askLaterSuccess(t, m, 1, 32, 4)
		var first, later float64
		_, err := GRPO(context.Background(), m, askLaterTask{}, askLaterUser{}, nil, cfg, t.TempDir(), func(rec map[string]any) {
			if v, ok := rec[MetricReward]; ok {
				r.rewards = append(r.rewards, v.(float64))
				f, _ := rec[MetricTurnAdvFirst].(float64)
				l, _ := rec[MetricTurnAdvLater].(float64)
				first, later = first+f, later+l
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		r.greedy1, r.sampled1 = askLaterSuccess(t, m, 0, 64, 1), askLaterSuccess(t, m, 1, 32, 4)
		t.Logf("%s: held-out greedy %.3f → %.3f, sampled %.3f → %.3f; batch reward %.2f; mean |A| first turns %.3f, second %.3f",
			c.name, r.greedy0, r.greedy1, r.sampled0, r.sampled1, r.rewards, first/float64(cfg.Iterations), later/float64(cfg.Iterations))
		if learnedToAsk(r) != c.learn {
			t.Errorf("%s: greedy %.3f → %.3f, sampled %.3f → %.3f; want the bar met: %v",
				c.name, r.greedy0, r.greedy1, r.sampled0, r.sampled1, c.learn)
		}
	}
}

// A continuation from before an agent turn continues from the very
// state: with the agent's own dice (the episode's seed) it replays the
// logged conversation to the end, user state (the toy user's count of
// tries) included.
func TestContinuationReplaysFromBeforeATurn(t *testing.T) {
	eps := addLogs(t, 16)
	rules := rollout.Rules{Env: dialog.EnvironmentOf(addTask{})}
	var lives []*rollout.Live
	var want []dialog.Episode
	for i := range eps {
		ep := &eps[i]
		k := 0
		for j, m := range ep.Messages {
			if m.Role != dialog.RoleAssistant {
				continue
			}
			if k++; k == 2 {
				l, err := continueBefore(context.Background(), ep, j, ep.Seed, addGuesser{}, addUser{}, rules)
				if err != nil {
					t.Fatal(err)
				}
				lives, want = append(lives, l), append(want, *ep)
			}
		}
	}
	if len(lives) == 0 {
		t.Fatal("no logged conversation of two turns: the test checks nothing")
	}
	if err := playOut(context.Background(), addGuesser{}, addUser{}, lives); err != nil {
		t.Fatal(err)
	}
	for n, l := range lives {
		l.Finish(addTask{})
		if !reflect.DeepEqual(l.Ep.Messages, want[n].Messages) || l.Ep.Reward != want[n].Reward || l.Ep.End != want[n].End {
			t.Errorf("%s: continued %v (reward %v, %s), logged %v (reward %v, %s)", want[n].ID,
				l.Ep.Messages, l.Ep.Reward, l.Ep.End, want[n].Messages, want[n].Reward, want[n].End)
		}
	}
}
