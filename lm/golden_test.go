package lm

import (
	"math"
	"os"
	"testing"
)

// TestGoldenPyTorch compares Forward and Backward with an independent
// float64 PyTorch GPT-2 (testdata/golden.py wrote testdata/golden.safetensors:
// weights, a padded batch, upstream gradient r, the reference logp and
// every gradient of Σ r·logp). It reports the max difference per tensor,
// relative to that tensor's largest reference value.
func TestGoldenPyTorch(t *testing.T) {
	file, err := os.ReadFile("testdata/golden.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	tensors, _, err := parseSafetensors(file)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]namedTensor{}
	for _, nt := range tensors {
		byName[nt.name] = nt
	}
	tok := byName["tokens"]
	B, T := tok.shape[0], tok.shape[1]
	cfg := Config{VocabSize: 50, Context: 16, Dim: 16, Layers: 2, Heads: 2}
	m := newModel(cfg)
	m.Workers = 2
	for _, ti := range cfg.tensors() {
		nt, ok := byName[ti.name]
		if !ok || shapeString(nt.shape) != shapeString(ti.shape) {
			t.Fatalf("golden file: tensor %s missing or shaped %v, want %v", ti.name, nt.shape, ti.shape)
		}
		copy(m.Params.Data[ti.offset:], nt.data)
	}
	tokens := make([]int, B*T)
	for i, v := range tok.data {
		tokens[i] = int(v)
	}
	lens := make([]int, B)
	for i, v := range byName["lens"].data {
		lens[i] = int(v)
	}
	logp, err := m.Forward(tokens, B, T, lens)
	if err != nil {
		t.Fatal(err)
	}
	m.ZeroGrad()
	if err := m.Backward(byName["r"].data); err != nil {
		t.Fatal(err)
	}
	const tol = 1e-5
	compare := func(name string, got, want []float32) {
		var maxDiff, maxRef float64
		for i := range want {
			if math.IsNaN(float64(got[i])) {
				t.Errorf("%s[%d] is NaN", name, i)
				return
			}
			maxDiff = max(maxDiff, math.Abs(float64(got[i]-want[i])))
			maxRef = max(maxRef, math.Abs(float64(want[i])))
		}
		rel := maxDiff / max(maxRef, 1e-12)
		t.Logf("%-28s max|Δ| %.2e  relative %.2e", name, maxDiff, rel)
		if rel > tol {
			t.Errorf("%s: max |Δ| %.3e is %.3e of the largest reference value, want ≤ %.0e", name, maxDiff, rel, tol)
		}
	}
	compare("logp", logp, byName["logp"].data)
	for _, ti := range cfg.tensors() {
		compare("grad "+ti.name, m.Grads.Data[ti.offset:ti.offset+ti.size()], byName["grad."+ti.name].data)
	}
}
