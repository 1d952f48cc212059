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

// pass@k over problems: the mean of each problem's estimate, a problem
// counting only for k up to its own samples.
func TestPassAtKOverProblems(t *testing.T) {
	n := map[int]int{0: 4, 1: 4, 2: 2}
	c := map[int]int{0: 0, 1: 2, 2: 2}
	got := PassAtK(4, n, c)
	// k=1: (0 + 0.5 + 1)/3; k=2: (0 + 5/6 + 1)/3; k=3,4: (0 + 1)/2.
	want := map[int]float64{1: 0.5, 2: (5.0/6 + 1) / 3, 3: 0.5, 4: 0.5}
	for k, w := range want {
		if d := got[k] - w; d > 1e-12 || d < -1e-12 {
			t.Errorf("pass@%d = %v, want %v", k, got[k], w)
		}
	}
}
