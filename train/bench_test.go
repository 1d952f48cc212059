package train

import (
	"context"
	"testing"

	"github.com/calibrl/calibrl/lm"
)

// The benchmark's conversations have the fixed shape it promises: one
// sequence per conversation (every turn re-renders exactly) of a length
// set by the turn script alone.
func TestBenchRLShape(t *testing.T) {
	cfg := lm.Config{VocabSize: 512, Context: 256, Dim: 32, Layers: 1, Heads: 2}
	bc := RLBenchConfig{Steps: 1, Instances: 2, Group: 2, Turns: 3, AgentTurn: 6, UserTurn: 5, MiniBatch: 2, Updates: 1}
	res, err := BenchRL(context.Background(), lm.NamedConfig{Name: "t", Config: cfg}, bc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sequences != 4 || res.Conversations != 4 {
		t.Fatalf("%d sequences for %d conversations, want 4 and 4", res.Sequences, res.Conversations)
	}
	again, err := BenchRL(context.Background(), lm.NamedConfig{Name: "t", Config: cfg}, bc)
	if err != nil {
		t.Fatal(err)
	}
	if again.SequenceTokens != res.SequenceTokens || res.SequenceTokens%4 != 0 {
		t.Fatalf("sequence tokens %d then %d: want equal, 4 sequences of one length", res.SequenceTokens, again.SequenceTokens)
	}
	if !(res.IterTokensPerS > 0 && res.IterationS >= res.RolloutS) {
		t.Fatalf("implausible timing %+v", res)
	}
}

// BenchmarkRLIteration is calibrl bench's GRPO iteration on model A, for
// profiling (go test -run - -bench RLIteration -benchtime 1x -cpuprofile).
func BenchmarkRLIteration(b *testing.B) {
	bc := DefaultRLBenchConfig()
	bc.Steps = max(1, b.N)
	res, err := BenchRL(context.Background(), lm.BenchModels()[0], bc)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(res.IterTokensPerS, "tokens/s")
	b.ReportMetric(res.RolloutS, "rollout-s")
	b.ReportMetric(res.LogprobS, "logprob-s")
	b.ReportMetric(res.UpdateS, "update-s")
}

// BenchmarkRLIterationBF16 is BenchmarkRLIteration in bf16.
func BenchmarkRLIterationBF16(b *testing.B) {
	defer lm.SetPrecision(lm.SetPrecision(lm.BF16))
	BenchmarkRLIteration(b)
}
