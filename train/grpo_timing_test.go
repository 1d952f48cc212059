package train

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task"
)

// TestGRPOMathchatIterationTime measures GRPO iterations of the 0.85M
// model (lm.DefaultConfig) on mathchat against the naive user, with the
// default G = 8 and 8 instances per step (go test -run IterationTime
// -long -v). The policy is untrained or briefly fine-tuned on logs, so
// the figure covers both long babbling turns and short regular ones.
func TestGRPOMathchatIterationTime(t *testing.T) {
	if !*long {
		t.Skip("slow: run with -long")
	}
	tk, err := task.Lookup("mathchat")
	if err != nil {
		t.Fatal(err)
	}
	human, _ := tk.User("human")
	naive, _ := tk.User("naive")
	careful, _ := tk.Agent("careful")
	logs, err := rollout.Run(context.Background(), tk, careful, human, rollout.Config{Split: "train", Start: 100000, Instances: 200, MaxTurns: 8, Seed: 1, AgentName: "careful"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := chatlm.TrainTokenizer(context.Background(), logs, 512)
	if err != nil {
		t.Fatal(err)
	}
	net, err := lm.New(lm.DefaultConfig(), rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := chatlm.New(net, tok)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("model: %d parameters", net.Config.NumParams())
	for _, sft := range []int{0, 150} {
		if sft > 0 {
			var seqs []chatlm.Sequence
			for i := range logs {
				s, err := m.AgentSequence(&logs[i], nil)
				if err != nil {
					t.Fatal(err)
				}
				seqs = append(seqs, s)
			}
			c := DefaultSFTConfig()
			c.Steps, c.ValFraction, c.EvalEvery, c.CheckpointEvery, c.Patience = sft, 0, sft, sft, 0
			start := time.Now()
			if _, err := SFT(context.Background(), m, seqs, c, t.TempDir(), nil); err != nil {
				t.Fatal(err)
			}
			t.Logf("SFT %d steps: %v", sft, time.Since(start))

		}
		cfg := DefaultRLConfig()
		cfg.Iterations, cfg.MonitorEvery, cfg.CheckpointEvery = 2, 0, 100
		_, err := GRPO(context.Background(), m, tk, naive, nil, cfg, t.TempDir(), func(r map[string]any) {
			if r["perf/iter_s"] != nil {
				t.Logf("grpo, sft %d, iteration %v: %.1f s (rollout %.1f s), reward %.2f, turns %.1f, agent tokens %.0f/conversation, split %.2f, %d sequences, %d updates, %.0f tokens/s",
					sft, r["step"], r["perf/iter_s"], r["perf/rollout_s"], r["rollout/reward_mean"], r["rollout/turns"], r["rollout/agent_tokens"], r["rollout/split_turns"], r["train/sequences"], r["train/updates"], r["perf/tokens_per_s"])
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if sft == 0 {
			continue
		}
		scfg := DefaultStaticConfig()
		scfg.Iterations, scfg.MonitorEvery, scfg.CheckpointEvery = 2, 0, 100
		_, err = Static(context.Background(), m, tk, logs, tk.Agent, naive, nil, scfg, t.TempDir(), func(r map[string]any) {
			if r["perf/iter_s"] != nil {
				t.Logf("static, sft %d, iteration %v: %.1f s (sampling and completion %.1f s), reward %.2f, %d updates",
					sft, r["step"], r["perf/iter_s"], r["perf/rollout_s"], r["rollout/reward_mean"], r["train/updates"])
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkGRPOIterationToy times one GRPO iteration (8 instances × G 8)
// of the tiny toy model.
func BenchmarkGRPOIterationToy(b *testing.B) {
	m := toyPolicy(b, 80)
	cfg := smallGRPO()
	cfg.InstancesPerStep, cfg.Group, cfg.MonitorEvery, cfg.CheckpointEvery = 8, 8, 0, 1<<30
	b.ReportAllocs()
	cfg.Iterations = b.N
	if _, err := GRPO(context.Background(), m, addTask{}, addUser{}, nil, cfg, b.TempDir(), nil); err != nil {
		b.Fatal(err)
	}
}
