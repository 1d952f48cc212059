package eval

import "fmt"

// Slice is a range of the held-out split kept for one purpose, with its
// own user seeds. Settings (learning rates, budgets, decoding
// temperatures) are chosen on the validation slice; the test slice, which
// carries every verdict, is evaluated only with settings fixed before it
// is looked at. Both lie in the test split, whose problems and personas no
// training stage sees, and never overlap: the test slice is the first
// instances, as every evaluation before slices played, and the validation
// slice starts far beyond it and beyond the RL monitor's fixed set (test
// split from index 5000; train.RLConfig.MonitorStart).
type Slice struct {
	// Name is how flags and manifests name it.
	Name string
	// Start is the slice's first instance of the test split.
	Start int
	// SeedXor is mixed into the run's seed for the slice's user draws, so
	// that a validation episode does not replay a test episode's user.
	SeedXor uint64
}

var (
	// TestSlice carries the verdict: the test split from its first
	// instance, with the run's seed.
	TestSlice = Slice{Name: "test"}
	// ValidationSlice is for choosing settings: the test split from
	// instance 20000 (sets of up to 15,000 problems stay clear of the
	// monitor's at 5000 and of the test slice), users seeded apart.
	ValidationSlice = Slice{Name: "validation", Start: 20000, SeedXor: 0x76616c6964617465}
	// Slices lists them for flags' help.
	Slices = []Slice{TestSlice, ValidationSlice}
)

// MaxSliceEpisodes is the most episodes a slice may hold before it would
// reach the next one's instances.
const MaxSliceEpisodes = 15000

// SliceNamed returns the slice called name ("" is the test slice).
func SliceNamed(name string) (Slice, error) {
	if name == "" {
		return TestSlice, nil
	}
	for _, s := range Slices {
		if s.Name == name {
			return s, nil
		}
	}
	return Slice{}, fmt.Errorf("unknown slice %q (known: test, validation)", name)
}

// Seed is the user seed of the slice's episodes in a run seeded with seed.
func (s Slice) Seed(seed uint64) uint64 { return seed ^ s.SeedXor }

// Check refuses n episodes that would run past the slice into another.
func (s Slice) Check(n int) error {
	if n > MaxSliceEpisodes {
		return fmt.Errorf("%d episodes on the %s slice: at most %d, or it would reach the instances of another slice", n, s.Name, MaxSliceEpisodes)
	}
	return nil
}
