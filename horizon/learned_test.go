package horizon

import (
	"testing"

	"github.com/calibrl/calibrl/preset"
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
