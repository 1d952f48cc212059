package horizon

import (
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/task"
)

// The study's models read a whole conversation of its longest horizon:
// 512 tokens hold mathchat's h8, h16 needs 1024.
func TestStudyContextFitsTheLongestHorizon(t *testing.T) {
	quick, err := preset.Get("quick")
	if err != nil {
		t.Fatal(err)
	}
	if p := withContext(quick, 8); p.Policy.Context != quick.Policy.Context || p.Sim.Context != quick.Sim.Context {
		t.Errorf("up to h8: contexts %d and %d, want the preset's %d", p.Policy.Context, p.Sim.Context, quick.Policy.Context)
	}
	if p := withContext(quick, 16); p.Policy.Context != 1024 || p.Sim.Context != 1024 {
		t.Errorf("up to h16: contexts %d and %d, want 1024", p.Policy.Context, p.Sim.Context)
	}
}

// Every horizon plays the study's task at its hH level with the task's
// option: the ledger asked for once is on at every H.
func TestLevelTaskCarriesTheOption(t *testing.T) {
	for _, c := range []struct {
		task string
		h    int
		want string
		env  bool
	}{
		{"mathchat", 8, "mathchat:h8", false},
		{"mathchat:ledger", 2, "mathchat:h2:ledger", true},
		{"mathchat:ledger", 16, "mathchat:h16:ledger", true},
		{"mathchat:nocalc", 4, "mathchat:h4:nocalc", false},
		{"docedit", 4, "docedit:h4", true}, // the document it shows
		// A level given with the task is replaced, not kept as an option.
		{"mathchat:easy:ledger", 8, "mathchat:h8:ledger", true},
		// The simulator's own ledger rides along with the agent's.
		{"mathchat:ledger:userledger", 8, "mathchat:h8:ledger:userledger", true},
		{"mathchat:userledger", 16, "mathchat:h16:userledger", false},
	} {
		name := LevelTask(c.task, c.h)
		if name != c.want {
			t.Errorf("LevelTask(%q, %d) = %q, want %q", c.task, c.h, name, c.want)
			continue
		}
		tk, err := task.Lookup(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if env := dialog.EnvironmentOf(tk); (env != nil) != c.env {
			t.Errorf("%s: environment %v, want one: %v", name, env, c.env)
		}
		if notes := chatlm.UserNotesOf(tk) != nil; notes != strings.Contains(c.task, task.WithUserLedger) {
			t.Errorf("%s: notes to the simulator %v", name, notes)
		}
		if c.task == "mathchat:nocalc" && dialog.ToolOf(tk) != nil {
			t.Errorf("%s has a calculator", name)
		}
	}
}
