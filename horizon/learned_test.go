package horizon

import (
	"math"
	"testing"

	"github.com/calibrl/calibrl/preset"
)

func TestDiffCIHandComputed(t *testing.T) {
	// a = 0.5 [0.4, 0.6], b = 0.3 [0.2, 0.4]: d = 0.2 ± √(0.1² + 0.1²).
	lo, hi := diffCI(0.5, 0.4, 0.6, 0.3, 0.2, 0.4)
	if math.Abs(lo-(0.2-math.Sqrt(0.02))) > 1e-12 || math.Abs(hi-(0.2+math.Sqrt(0.02))) > 1e-12 {
		t.Fatalf("diffCI = [%v, %v], want 0.2 ∓ %v", lo, hi, math.Sqrt(0.02))
	}
	// Asymmetric intervals: the lower end uses a's lower and b's upper
	// half-widths, the upper end the other two.
	lo, hi = diffCI(0.1, 0.05, 0.2, 0.0, 0.0, 0.03)
	if math.Abs(lo-(0.1-math.Hypot(0.05, 0.03))) > 1e-12 || math.Abs(hi-(0.1+math.Hypot(0.1, 0))) > 1e-12 {
		t.Fatalf("asymmetric diffCI = [%v, %v]", lo, hi)
	}
}

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
