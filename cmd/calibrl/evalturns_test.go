package main

import (
	"path/filepath"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// A standalone evaluation plays the turn limit and the task level
// reproduce plays at --preset (default quick: 6 turns), the horizon N of
// an hN level, or --max-turns; not the level's default of 10, which made
// studies incomparable with the verdict.
func TestEvalPlaysThePresetsTurnLimit(t *testing.T) {
	for _, c := range []struct {
		name     string
		args     []string
		task     string
		maxTurns int
	}{
		{"default", nil, "mathchat", 6},
		{"tiny", []string{"--preset", "tiny"}, "mathchat:easy", 6},
		{"paper", []string{"--preset", "paper"}, "mathchat", 10},
		{"horizon", []string{"--task", "mathchat:h8"}, "mathchat:h8", 8},
		{"flag", []string{"--max-turns", "3"}, "mathchat", 3},
	} {
		out := filepath.Join(t.TempDir(), "eps.jsonl")
		args := append([]string{"eval", "--agent", "scripted:careful", "-n", "3", "--json", "--episodes-out", out}, c.args...)
		mustRun(t, args...)
		eps, err := dialog.LoadEpisodes(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range eps {
			if ep.MaxTurns != c.maxTurns || ep.Task != c.task {
				t.Errorf("%s: episode %s played %s with %d turns, want %s with %d", c.name, ep.ID, ep.Task, ep.MaxTurns, c.task, c.maxTurns)
			}
		}
	}
}
