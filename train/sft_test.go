package train

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/chatlm/chatlmtest"
)

func toySFT(t *testing.T) (*chatlm.Model, []chatlm.Sequence) {
	t.Helper()
	eps := chatlmtest.AddEpisodes(64, 3)
	m := chatlmtest.TinyModel(t, eps)
	var seqs []chatlm.Sequence
	for i := range eps {
		s, err := m.AgentSequence(&eps[i], nil)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, s)
	}
	return m, seqs
}

func smallSFT() SFTConfig {
	c := DefaultSFTConfig()
	c.Steps, c.BatchSize, c.EvalEvery, c.CheckpointEvery, c.Warmup, c.LR, c.Patience = 60, 8, 10, 20, 5, 3e-3, 0
	c.Seed = 9
	return c
}

func TestSFTLearnsAgentTurns(t *testing.T) {
	m, seqs := toySFT(t)
	res, err := SFT(context.Background(), m, seqs, smallSFT(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ValSeqs == 0 || res.TrainSeqs+res.ValSeqs != len(seqs) {
		t.Fatalf("split %d+%d of %d", res.TrainSeqs, res.ValSeqs, len(seqs))
	}
	if !(res.ValNLL < 0.5*res.FirstVal) {
		t.Fatalf("validation NLL %.3f → %.3f: want it at least halved", res.FirstVal, res.ValNLL)
	}
	if !(res.TrainNLL < res.FirstNLL) {
		t.Fatalf("training NLL %.3f → %.3f: want it to fall", res.FirstNLL, res.TrainNLL)
	}
}

// Interrupting and resuming ends with the same weights as one run.
func TestSFTResumeGivesSameWeights(t *testing.T) {
	cfg := smallSFT()
	m1, seqs := toySFT(t)
	if _, err := SFT(context.Background(), m1, seqs, cfg, filepath.Join(t.TempDir(), "a"), nil); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "b")
	m2, _ := toySFT(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := SFT(ctx, m2, seqs, cfg, out, func(rec map[string]any) {
		if rec["step"] == 27 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: got %v, want context.Canceled", err)
	}
	m3, _ := toySFT(t) // a fresh process: initial weights, resumed from disk
	resumedAt := -1
	if _, err := SFT(context.Background(), m3, seqs, cfg, out, func(rec map[string]any) {
		if rec["event"] == "resume" {
			resumedAt = rec["step"].(int)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if resumedAt != 27 {
		t.Fatalf("resumed at step %d, want 27", resumedAt)
	}
	if !reflect.DeepEqual(m1.LM.Params.Data, m3.LM.Params.Data) {
		t.Fatal("resumed run's weights differ from the uninterrupted run's")
	}
	// A different seed on the same folder is refused, not mixed in.
	cfg.Seed++
	if _, err := SFT(context.Background(), m3, seqs, cfg, out, nil); err == nil {
		t.Fatal("resuming with another seed: want an error")
	}
}

// Each epoch visits every sequence once, and length bucketing keeps a
// batch's lengths close, which is what saves the padding.
func TestBatcherVisitsAllAndBuckets(t *testing.T) {
	var seqs []chatlm.Sequence
	for i := range 200 {
		seqs = append(seqs, chatlm.Sequence{IDs: make([]int, 10+(i*37)%300)})
	}
	b := &batcher{seqs: seqs, size: 8, seed: 4}
	seen := map[int]int{}
	var spread, randomSpread float64
	for step := 0; step < 25; step++ { // one epoch: 25 × 8 = 200
		batch := b.batch(step)
		lo, hi := 1<<30, 0
		for _, s := range batch {
			lo, hi = min(lo, len(s.IDs)), max(hi, len(s.IDs))
			seen[len(s.IDs)]++
		}
		spread += float64(hi - lo)
	}
	for i, s := range seqs {
		if seen[len(s.IDs)] == 0 {
			t.Fatalf("sequence %d never visited in the first epoch", i)
		}
	}
	total := 0
	for _, c := range seen {
		total += c
	}
	if total != 200 {
		t.Fatalf("visited %d sequences in an epoch of 200", total)
	}
	randomSpread = 25 * 250 // a random batch of 8 spans most of the 10..310 range
	if spread > randomSpread/3 {
		t.Fatalf("mean length spread in a batch %.0f: bucketing not working", spread/25)
	}
	// A fresh batcher (a resumed run) rebuilds the same batch for a step.
	again, first := (&batcher{seqs: seqs, size: 8, seed: 4}).batch(30), b.batch(30)
	for i := range again {
		if len(again[i].IDs) != len(first[i].IDs) {
			t.Fatal("a fresh batcher built a different batch for the same step")
		}
	}
}
