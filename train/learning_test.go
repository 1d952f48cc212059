package train

// The learning test: a toy dialogue task whose optimal behaviour is known
// (ask a question in the first turn), a base policy that does so in about
// a quarter of its samples, and GRPO, which must make greedy decoding ask
// on held-out instances, and must make the policy ask less when the
// advantages are flipped.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/gemm"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/rollout"
)

var (
	askTopics    = []string{"trip", "party", "garden", "budget", "move", "dinner", "course", "meeting", "wedding", "race", "concert", "camp"}
	askOpenings  = []string{"help me plan my %s on day %d.", "i have a %s to sort out on day %d.", "can you help with the %s on day %d."}
	askQuestions = []string{"what kind of %s do you want?", "when is the %s?", "who is coming to the %s?"}
	askStatement = []string{"here is a plan for the %s.", "i will sort out the %s now.", "the %s is a good idea."}
)

// askCase is instance index of split: a topic, an opening (form kind of
// askOpenings) and a day. Train instances have an even topic+day, test
// instances an odd one, so no test opening is ever trained on.
func askCase(split string, index int) (topic, opening string, kind int) {
	stream := uint64(1)
	if split == "test" {
		stream = 2
	}
	rng := rand.New(rand.NewPCG(uint64(index), stream))
	ti, day := rng.IntN(len(askTopics)), 1+rng.IntN(8)
	if (ti+day)%2 != int(stream-1) {
		day++
	}
	topic, kind = askTopics[ti], rng.IntN(len(askOpenings))
	return topic, fmt.Sprintf(askOpenings[kind], topic, day), kind
}

// askTask rewards an agent whose first turn asks a question.
type askTask struct{}

func (askTask) Name() string { return "ask" }
func (askTask) Spec() string { return "ask" }

func (askTask) Instance(split string, index int) (*dialog.Oracle, *dialog.View, error) {
	if split != "train" && split != "test" {
		return nil, nil, fmt.Errorf("ask: unknown split %q", split)
	}
	topic, opening, _ := askCase(split, index)
	return &dialog.Oracle{Task: "ask", Split: split, ID: fmt.Sprintf("ask/%s/%d", split, index),
			Instruction: "get help with the " + topic, Opening: opening, Persona: dialog.Persona{Patience: 1}},
		&dialog.View{Task: "ask", Instructions: "Help the user."}, nil
}

func (askTask) Score(_ *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	for _, m := range msgs {
		if m.Role == dialog.RoleAssistant {
			if strings.Contains(m.Content, "?") {
				return dialog.Score{Outcome: "asked", Reward: 1, Success: true}
			}
			return dialog.Score{Outcome: "told"}
		}
	}
	return dialog.Score{}
}

// askUser opens with its request and ends after the agent's first turn.
type askUser struct{}

type askSession struct{ o *dialog.Oracle }

func (askUser) NewSession(o *dialog.Oracle, _ *rand.Rand) dialog.UserSession {
	return askSession{o}
}

func (s askSession) Open(context.Context) (string, error) { return s.o.Opening, nil }

func (askSession) Reply(context.Context, []dialog.Message) (string, bool, error) {
	return "ok, thanks.", true, nil
}

// askLog is a logged corpus on the train split. The logging agent asks
// in 60% of its replies to "can you help with …" and in 10% of the
// others: 27% in all, and a policy that imitates it asks, when greedy,
// about the third of the instances that open with "can you".
func askLog(n int) []dialog.Episode {
	rng := rand.New(rand.NewPCG(7, 7))
	eps := make([]dialog.Episode, n)
	for i := range eps {
		topic, opening, kind := askCase("train", i)
		p := 0.1
		if kind == 2 {
			p = 0.6
		}
		reply := askStatement[rng.IntN(len(askStatement))]
		if rng.Float64() < p {
			reply = askQuestions[rng.IntN(len(askQuestions))]
		}
		eps[i] = dialog.Episode{
			Oracle: dialog.Oracle{Instruction: "get help with the " + topic, Persona: dialog.Persona{Patience: 1}},
			View:   dialog.View{Instructions: "Help the user."},
			Messages: []dialog.Message{
				{Role: dialog.RoleUser, Content: opening},
				{Role: dialog.RoleAssistant, Content: fmt.Sprintf(reply, topic)},
				{Role: dialog.RoleUser, Content: "ok, thanks."},
			},
			End: dialog.Solved,
		}
	}
	return eps
}

// askBase is the tiny chat model after SFT on askLog, computed once.
var (
	askOnce    sync.Once
	askWeights []float32
	askErr     error
)

func askBase(t testing.TB) *chatlm.Model {
	t.Helper()
	eps := askLog(256)
	// chatlmtest.TinyModel's 300-token vocabulary is nearly bytes on this
	// corpus; 512 covers its words, so a reply is about 8 tokens.
	tok, err := chatlm.TrainTokenizer(context.Background(), eps, 512)
	if err != nil {
		t.Fatal(err)
	}
	m, err := chatlm.NewModel(tok, lm.Config{Context: 64, Dim: 32, Layers: 2, Heads: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	askOnce.Do(func() {
		var seqs []chatlm.Sequence
		for i := range eps {
			s, err := m.AgentSequence(&eps[i], nil)
			if err != nil {
				askErr = err
				return
			}
			seqs = append(seqs, s)
		}
		c := DefaultSFTConfig()
		c.Steps, c.BatchSize, c.LR, c.Warmup, c.ValFraction, c.EvalEvery, c.CheckpointEvery, c.Patience = 200, 16, 1e-2, 10, 0, 200, 200, 0
		if _, askErr = SFT(context.Background(), m, seqs, c, t.TempDir(), nil); askErr == nil {
			askWeights = append([]float32(nil), m.LM.Params.Data...)
		}
	})
	if askErr != nil {
		t.Fatal(askErr)
	}
	copy(m.LM.Params.Data, askWeights)
	return m
}

// askSuccess is m's success on the first n test instances, group samples
// each, at the given temperature (0: greedy).
func askSuccess(t testing.TB, m *chatlm.Model, temperature float64, n, group int) float64 {
	t.Helper()
	gen := chatlm.DefaultGenConfig()
	gen.Temperature, gen.MaxNewTokens = temperature, 12
	eps, err := rollout.Run(context.Background(), askTask{}, &chatlm.Agent{Model: m, Gen: gen}, askUser{},
		rollout.Config{Split: "test", Instances: n, Group: group, MaxTurns: 1, Seed: 99})
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

func askGRPO(seed uint64, flip bool) RLConfig {
	c := DefaultRLConfig()
	c.Iterations, c.InstancesPerStep, c.Group, c.MaxTurns, c.MiniBatch, c.UpdatesPerBatch = 12, 8, 8, 1, 32, 2
	c.Gen.MaxNewTokens = 12
	c.LR, c.Warmup, c.MonitorEvery, c.CheckpointEvery, c.Seed = 1e-3, 0, 0, 1000, seed
	c.flipAdvantages = flip
	return c
}

// askRun trains the base by GRPO and reports the greedy and sampled
// success on held-out instances before and after, and each iteration's
// batch reward and share of flat groups.
type askRun struct {
	greedy0, greedy1, sampled0, sampled1 float64
	rewards, flat                        []float64
}

func runAsk(t *testing.T, cfg RLConfig) askRun {
	t.Helper()
	m := askBase(t)
	var r askRun
	r.greedy0, r.sampled0 = askSuccess(t, m, 0, 64, 1), askSuccess(t, m, 1, 32, 4)
	_, err := GRPO(context.Background(), m, askTask{}, askUser{}, nil, cfg, t.TempDir(), func(rec map[string]any) {
		if v, ok := rec["rollout/reward_mean"]; ok {
			checkKeys(t, rec, "rollout/group_reward_var", "rollout/flat_groups")
			r.rewards, r.flat = append(r.rewards, v.(float64)), append(r.flat, rec["rollout/flat_groups"].(float64))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	r.greedy1, r.sampled1 = askSuccess(t, m, 0, 64, 1), askSuccess(t, m, 1, 32, 4)
	t.Logf("seed %d flip=%v: held-out greedy success %.3f → %.3f, sampled %.3f → %.3f; batch reward %.2f, flat groups %.2f",
		cfg.Seed, cfg.flipAdvantages, r.greedy0, r.greedy1, r.sampled0, r.sampled1, r.rewards, r.flat)
	return r
}

// The base asks in about a quarter of its samples (and, greedy, on about
// a third of the held-out instances); 12 iterations of GRPO make greedy
// decoding ask on more than 80% of them, for every seed. The iteration
// records carry the group diagnostics.
func TestGRPOLearnsToAsk(t *testing.T) {
	base := askBase(t)
	if s := askSuccess(t, base, 1, 32, 4); s < 0.1 || s > 0.4 {
		t.Fatalf("base policy asks in %.3f of its samples, want about a quarter", s)
	}
	precisions := []lm.Precision{lm.FP32}
	if gemm.HasBF16() {
		precisions = append(precisions, lm.BF16)
	}
	// The same bar in both: bf16 (rollouts, log-probs and the update's
	// products; fp32 master weights and optimizer) must learn as fp32 does.
	for _, p := range precisions {
		t.Run(p.String(), func(t *testing.T) {
			defer lm.SetPrecision(lm.SetPrecision(p))
			for _, seed := range []uint64{1, 2, 3} {
				r := runAsk(t, askGRPO(seed, false))
				if !(r.greedy0 < 0.5 && r.greedy1 > 0.8) {
					t.Errorf("seed %d: greedy held-out success %.3f → %.3f, want from below 0.5 to above 0.8", seed, r.greedy0, r.greedy1)
				}
			}
		})
	}
}

// With the advantages' sign flipped, the same runs make the policy ask
// less: greedy held-out success falls below the base's, and the sampled
// one below half the base's.
func TestGRPOFlippedAdvantageUnlearns(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		r := runAsk(t, askGRPO(seed, true))
		if !(r.greedy1 < r.greedy0) || !(r.sampled1 < r.sampled0/2) {
			t.Errorf("seed %d flipped: greedy held-out success %.3f → %.3f, sampled %.3f → %.3f; want the greedy one down, the sampled one below half",
				seed, r.greedy0, r.greedy1, r.sampled0, r.sampled1)
		}
	}
}

// groupRewardStats on hand-computed groups of 4: {1,0,0,0} has mean 1/4
// and variance 3/16; {1,1,1,1} and {0,0,0,0} are flat; the last, short
// group {0.5,1.5} has variance 1/4.
func TestGroupRewardStats(t *testing.T) {
	rewards := []float64{1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0.5, 1.5}
	v, flat := groupRewardStats(rewards, 4)
	if want := (3.0/16 + 0 + 0 + 1.0/4) / 4; math.Abs(v-want) > 1e-12 || flat != 0.5 {
		t.Fatalf("got variance %v, flat share %v; want %v and 0.5", v, flat, want)
	}
	if v, flat := groupRewardStats(nil, 4); v != 0 || flat != 0 {
		t.Fatalf("no rewards: got %v, %v; want 0, 0", v, flat)
	}
}
