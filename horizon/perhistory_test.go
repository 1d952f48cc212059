package horizon

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/fidelity"
	"github.com/calibrl/calibrl/reproduce"
)

// The per-history δ_t is the gate record's excess by turn, clipped at 0,
// over the turns with histories; a run without a record has none, and the
// report's table gains its column only where a check has the bound.
func TestPerHistoryDeltaAndColumn(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := PerHistoryDelta(dir); ok || err != nil {
		t.Fatalf("no record: ok %v err %v, want neither", ok, err)
	}
	rec := reproduce.SimFidelity{Sim: fidelity.HistoryReport{ByTurn: []fidelity.TurnDistance{
		{Histories: 10, Excess: -0.01}, {Histories: 9, Excess: 0.2}, {Histories: 4, Excess: 0.05}, {Histories: 0}}}}
	data, _ := json.Marshal(rec)
	if err := os.MkdirAll(filepath.Join(dir, "fidelity"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fidelity", "sim.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	delta, ok, err := PerHistoryDelta(dir)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	want := []float64{0, 0.2, 0.05}
	if len(delta) != len(want) {
		t.Fatalf("δ %v, want %v", delta, want)
	}
	for i := range want {
		if math.Abs(delta[i]-want[i]) > 1e-12 {
			t.Fatalf("δ %v, want %v", delta, want)
		}
	}
	// H = 4: 4·0 + 3·0.2 + 2·0.05 + 1·0.05 (carried) = 0.75.
	if b, carried, err := MeasuredBound(delta, 4, RMax); err != nil || math.Abs(b-0.75) > 1e-12 || carried != 1 {
		t.Errorf("bound %v carried %d err %v, want 0.75, 1", b, carried, err)
	}
	b := 0.75
	var with, without strings.Builder
	check := newBoundCheck(BoundCheck{H: 4, Arm: reproduce.ArmCalibrated, Decoding: Decodings[0], BoundSeeds: []float64{0.4}})
	writeBoundSection(&without, []BoundCheck{check}, false)
	check.PerHistoryBound = &b
	writeBoundSection(&with, []BoundCheck{check}, false)
	if strings.Contains(without.String(), "per-history") {
		t.Error("a table without per-history bounds names them")
	}
	if !strings.Contains(with.String(), "bound from per-history δ_t |") || !strings.Contains(with.String(), "| 0.750 |") {
		t.Errorf("table lacks the per-history column or its value:\n%s", with.String())
	}
}
