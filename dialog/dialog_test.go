package dialog

import "testing"

func TestEndReasonByUser(t *testing.T) {
	for r, want := range map[EndReason]bool{Solved: true, GaveUp: true, UserEnded: true, MaxTurns: false, "": false} {
		if got := r.ByUser(); got != want {
			t.Errorf("%q.ByUser() = %v, want %v", r, got, want)
		}
	}
}

func TestAccepts(t *testing.T) {
	phrases := []string{"Perfect, that's what I wanted. Thanks!", "That's it, thank you!"}
	for _, tc := range []struct {
		msg  string
		role Role
		want bool
	}{
		{"Perfect, that's what I wanted. Thanks!", RoleUser, true},
		{"Let me look again. Perfect, that's what I wanted. Thanks!", RoleUser, true}, // a filler
		{"Perfect, that's waht I wanted. Thanks!", RoleUser, true},                    // a typo
		{"Perfect, that's waht I wnated. Thanks!", RoleUser, false},                   // two
		{"That's it, thank you!", RoleAssistant, false},
		{"Thanks, that's closer.", RoleUser, false},
		{"That's it, thank you! But one more thing: the date is wrong.", RoleUser, false},
	} {
		if got := Accepts([]Message{{Role: tc.role, Content: tc.msg}}, phrases); got != tc.want {
			t.Errorf("Accepts(%s %q) = %v, want %v", tc.role, tc.msg, got, tc.want)
		}
	}
	if Accepts(nil, phrases) {
		t.Error("an empty conversation accepted")
	}
}

func TestNaiveRatesScaled(t *testing.T) {
	r := NaiveRates{Sycophancy: 0.5, Leakage: 0.7, OverShare: 0.4, PrematureEnd: 0.02}
	if got, want := r.Scaled(2, 0), (NaiveRates{Sycophancy: 0, Leakage: 1, OverShare: 0.8, PrematureEnd: 0.02}); got != want {
		t.Errorf("Scaled(2, 0) = %+v, want %+v", got, want)
	}
	if got := r.Scaled(1, 1); got != r {
		t.Errorf("Scaled(1, 1) = %+v, want %+v", got, r)
	}
}
