package train

import (
	"reflect"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
)

// A batch must name the sample of every sequence and carry a sampled
// log-prob row (nil or not) for each; the rewards come in whole groups.
func TestRLBatchCheck(t *testing.T) {
	seqs := make([]chatlm.Sequence, 3)
	good := func() rlBatch {
		return rlBatch{rewards: []float64{1, 0, 0, 1}, seqs: seqs, owner: []int{0, 0, 3}, sampled: make([][]float32, 3)}
	}
	if err := good().check(2); err != nil {
		t.Fatalf("good batch: %v", err)
	}
	for name, edit := range map[string]func(*rlBatch){
		"no owners":         func(b *rlBatch) { b.owner = nil },
		"owner too far":     func(b *rlBatch) { b.owner[2] = 4 },
		"negative owner":    func(b *rlBatch) { b.owner[0] = -1 },
		"no sampled rows":   func(b *rlBatch) { b.sampled = nil },
		"a partial group":   func(b *rlBatch) { b.rewards = b.rewards[:3] },
		"no samples at all": func(b *rlBatch) { *b = rlBatch{} },
	} {
		b := good()
		edit(&b)
		if err := b.check(2); err == nil {
			t.Errorf("%s: got nil, want an error", name)
		}
	}
}

// Every sequence gets its sample's advantage.
func TestRLBatchSeqAdvantages(t *testing.T) {
	b := rlBatch{seqs: make([]chatlm.Sequence, 4), owner: []int{0, 0, 1, 2}}
	if got, want := b.seqAdvantages([]float64{0.5, -1, 2}), []float64{0.5, 0.5, -1, 2}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
