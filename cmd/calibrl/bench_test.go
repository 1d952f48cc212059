package main

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/calibrl/calibrl/lm"
)

func TestBenchSmoke(t *testing.T) {
	cmd := newBenchCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--json", "--steps", "1", "--models", "A", "--batch", "2", "--seq-len", "16", "--prompt-len", "4", "--new-tokens", "4", "--gemm-size", "64",
		"--rl-steps", "1", "--rl-instances", "1", "--rl-group", "2"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if len(rep.Configs) != 1 || rep.Configs[0].Name != "A" || rep.Configs[0].Params != 891648 || rep.GemmGFLOPS <= 0 {
		t.Errorf("got %+v, want one config A with 891648 params and a GEMM rate", rep)
	}
	for _, r := range rep.Configs {
		if !(r.TrainTokensPerS > 0 && r.ForwardMS > 0 && r.SampleTokensPerS > 0) {
			t.Errorf("got %+v, want positive figures", r)
		}
	}
	if r := rep.RL; r == nil || r.Name != "A" || r.Conversations != 2 || !(r.IterFraction > 0) || r.TrainTokensPerS != rep.Configs[0].TrainTokensPerS {
		t.Errorf("rl_iteration %+v: want A's GRPO iteration of 2 conversations, its fraction of A's training tokens/s", r)
	}
	// --ab: every figure at both precisions, the GRPO iteration and its
	// fraction of each precision's training rate last.
	n := len(rep.Precision)
	if n != 13 || rep.Precision[n-2].Name != "GRPO iteration" || rep.Precision[n-1].Name != "GRPO iteration of training" {
		t.Fatalf("precision rows %+v: want 8 GEMM shapes, the square, training, sampling, the GRPO iteration and its fraction", rep.Precision)
	}
	// The fraction is one iteration's tokens per second over the same
	// precision's training tokens/s: the two precisions' fractions over
	// their iteration and training figures give the same token count.
	iter, frac := rep.Precision[n-2], rep.Precision[n-1]
	train := rep.Precision[rowIndex(rep.Precision, lm.TrainingRow)]
	t32, t16 := frac.FP32*iter.FP32*train.FP32, frac.BF16*iter.BF16*train.BF16
	if !(t32 > 0) || math.Abs(t32-t16) > 1e-6*t32 || math.Abs(t32-math.Round(t32)) > 1e-6*t32 {
		t.Errorf("fraction %+v of iteration %+v and training %+v: tokens %v and %v, want one whole number", frac, iter, train, t32, t16)
	}
	for _, r := range rep.Precision {
		if !(r.FP32 > 0 && r.BF16 > 0) {
			t.Errorf("%s: fp32 %v, bf16 %v, want both positive", r.Name, r.FP32, r.BF16)
		}
	}
	bad := newBenchCmd()
	bad.SetOut(&bytes.Buffer{})
	bad.SetArgs([]string{"--models", "C"})
	if err := bad.Execute(); err == nil {
		t.Error("--models C: got no error")
	}
}
