package runreport

import (
	"sort"

	"github.com/calibrl/calibrl/summary"
)

// The rows of summary.json, as package summary defines them.
type (
	Row        = summary.Row
	Figures    = summary.Figures
	SeedRow    = summary.SeedRow
	Comparison = summary.Comparison
)

// Set is one evaluation of every arm: the run's primary evaluation, or a
// secondary one (another decoding, such as greedy) that summary.json
// holds beside it.
type Set struct {
	// Name is "" for the primary set, else the JSON key it was found
	// under ("greedy").
	Name string
	// Notes are remarks shown above the set's tables.
	Notes []string
	Rows  []Row
}

// Decoding is the set's decoding as its rows name it, or "".
func (s Set) Decoding() string {
	if len(s.Rows) == 0 {
		return ""
	}
	return s.Rows[0].Decoding
}

// BLEU reports whether the set's headline figure is BLEU.
func (s Set) BLEU() bool { return len(s.Rows) > 0 && s.Rows[0].BLEU != nil }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
