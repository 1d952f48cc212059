package horizon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/reproduce"
)

// tinyStudy is the study the tests run on the tiny preset: three
// horizons, the ledger (the bookkeeping the embedded base needs past
// H = 4), two stages side by side.
func tinyStudy(t *testing.T, out string, log *slog.Logger) LearnedConfig {
	t.Helper()
	tiny, err := preset.Get("tiny")
	if err != nil {
		t.Fatal(err)
	}
	return LearnedConfig{Task: "mathchat:ledger", Preset: tiny, Horizons: []int{2, 3, 4}, Seed: 1, Out: out, Jobs: 2, Log: log}
}

// stageCount counts the reproduce stages run (not those found done) by
// the top-level seed its logger carries (0: none).
type stageCount struct {
	slog.Handler
	seed uint64
	ran  *sync.Map // seed → *atomic.Int64
}

func (c stageCount) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "reproduce: stage" {
		n, _ := c.ran.LoadOrStore(c.seed, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
	}
	return c.Handler.Handle(ctx, r)
}

func (c stageCount) WithAttrs(as []slog.Attr) slog.Handler {
	for _, a := range as {
		if a.Key == "seed" {
			c.seed = a.Value.Uint64()
		}
	}
	return stageCount{Handler: c.Handler.WithAttrs(as), seed: c.seed, ran: c.ran}
}

// ran is how many stages the study of seed s ran.
func ran(counts *sync.Map, s uint64) int64 {
	n, ok := counts.Load(s)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// cancelAtH cancels the study when it logs that it starts horizon h.
type cancelAtH struct {
	slog.Handler
	h      int64
	cancel context.CancelFunc
}

func (c cancelAtH) Handle(ctx context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if r.Message == "horizon: learned study" && a.Key == "H" && a.Value.Int64() == c.h {
			c.cancel()
		}
		return true
	})
	return c.Handler.Handle(ctx, r)
}

// The whole learned study on the tiny preset: a shared base and simulator,
// one reproduce run per H, each arm's gap to the oracle arm. Stopped as it
// starts H = 3, it has written its result for H = 2 and names what is left;
// the same call goes on to the end, and run again on the finished folder,
// every stage is done and it reports the same result.
func TestLearnedStudyOnTiny(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	quiet := slog.NewTextHandler(io.Discard, nil)
	cfg := tinyStudy(t, out, slog.New(cancelAtH{Handler: quiet, h: 3, cancel: cancel}))
	tiny := cfg.Preset
	if _, err := RunLearned(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped at H=3: %v, want context.Canceled", err)
	}
	var partial LearnedResult
	if data, err := os.ReadFile(filepath.Join(out, "result.json")); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(data, &partial); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(partial.Horizons, []int{2}) || !slices.Equal(partial.Pending, []int{3, 4}) || len(partial.Arms) != 3 || len(partial.Arms[0].Gap) != 1 {
		t.Fatalf("result so far: horizons %v, pending %v, %d arms", partial.Horizons, partial.Pending, len(partial.Arms))
	}
	if md, err := os.ReadFile(filepath.Join(out, "report.md")); err != nil || !strings.Contains(string(md), "H = 3, 4 not yet run") {
		t.Fatalf("report so far does not name the horizons left (%v):\n%s", err, md)
	}
	cfg.Log = slog.New(quiet)
	res, err := RunLearned(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pending) != 0 || !slices.Equal(res.Horizons, cfg.Horizons) {
		t.Fatalf("finished study: horizons %v, pending %v", res.Horizons, res.Pending)
	}
	if res.Arms[0].Gap[0] != partial.Arms[0].Gap[0] {
		t.Errorf("static gap at H=2: %v after resuming, %v before", res.Arms[0].Gap[0], partial.Arms[0].Gap[0])
	}
	if len(res.Arms) != 3 || len(res.OracleCI95) != 3 {
		t.Fatalf("%d arms and %d oracle intervals, want 3 and 3", len(res.Arms), len(res.OracleCI95))
	}
	for _, a := range res.Arms {
		positive := 0
		for i, h := range a.H {
			// Every arm and seed plays the same problems, so the mean
			// paired gap is the oracle's mean reward minus the arm's.
			if want := res.Oracle[h] - reward(res.Rows[h], a.Arm); math.Abs(a.Gap[i]-want) > 1e-9 {
				t.Errorf("%s H=%d: gap %v, want oracle %v minus the arm's reward = %v", a.Arm, h, a.Gap[i], res.Oracle[h], want)
			}
			if ci := a.GapCI95[i]; ci[0] > a.Gap[i]+1e-12 || ci[1] < a.Gap[i]-1e-12 {
				t.Errorf("%s H=%d: gap %v outside its interval %v", a.Arm, h, a.Gap[i], ci)
			}
			if len(a.Seeds[i]) != tiny.RLSeeds {
				t.Errorf("%s H=%d: %d seed gaps, want %d", a.Arm, h, len(a.Seeds[i]), tiny.RLSeeds)
			}
			if a.Gap[i] > 0 {
				positive++
			}
		}
		if (a.Fit != nil) != (positive >= 3) || (a.Fit == nil && a.Note == "") {
			t.Errorf("%s: %d positive gaps, fit %v, note %q", a.Arm, positive, a.Fit, a.Note)
		}
	}
	for _, h := range cfg.Horizons {
		if _, err := os.Stat(filepath.Join(res.Runs[h], "summary.json")); err != nil {
			t.Errorf("H=%d: %v", h, err)
		}
		// Each H played the hH level with the study's option.
		var m struct {
			Config struct {
				Task string `json:"task"`
			} `json:"config"`
		}
		if data, err := os.ReadFile(filepath.Join(res.Runs[h], "manifest.json")); err != nil {
			t.Errorf("H=%d: %v", h, err)
		} else if err := json.Unmarshal(data, &m); err != nil {
			t.Errorf("H=%d: manifest: %v", h, err)
		} else if want := fmt.Sprintf("mathchat:h%d:ledger", h); m.Config.Task != want {
			t.Errorf("H=%d played %q, want %q", h, m.Config.Task, want)
		}
	}
	first, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 2 | ", "| 4 | ", reproduce.ArmCalibrated + " gap", "Slopes of log(gap)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(string(md), "not yet run") {
		t.Error("the finished study's report says horizons are left")
	}
	if _, err := RunLearned(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Error("the study run again on its finished folder wrote another result.json")
	}
}

// The study over two top-level seeds with two horizons: each seed's study
// in its own folder with a single study's layout, the pooled report beside
// them, each pooled gap the mean of the seeds' own gaps. Run again with
// other seeds (2 and 3), each seed's folder is handled on its own: seed 2's
// resumes without running a stage, seed 3's is trained, seed 1's is left
// alone, and the pool follows the seeds as given.
func TestLearnedSeedsOnTiny(t *testing.T) {
	out := t.TempDir()
	counts := new(sync.Map)
	cfg := tinyStudy(t, out, slog.New(stageCount{Handler: slog.NewTextHandler(io.Discard, nil), ran: counts}))
	// Sized for three studies: two horizons, one RL seed per arm.
	cfg.Horizons, cfg.Preset.RLSeeds = []int{2, 3}, 1
	pooled, err := RunLearnedSeeds(context.Background(), cfg, []uint64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if ran(counts, 1) == 0 || ran(counts, 2) == 0 {
		t.Fatalf("the first call ran %d stages for seed 1 and %d for seed 2", ran(counts, 1), ran(counts, 2))
	}
	for _, f := range []string{"report.md", "result.json", LearnedPlotName + ".png", "seed-1/report.md", "seed-1/result.json", "seed-2/report.md",
		"seed-1/shared/checkpoints/sim/config.json", "seed-2/shared/checkpoints/base/config.json", "seed-1/h2/summary.json", "seed-2/h3/summary-greedy.json",
		"seed-2/h3/fidelity/static/seed-0.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("study folder lacks %s", f)
		}
	}
	for _, f := range []string{"shared", "h2"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("the pooled folder has its own %s: want one per seed", f)
		}
	}
	if len(pooled.Checks) != 2*2*3 {
		t.Fatalf("%d pooled checks, want 2 horizons × 2 decodings × 3 arms", len(pooled.Checks))
	}
	var studies []LearnedResult
	for _, s := range []uint64{1, 2} {
		var res LearnedResult
		if data, err := os.ReadFile(filepath.Join(SeedDir(out, s), "result.json")); err != nil {
			t.Fatal(err)
		} else if err := json.Unmarshal(data, &res); err != nil {
			t.Fatal(err)
		}
		studies = append(studies, res)
	}
	for _, c := range pooled.Checks {
		if len(c.Seeds) != 2 || len(c.BoundSeeds) != 2 {
			t.Fatalf("%s %s H=%d: %d seed gaps and %d seed bounds, want 2 and 2", c.Decoding, c.Arm, c.H, len(c.Seeds), len(c.BoundSeeds))
		}
		for i, res := range studies {
			one, ok := findCheck(res.Checks, c.H, c.Arm, c.Decoding)
			if !ok || math.Abs(one.Gap-c.Seeds[i]) > 1e-9 || one.Bound != c.BoundSeeds[i] {
				t.Errorf("%s %s H=%d seed %d: pooled holds gap %v bound %v, its study %v %v", c.Decoding, c.Arm, c.H, i+1, c.Seeds[i], c.BoundSeeds[i], one.Gap, one.Bound)
			}
		}
		if math.Abs(c.Gap-(c.Seeds[0]+c.Seeds[1])/2) > 1e-9 || math.Abs(c.Bound-(c.BoundSeeds[0]+c.BoundSeeds[1])/2) > 1e-12 {
			t.Errorf("%s %s H=%d: gap %v bound %v, want the seeds' means", c.Decoding, c.Arm, c.H, c.Gap, c.Bound)
		}
		if !(c.GapCI95[0] <= c.Gap+1e-12 && c.Gap <= c.GapCI95[1]+1e-12) || c.Respects != (c.Gap <= c.Bound) {
			t.Errorf("%s %s H=%d: gap %v, interval %v, bound %v, respects %v", c.Decoding, c.Arm, c.H, c.Gap, c.GapCI95, c.Bound, c.Respects)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"over 2 seeds", "### sampled", "### greedy", "| 3 | " + reproduce.ArmCalibrated + " | ", "| per seed |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("pooled report.md lacks %q", want)
		}
	}
	counts.Clear()
	again, err := RunLearnedSeeds(context.Background(), cfg, []uint64{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if ran(counts, 1) != 0 || ran(counts, 2) != 0 || ran(counts, 3) == 0 {
		t.Errorf("seeds 2,3 after 1,2: %d, %d and %d stages ran for seeds 1, 2 and 3; want 0, 0 and all", ran(counts, 1), ran(counts, 2), ran(counts, 3))
	}
	if !slices.Equal(again.Seeds, []uint64{2, 3}) || again.Checks[0].Seeds[0] != pooled.Checks[0].Seeds[1] || again.Checks[0].BoundSeeds[0] != pooled.Checks[0].BoundSeeds[1] {
		t.Errorf("seeds 2,3: pooled seeds %v, first gaps %v and bounds %v (before %v and %v)", again.Seeds, again.Checks[0].Seeds, again.Checks[0].BoundSeeds, pooled.Checks[0].Seeds, pooled.Checks[0].BoundSeeds)
	}
}

// A single-seed study and a study over seeds write report.md and
// result.json at the same place: each refuses the other's folder before
// training anything, naming it, so neither's measurements are overwritten.
func TestSingleAndSeededStudiesKeepTheirFolders(t *testing.T) {
	single := t.TempDir()
	if err := os.MkdirAll(filepath.Join(single, "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := tinyStudy(t, single, nil)
	if _, err := RunLearnedSeeds(context.Background(), cfg, []uint64{1, 2}); err == nil || !strings.Contains(err.Error(), "holds a single-seed study") {
		t.Errorf("--seeds into a single-seed study's folder: got %v", err)
	}
	seeded := t.TempDir()
	if err := os.MkdirAll(filepath.Join(SeedDir(seeded, 1), "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg = tinyStudy(t, seeded, nil)
	if _, err := RunLearned(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "holds a study over seeds") {
		t.Errorf("one seed into a seeded study's folder: got %v", err)
	}
	if entries, _ := os.ReadDir(single); len(entries) != 1 {
		t.Errorf("the refused call wrote into %s: %d entries", single, len(entries))
	}
}
