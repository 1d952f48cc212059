package dialog

import "testing"

func TestEndReasonByUser(t *testing.T) {
	for r, want := range map[EndReason]bool{Solved: true, GaveUp: true, UserEnded: true, MaxTurns: false, "": false} {
		if got := r.ByUser(); got != want {
			t.Errorf("%q.ByUser() = %v, want %v", r, got, want)
		}
	}
}
