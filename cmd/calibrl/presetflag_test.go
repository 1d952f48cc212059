package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every command that takes --preset plays the task reproduce plays at that
// preset: the preset's level on a bare task name, before the data, and the
// family's own budgets.
func TestPresetTaskAppliesTheLevel(t *testing.T) {
	corpus, _ := filepath.Abs("../../task/testdata/corpus")
	for _, c := range []struct {
		preset, task, data string
		want               string // the task name, or its prefix with data
		rlIterations       int
	}{
		{"tiny", "mathchat", "", "mathchat:easy", 2},
		{"tiny", "mathchat:h4", "", "mathchat:h4", 2},
		{"quick", "mathchat", "", "mathchat", 30},
		{"quick", "docedit", "", "docedit:easy", 16},
		{"quick", "docedit", corpus, "docedit:easy:data=sha256:", 16},
	} {
		name, data := c.task, c.data
		p, err := presetTask(c.preset, &name, &data)
		if err != nil {
			t.Fatal(err)
		}
		if ok := name == c.want || (c.data != "" && strings.HasPrefix(name, c.want)); !ok || data != "" {
			t.Errorf("--preset %s --task %s --data %q: task %q (data left %q), want %q", c.preset, c.task, c.data, name, data, c.want)
		}
		if p.RL.Iterations != c.rlIterations {
			t.Errorf("--preset %s --task %s: %d RL iterations, want %d", c.preset, c.task, p.RL.Iterations, c.rlIterations)
		}
	}
	name, data := "mathchat", ""
	if _, err := presetTask("huge", &name, &data); err == nil {
		t.Error("an unknown preset: want an error")
	}
}

// The turn limit a command plays without --max-turns is the task level's
// one: N at hN, else the levels' default.
func TestMaxTurnsDefaultIsTheLevels(t *testing.T) {
	for name, want := range map[string]int{"mathchat": 10, "mathchat:easy": 10, "mathchat:h4:ledger": 4, "docedit:h16": 16} {
		f := episodeFlags{task: name, n: 1, split: "test"}
		if err := f.validate(); err != nil {
			t.Fatal(err)
		}
		if f.maxTurns != want {
			t.Errorf("%s: max turns %d, want %d", name, f.maxTurns, want)
		}
	}
	f := episodeFlags{task: "mathchat:h4", n: 1, split: "test", maxTurns: 7}
	if err := f.validate(); err != nil || f.maxTurns != 7 {
		t.Errorf("--max-turns 7: %d, %v", f.maxTurns, err)
	}
}
