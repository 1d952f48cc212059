package chatlm

import (
	"reflect"
	"testing"
)

// The sampler's log-probs line up with the trained positions of the
// sequences built from the turns, forced ids skipped; a sequence that is
// not built from those turns gets none.
func TestSampledLogpSkipsForcedIDs(t *testing.T) {
	turn := Turn{IDs: []int{5, 6, 7, 8}, LogProbs: []float32{-1, 0, -3, -4}, Forced: []bool{false, true, false, false}}
	seq := TurnSequence([]int{1, 2, 3}, turn)
	got := sampledLogp(seq, []*Turn{&turn})
	want := []float32{0, 0, -1, 0, -3, -4, 0}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sampled log-probs %v, want %v (mask %v)", got, want, seq.Mask)
	}
	other := Turn{IDs: []int{5, 9, 7, 8}, LogProbs: []float32{-1, -2, -3, -4}}
	if got := sampledLogp(seq, []*Turn{&other}); got != nil {
		t.Fatalf("log-probs of other ids: %v, want nil", got)
	}
	if got := sampledLogp(seq, nil); got != nil {
		t.Fatalf("no turns: %v, want nil", got)
	}
}
