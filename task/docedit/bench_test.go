package docedit

import (
	"context"
	"testing"

	"github.com/calibrl/calibrl/rollout"
)

// BenchmarkInstance measures generating a target, corrupting it into the
// BLEU band and describing the plan.
func BenchmarkInstance(b *testing.B) {
	tk := newTestTask(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, _, err := tk.Instance("train", i); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEpisodeCarefulHuman measures whole episodes of the careful
// agent with the human proxy, scoring included.
func BenchmarkEpisodeCarefulHuman(b *testing.B) {
	tk := newTestTask(b)
	agent, _ := tk.Agent("careful")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := rollout.Run(context.Background(), tk, agent, Human{}, rollout.Config{Split: "test", Start: i, Instances: 1, Workers: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
