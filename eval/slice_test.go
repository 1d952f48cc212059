package eval

import (
	"strings"
	"testing"
)

// The slices never share an instance within their bound, the test slice
// is what evaluations played before slices (index 0, the run's seed), and
// the validation slice stays clear of the monitor's set at 5000.
func TestSlicesAreDisjoint(t *testing.T) {
	if TestSlice.Start != 0 || TestSlice.Seed(7) != 7 {
		t.Errorf("the test slice moved: %+v", TestSlice)
	}
	const monitorStart, monitorN = 5000, 32
	v := ValidationSlice
	if v.Start < TestSlice.Start+MaxSliceEpisodes || v.Start < monitorStart+monitorN || v.Seed(7) == 7 {
		t.Errorf("validation %+v overlaps the test slice or the monitor, or shares its users", v)
	}
	if err := v.Check(MaxSliceEpisodes + 1); err == nil || !strings.Contains(err.Error(), "at most 15000") {
		t.Errorf("oversized slice: %v", err)
	}
	for name, want := range map[string]Slice{"": TestSlice, "test": TestSlice, "validation": ValidationSlice} {
		if got, err := SliceNamed(name); err != nil || got != want {
			t.Errorf("SliceNamed(%q) = %+v, %v", name, got, err)
		}
	}
	if _, err := SliceNamed("valid"); err == nil || !strings.Contains(err.Error(), "known: test, validation") {
		t.Errorf("unknown slice: %v", err)
	}
}
