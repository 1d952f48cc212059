package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

// Override flags default to a value that means "the preset's" (0, or -1
// where 0 is meaningful). A value given on the command line must be a
// real setting: a negative --steps or --lr used to fall back to the
// preset's silently.

// atLeast checks each named flag that was given against lo (strictly
// above it when strict).
func atLeast(cmd *cobra.Command, lo float64, strict bool, names ...string) error {
	for _, name := range names {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		v, err := strconv.ParseFloat(f.Value.String(), 64)
		if err != nil {
			return fmt.Errorf("--%s %s: %w", name, f.Value.String(), err)
		}
		if strict && !(v > lo) {
			return fmt.Errorf("--%s %s: want > %v", name, f.Value.String(), lo)
		}
		if !strict && !(v >= lo) {
			return fmt.Errorf("--%s %s: want ≥ %v", name, f.Value.String(), lo)
		}
	}
	return nil
}
