package horizon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/reproduce"
)

// R_max·Σ_{t<H} (H−t)·δ_t by hand, turns past the measured δ carrying its
// last value.
func TestMeasuredBound(t *testing.T) {
	for _, c := range []struct {
		delta   []float64
		h       int
		rMax    float64
		want    float64
		carried int
	}{
		{[]float64{0.1, 0.2}, 2, 1, 2*0.1 + 1*0.2, 0},
		// Turns 2 and 3 carry δ_1 = 0.2.
		{[]float64{0.1, 0.2}, 4, 1, 4*0.1 + 3*0.2 + 2*0.2 + 1*0.2, 2},
		// Measured turns past H do not count.
		{[]float64{0.1, 0.2, 0.3, 0.4}, 2, 1, 2*0.1 + 1*0.2, 0},
		{[]float64{0.1, 0.2}, 2, 2, 2 * (2*0.1 + 1*0.2), 0},
		// A constant δ: δ·H(H+1)/2.
		{[]float64{0.01, 0.01, 0.01, 0.01, 0.01, 0.01}, 8, 1, 0.01 * 36, 2},
		{[]float64{0.3}, 1, 1, 0.3, 0},
	} {
		got, carried, err := MeasuredBound(c.delta, c.h, c.rMax)
		if err != nil || math.Abs(got-c.want) > 1e-12 || carried != c.carried {
			t.Errorf("MeasuredBound(%v, H=%d, R_max=%g) = %v, %d carried, %v; want %v, %d carried", c.delta, c.h, c.rMax, got, carried, err, c.want, c.carried)
		}
	}
	for _, c := range []struct {
		delta []float64
		h     int
	}{{nil, 4}, {[]float64{0.1}, 0}, {[]float64{0.1, 1.5}, 2}, {[]float64{math.NaN()}, 1}, {[]float64{-0.1}, 1}} {
		if _, _, err := MeasuredBound(c.delta, c.h, 1); err == nil {
			t.Errorf("MeasuredBound(%v, H=%d): got no error, want one", c.delta, c.h)
		}
	}
}

// A gap is normalised by the oracle's lead only past MinLead.
func TestBoundCheckNormalisesPastMinLead(t *testing.T) {
	c := newBoundCheck(BoundCheck{Gap: 0.01, Lead: MinLead, BoundSeeds: []float64{0.2, 0.4}})
	if c.Normalised != nil || normalisedCell(c) != "n/a (lead +0.020)" {
		t.Errorf("lead %v: normalised %v, cell %q", c.Lead, c.Normalised, normalisedCell(c))
	}
	if math.Abs(c.Bound-0.3) > 1e-12 || !c.Respects {
		t.Errorf("bound %v (want the seeds' mean 0.3), respects %v", c.Bound, c.Respects)
	}
	c = newBoundCheck(BoundCheck{Gap: 0.01, Lead: 0.04, BoundSeeds: []float64{0}})
	if c.Normalised == nil || math.Abs(*c.Normalised-0.25) > 1e-12 || c.Respects {
		t.Errorf("lead 0.04: normalised %v, respects %v", c.Normalised, c.Respects)
	}
}

// fakeRun writes a reproduce run folder's evaluations (per decoding, the
// problems each arm solves, the same for both RL seeds) and its fidelity
// files (per arm, each RL seed's δ_t), nothing else.
func fakeRun(t *testing.T, dir string, solved map[string]map[string]int, delta map[string][2][]float64) {
	t.Helper()
	const problems = 10
	dirs := map[string]string{"sampled": "eval", "greedy": "eval-greedy"}
	for dec, arms := range solved {
		for arm, n := range arms {
			eps := make([]dialog.Episode, problems)
			for i := range eps {
				id := fmt.Sprintf("mathchat/test/%d", i)
				eps[i] = dialog.Episode{ID: id, Task: "mathchat:h8", Split: "test", Agent: arm, User: "human", Seed: uint64(100 + i), Index: i,
					Oracle:   dialog.Oracle{Task: "mathchat", ID: id, Split: "test", Instruction: "a problem", Truth: "1"},
					Messages: []dialog.Message{{Role: dialog.RoleUser, Content: "a problem"}, {Role: dialog.RoleAssistant, Content: "1"}},
					Turns:    1, End: dialog.MaxTurns, Success: i < n}
			}
			files := []string{filepath.Join(dirs[dec], arm)}
			if arm != reproduce.ArmBase {
				files = []string{filepath.Join(dirs[dec], arm, "seed-0"), filepath.Join(dirs[dec], arm, "seed-1")}
			}
			for _, f := range files {
				writeFile(t, filepath.Join(dir, f+".json"), []byte("{}"))
				if err := dialog.SaveEpisodes(filepath.Join(dir, f+".episodes.jsonl"), eps); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for arm, seeds := range delta {
		for k, d := range seeds {
			data, err := json.Marshal(reproduce.SimToReal{Arm: arm, Seed: k, Decoding: "sampled", Delta: d})
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "fidelity", arm, fmt.Sprintf("seed-%d.json", k)), data)
		}
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tableRow is the row of arm in the report's table under decoding.
func tableRow(t *testing.T, md, decoding, arm string) string {
	t.Helper()
	_, section, ok := strings.Cut(md, "### "+decoding+"\n")
	if !ok {
		t.Fatalf("no %s table:\n%s", decoding, md)
	}
	section, _, _ = strings.Cut(section, "### ")
	for line := range strings.SplitSeq(section, "\n") {
		if strings.HasPrefix(line, "| 8 | "+arm+" | ") {
			return line
		}
	}
	t.Fatalf("%s table has no row for %s:\n%s", decoding, arm, section)
	return ""
}

// The bound table of a fabricated run folder at H = 8: gaps and the
// oracle's lead from its evaluations, bounds from its fidelity files (two
// RL seeds averaged; δ_t measured for 6 turns, turns 6 and 7 carrying δ_5),
// and each verdict.
func TestBoundTableFromARunFolder(t *testing.T) {
	dir := t.TempDir()
	solved := map[string]map[string]int{
		// Lead 0.5: static's gap 0.4 normalises to 0.8.
		"sampled": {reproduce.ArmBase: 3, reproduce.ArmOracle: 8, reproduce.ArmStatic: 4, reproduce.ArmNaive: 7, reproduce.ArmCalibrated: 7},
		// Lead 0: no normalisation.
		"greedy": {reproduce.ArmBase: 5, reproduce.ArmOracle: 5, reproduce.ArmStatic: 1, reproduce.ArmNaive: 5, reproduce.ArmCalibrated: 5},
	}
	delta := map[string][2][]float64{
		// Seed 0: 7·0.1 + 3·0.05 + (2+1)·0.05 = 1.0; seed 1: 8·0.1 = 0.8.
		reproduce.ArmStatic: {{0, 0.1, 0, 0, 0, 0.05}, {0.1, 0, 0, 0, 0, 0}},
		// 0.01·(8+7+…+1) = 0.36.
		reproduce.ArmNaive: {{0.01, 0.01, 0.01, 0.01, 0.01, 0.01}, {0.01, 0.01, 0.01, 0.01, 0.01, 0.01}},
		// A perfect simulator bounds the gap at 0, which 0.1 exceeds.
		reproduce.ArmCalibrated: {make([]float64, 6), make([]float64, 6)},
	}
	fakeRun(t, dir, solved, delta)
	checks, err := runChecks(reproduce.Config{Task: "mathchat:h8", Preset: preset.Preset{RLSeeds: 2}, Out: dir}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 6 {
		t.Fatalf("%d checks, want 3 arms × 2 decodings", len(checks))
	}
	var b bytes.Buffer
	writeBoundSection(&b, checks, false)
	md := b.String()
	for _, c := range []struct{ decoding, arm, gap, rest string }{
		{"sampled", reproduce.ArmStatic, "+0.400", "| +0.80 (lead +0.500) | 0.900 † | yes |"},
		{"sampled", reproduce.ArmNaive, "+0.100", "| +0.20 (lead +0.500) | 0.360 † | yes |"},
		{"sampled", reproduce.ArmCalibrated, "+0.100", "| +0.20 (lead +0.500) | 0.000 † | no (bound within the 95% CI) |"},
		// Greedy gaps against the sampled δ_t's bounds.
		{"greedy", reproduce.ArmStatic, "+0.400", "| n/a (lead +0.000) | 0.900 † | yes |"},
		{"greedy", reproduce.ArmCalibrated, "+0.000", "| n/a (lead +0.000) | 0.000 † | yes |"},
	} {
		row := tableRow(t, md, c.decoding, c.arm)
		if !strings.HasPrefix(row, "| 8 | "+c.arm+" | "+c.gap+" [") || !strings.HasSuffix(row, c.rest) {
			t.Errorf("%s %s: row %q, want gap %s and %q", c.decoding, c.arm, row, c.gap, c.rest)
		}
	}
	if !strings.Contains(md, "† δ_t was measured for user turns 0 … 5; turns 6 … H−1 (up to 7) carry the last measured value δ_5.") {
		t.Errorf("the report does not say which turns carry δ_5:\n%s", md)
	}
	if !strings.Contains(md, "greedy table uses the sampled δ_t") {
		t.Errorf("the report does not say the greedy bounds use the sampled δ_t:\n%s", md)
	}
}
