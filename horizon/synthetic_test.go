package horizon

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

func quickConfig() SyntheticConfig {
	c := DefaultSyntheticConfig()
	c.Episodes = 2000
	return c
}

// The study's headline: with the defaults (H = 2..16, ε = δ = 0.02) the
// compounding regimes grow nearly quadratically and the on-policy one
// linearly; every gap is within its bound; an error's cost tracks H − i.
func TestSyntheticDefaults(t *testing.T) {
	res, err := RunSynthetic(quickConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		f         Fit
		want, tol float64
	}{
		// Below 2 over short horizons: Σ(H−t) = H(H+1)/2 has a linear
		// term and the gap saturates as Hε grows; see the large-H test.
		{"static", res.Slopes.Static, 2, 0.25},
		{"interactive", res.Slopes.Interactive, 1, 0.02},
		{"simulator", res.Slopes.Simulator, 2, 0.25},
	} {
		if math.Abs(c.f.Slope-c.want) > c.tol {
			t.Errorf("%s slope: got %.3f, want %v ± %v", c.name, c.f.Slope, c.want, c.tol)
		}
		if !(c.f.SlopeLo <= c.f.Slope && c.f.Slope <= c.f.SlopeHi) {
			t.Errorf("%s: slope %v outside its CI [%v, %v]", c.name, c.f.Slope, c.f.SlopeLo, c.f.SlopeHi)
		}
	}
	if res.Slopes.Static.SlopeLo <= res.Slopes.Interactive.SlopeHi+0.5 {
		t.Errorf("static CI [%v, %v] not clearly above interactive CI [%v, %v]", res.Slopes.Static.SlopeLo,
			res.Slopes.Static.SlopeHi, res.Slopes.Interactive.SlopeLo, res.Slopes.Interactive.SlopeHi)
	}
	if !res.BoundsHold() {
		t.Errorf("a gap exceeds its bound: %+v", res.Rows)
	}
	for _, row := range res.Rows {
		if row.Gap.Static <= row.Gap.Interactive {
			t.Errorf("H=%d: static gap %v not above interactive gap %v", row.H, row.Gap.Static, row.Gap.Interactive)
		}
	}
	if res.PositionH != 16 || len(res.Position) != 16 {
		t.Fatalf("position experiment: got H=%d with %d rows, want 16 and 16", res.PositionH, len(res.Position))
	}
	if res.PositionCorr.Static <= 0.99 || res.PositionCorr.Simulator <= 0.99 {
		t.Errorf("corr(cost, H−i): got static %v simulator %v, want > 0.99", res.PositionCorr.Static, res.PositionCorr.Simulator)
	}
	// Proportional, not merely correlated: cost = R_max·ε·(H−i).
	for _, p := range res.Position {
		want := res.Config.RMax * res.Config.Eps * float64(p.TurnsLeft)
		if math.Abs(p.Cost.Static-want) > 1e-12 {
			t.Errorf("error at turn %d: static cost %v, want %v", p.Turn, p.Cost.Static, want)
		}
	}
}

// Over long horizons with Hε small the static slope reaches 2, and an
// interactive policy with a multi-turn repair is still linear.
func TestSyntheticLongHorizons(t *testing.T) {
	c := DefaultSyntheticConfig()
	c.Horizons = []int{16, 32, 64, 128}
	c.Eps, c.Delta = 1e-4, 1e-4
	c.Recovery = 2
	c.Episodes = 0
	res, err := RunSynthetic(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name      string
		got, want float64
	}{
		{"static", res.Slopes.Static.Slope, 2},
		{"interactive (recovery 2)", res.Slopes.Interactive.Slope, 1},
		{"simulator", res.Slopes.Simulator.Slope, 2},
	} {
		if math.Abs(s.got-s.want) > 0.05 {
			t.Errorf("%s slope: got %.4f, want %v ± 0.05", s.name, s.got, s.want)
		}
	}
	if !res.BoundsHold() {
		t.Error("a gap exceeds its bound")
	}
	if res.Rows[0].MCGap != nil {
		t.Error("Episodes = 0 still ran Monte Carlo")
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	c := quickConfig()
	c.Horizons = []int{3, 5, 9}
	run := func(seed uint64) []byte {
		c.Seed = seed
		res, err := RunSynthetic(c)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := res.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b, other := run(5), run(5), run(6)
	if !bytes.Equal(a, b) {
		t.Error("same seed, different results")
	}
	if bytes.Equal(a, other) {
		t.Error("different seeds, identical Monte Carlo results")
	}
}

func TestSyntheticValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*SyntheticConfig)
	}{
		{"two horizons", func(c *SyntheticConfig) { c.Horizons = []int{2, 4} }},
		{"duplicate horizons", func(c *SyntheticConfig) { c.Horizons = []int{2, 2, 4} }},
		{"zero horizon", func(c *SyntheticConfig) { c.Horizons = []int{0, 2, 4} }},
		{"eps 0", func(c *SyntheticConfig) { c.Eps = 0 }},
		{"delta 1", func(c *SyntheticConfig) { c.Delta = 1 }},
		{"eps NaN", func(c *SyntheticConfig) { c.Eps = math.NaN() }},
		{"r_max 0", func(c *SyntheticConfig) { c.RMax = 0 }},
		{"negative recovery", func(c *SyntheticConfig) { c.Recovery = -1 }},
		{"position H 1", func(c *SyntheticConfig) { c.PositionH = 1 }},
		{"one episode", func(c *SyntheticConfig) { c.Episodes = 1 }},
		{"Monte Carlo too long", func(c *SyntheticConfig) { c.Horizons = []int{1000, 2000, 4000}; c.Episodes = 1_000_000 }},
	} {
		cfg := DefaultSyntheticConfig()
		c.mod(&cfg)
		if _, err := RunSynthetic(cfg); err == nil {
			t.Errorf("%s: got no error, want one", c.name)
		}
	}
	if err := DefaultSyntheticConfig().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestParseHorizons(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"2,4,8,16", []int{2, 4, 8, 16}, false},
		{" 8, 2 ,4,4", []int{2, 4, 8}, false},
		{"1", []int{1}, false},
		{"", nil, true},
		{"2,,4", nil, true},
		{"2,x", nil, true},
		{"0,2,4", nil, true},
		{"2,4,5000", nil, true},
		{"-3,2,4", nil, true},
	} {
		got, err := ParseHorizons(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("ParseHorizons(%q): got error %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ParseHorizons(%q): got %v, want %v", c.in, got, c.want)
		}
	}
}

func FuzzParseHorizons(f *testing.F) {
	for _, s := range []string{"2,4,8,16", " 3 ,1", "", ",", "99999999999999999999", "4,-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hs, err := ParseHorizons(s)
		if err != nil {
			return
		}
		if len(hs) == 0 {
			t.Fatalf("%q: no horizons and no error", s)
		}
		for i, h := range hs {
			if h < 1 || h > maxHorizon || (i > 0 && hs[i-1] >= h) {
				t.Fatalf("%q: got %v, want sorted distinct values in [1, %d]", s, hs, maxHorizon)
			}
		}
	})
}
