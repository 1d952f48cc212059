package reproduce

import (
	"strings"
	"testing"
)

func TestStaticNoteTellsShiftFromDrift(t *testing.T) {
	val := func(v float64) *float64 { return &v }
	rows := []Row{{Arm: ArmBase, Figures: Figures{Success: val(0.45)}}, {Arm: ArmStatic, Figures: Figures{Success: val(0.41)}}}
	learned := []diagnosis{{arm: ArmStatic, first: 0.12, last: 0.24, kl: 0.02}, {arm: ArmStatic, first: 0.18, last: 0.26, kl: 0.01}, {arm: ArmOracle, first: 0.5, last: 0.4, kl: 0.9}}
	if got := staticNote(rows, learned); !strings.Contains(got, "policy-induced shift") || !strings.Contains(got, "from 0.150 to 0.250") || !strings.Contains(got, "at most 0.020") {
		t.Errorf("a rising reward: %q", got)
	}
	flat := []diagnosis{{arm: ArmStatic, first: 0.2, last: 0.19, kl: 0.5}}
	if got := staticNote(rows, flat); !strings.Contains(got, "drift") || strings.Contains(got, "the policy-induced shift the paper") {
		t.Errorf("a flat reward: %q", got)
	}
	rows[1].Success = val(0.5)
	if got := staticNote(rows, learned); got != "" {
		t.Errorf("static above the base still gets a note: %q", got)
	}
}
