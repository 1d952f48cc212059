package reproduce

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/metric"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/progress"
)

// successEval is an evaluation of one episode per problem with these
// outcomes (1 solved, 0 not), the base's problems in order.
func successEval(wins ...int) evaluation {
	var e evaluation
	var s float64
	for i, w := range wins {
		e.eps = append(e.eps, dialog.Episode{Index: i, Success: w == 1})
		s += float64(w)
	}
	m := s / float64(len(wins))
	e.sum.Success = m
	return e
}

// Three pipelines that agree pool to their common difference and hold;
// a third that reverses it keeps the pooled claim from holding though two
// pipelines' own verdicts hold, and each pipeline's difference is reported
// beside it. The Bonferroni level covers every decoding's claims, and the
// two-level bootstrap stands beside the verdict's interval.
func TestPoolOverPipelines(t *testing.T) {
	ev := successEval
	const n = 600
	ones, zeros := make([]int, n), make([]int, n)
	for i := range ones {
		ones[i] = 1
	}
	half := append(append([]int{}, ones[:n/2]...), zeros[:n/2]...)
	pipeline := func(cal []int) map[string][]evaluation {
		return map[string][]evaluation{
			ArmBase:       {ev(half...)},
			ArmStatic:     {ev(half...), ev(half...)},
			ArmNaive:      {ev(half...), ev(half...)},
			ArmCalibrated: {ev(cal...), ev(cal...)},
			ArmOracle:     {ev(half...), ev(half...)},
		}
	}
	mk := func(seed uint64) *run {
		return &run{cfg: Config{Task: "mathchat", Seed: seed, Preset: preset.Preset{RLSeeds: 2}}}
	}
	runs := []*run{mk(1), mk(2), mk(3)}
	agree := []map[string][]evaluation{pipeline(ones), pipeline(ones), pipeline(ones)}
	both, err := poolDecodings(runs, []decoding{sampled, greedy}, [][]map[string][]evaluation{agree, agree})
	if err != nil {
		t.Fatal(err)
	}
	c := claimOf(t, both[0], "calibrated-interactive > base")
	if math.Abs(c.Difference-0.5) > 1e-12 || !c.Holds || c.Paper != "91.5 > not reported" || len(c.Pipelines) != 3 || !c.PipelineHolds[0] {
		t.Errorf("three agreeing pipelines: %+v", c)
	}
	if len(both[0].Claims) != 7 || both[0].Reported != 14 { // neither filtered BC nor recalibration, two decodings
		t.Errorf("%d pooled claims of %d reported, want 7 of 14", len(both[0].Claims), both[0].Reported)
	}
	if want := 1 - 0.05/14; math.Abs(c.Level-want) > 1e-12 {
		t.Errorf("level %v, want the Bonferroni level over both decodings' claims %v", c.Level, want)
	}
	// Identical pipelines: no spread, and the interval is the problems'
	// (the shared ones) times t on 2 degrees of freedom.
	se := math.Sqrt(0.25 / (n - 1))
	if c.Tau != 0 || math.Abs(c.SE-se) > 1e-12 || math.Abs(c.CI95[0]-(0.5-metric.StudentTQuantile(0.975, 2)*se)) > 1e-12 {
		t.Errorf("identical pipelines: %+v, want SE %v and t on 2 df", c, se)
	}
	if !(c.Bootstrap95[0] < 0.5 && c.Bootstrap95[1] > 0.5 && c.BootstrapAdjusted[0] <= c.Bootstrap95[0]) || c.PipelinesNeeded < 2 {
		t.Errorf("the bootstrap beside it, or the plan: %+v", c)
	}
	three, err := poolDecodings(runs, []decoding{sampled}, [][]map[string][]evaluation{{pipeline(ones), pipeline(ones), pipeline(zeros)}})
	if err != nil {
		t.Fatal(err)
	}
	c = claimOf(t, three[0], "calibrated-interactive > base")
	if math.Abs(c.Difference-(0.5+0.5-0.5)/3) > 1e-12 || c.Holds || !c.PipelineHolds[0] || !c.PipelineHolds[1] || c.PipelineHolds[2] {
		t.Errorf("a reversing third pipeline: %+v", c)
	}
	if a := three[0].Arms[3]; a.Arm != ArmCalibrated || math.Abs(a.Value-2.0/3) > 1e-12 || a.Pipelines[2] != 0 {
		t.Errorf("calibrated arm pooled: %+v", a)
	}
	// Three pipelines that all improve, by 0.5, 0.3 and 0.1: every
	// resample of the two-level bootstrap is above 0, but three pipelines
	// this far apart do not carry the claim at 99.3%.
	better := func(extra int) []int {
		c := append([]int{}, half...)
		for i := n / 2; i < n/2+extra; i++ {
			c[i] = 1
		}
		return c
	}
	apart, err := poolDecodings(runs, []decoding{sampled}, [][]map[string][]evaluation{{pipeline(ones), pipeline(better(n * 3 / 10)), pipeline(better(n / 10))}})
	if err != nil {
		t.Fatal(err)
	}
	if c := claimOf(t, apart[0], "calibrated-interactive > base"); c.Holds || !(c.BootstrapAdjusted[0] > 0) || math.Abs(c.Difference-0.3) > 1e-12 {
		t.Errorf("pipelines at +0.5, +0.3, +0.1: %+v, want the bootstrap above 0 and no verdict", c)
	}
	dir := t.TempDir()
	if err := WritePooled(dir, three); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "pooled.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# The verdict over 3 pipelines (seeds 1, 2, 3)", "| calibrated-interactive > base | 91.5 > not reported | +0.167 | 0.577 |", "+0.500 (yes) | +0.500 (yes) | -0.500 (no) |", "Bonferroni, 7 claims", "Student's t on 2 degrees of freedom"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("pooled.md lacks %q:\n%s", want, md)
		}
	}
	// Pipelines that played other problems are refused, naming them.
	other := pipeline(ones)
	other[ArmCalibrated][0].eps[0].Index = 999
	if _, err := poolDecodings(runs, []decoding{sampled}, [][]map[string][]evaluation{{pipeline(ones), other, pipeline(ones)}}); err == nil || !strings.Contains(err.Error(), "problem 999") {
		t.Errorf("a pipeline on other problems: %v", err)
	}
}

func claimOf(t *testing.T, p Pooled, name string) PooledClaim {
	t.Helper()
	for _, c := range p.Claims {
		if c.Claim == name {
			return c
		}
	}
	t.Fatalf("no claim %q in %+v", name, p.Claims)
	return PooledClaim{}
}

// A run evaluated on the validation slice plays its problems (from 20000,
// users seeded apart) in every evaluation, says so in its manifest and
// report, and cannot be resumed as a test-slice run.
func TestValidationSliceRun(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Out, cfg.EvalSlice = t.TempDir(), eval.ValidationSlice
	cfg.Preset.RLSeeds = 1
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"eval/base.episodes.jsonl", "eval-greedy/oracle-interactive/seed-0.episodes.jsonl"} {
		eps, err := dialog.LoadEpisodes(filepath.Join(cfg.Out, file))
		if err != nil {
			t.Fatal(err)
		}
		if eps[0].Index != eval.ValidationSlice.Start || eps[0].Seed == 0 {
			t.Errorf("%s: first episode is problem %d", file, eps[0].Index)
		}
	}
	report, err := os.ReadFile(filepath.Join(cfg.Out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(cfg.Out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "Evaluated on the validation slice") || !strings.Contains(string(manifest), `"eval_slice": "validation"`) {
		t.Errorf("the report or the manifest does not name the slice")
	}
	cfg.EvalSlice = eval.TestSlice
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "started with eval_slice validation, not test") {
		t.Errorf("resumed as a test-slice run: %v", err)
	}
}

// A mathchat run's report classifies its failures per arm and decoding,
// and the shares agree with the evaluations: an arm's "failed" share is
// one minus its success.
func TestReportClassifiesFailures(t *testing.T) {
	dir, rows := wholeRun(t)
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(report)
	i := strings.Index(text, "## Why conversations fail")
	if i < 0 {
		t.Fatal("report.md has no failure section")
	}
	section := text[i:]
	if !strings.Contains(section, "| arm | failed | never asks | answers before all facts |") {
		t.Errorf("failure table header missing:\n%.600s", section)
	}
	for _, row := range rows {
		want := fmt.Sprintf("| %s | %.3f |", row.Arm, 1-*row.Success)
		if !strings.Contains(section, want) {
			t.Errorf("no row %q in the sampled failure table:\n%.1200s", want, section)
		}
	}
}

// With a temperature grid of greedy and 1, every policy's best-temperature
// evaluation is exactly its greedy or its sampled one (same problems,
// users and random streams), whichever its validation sweep chose; the
// report has the third verdict and the sweep's table.
func TestBestTemperatureDecoding(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Out, cfg.TuneGrid, cfg.TuneEpisodes = t.TempDir(), []float64{0, 1}, 4
	cfg.Preset.RLSeeds = 1
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	read := func(file string) string {
		data, err := os.ReadFile(filepath.Join(cfg.Out, file))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for _, p := range []struct {
		arm string
		k   int
	}{{ArmBase, 0}, {ArmStatic, 0}, {ArmOracle, 0}} {
		var res tuneResult
		if err := json.Unmarshal([]byte(read(tuneFile(p.arm, p.k)+".json")), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Success) != 2 || res.Chosen != res.Grid[bestIndex(res.Success)] {
			t.Errorf("%s: sweep %+v", p.arm, res)
		}
		from := sampled
		if res.Chosen == 0 {
			from = greedy
		}
		if got, want := read(evalFile(best, p.arm, p.k)+".episodes.jsonl"), read(evalFile(from, p.arm, p.k)+".episodes.jsonl"); got != want {
			t.Errorf("%s at T=%g: its best-temperature episodes are not its %s ones", p.arm, res.Chosen, from.name)
		}
	}
	report := read("report.md")
	for _, want := range []string{"Each checkpoint at its own best temperature", "## Each policy at its best temperature", "| policy | chosen | T=0 | T=1 |"} {
		if !strings.Contains(report, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if !strings.Contains(read("manifest.json"), `"tune_grid"`) {
		t.Error("the manifest does not record the grid")
	}
	cfg.TuneGrid = []float64{0, 0.5, 1}
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "started with tune_grid [0 1], not [0 0.5 1]") {
		t.Errorf("resumed with another grid: %v", err)
	}
	cfg.TuneGrid = []float64{1, 0}
	if _, err := Run(context.Background(), Config{Task: cfg.Task, Preset: cfg.Preset, Out: t.TempDir(), TuneGrid: cfg.TuneGrid, Log: quiet}); err == nil || !strings.Contains(err.Error(), "must ascend") {
		t.Errorf("a descending grid: %v", err)
	}
}

// A pooled pipeline's report points at the pooled verdict; a run alone's
// says its verdict is one pipeline's and how to run several.
func TestPipelineNote(t *testing.T) {
	if got := pipelineNote("mathchat", "quick", "runs/pooled"); got != "One pipeline of several: the verdict over pipelines, each one's beside it, is runs/pooled/pooled.md." {
		t.Errorf("pooled: %q", got)
	}
	if got := pipelineNote("--task docedit:easy", "quick", ""); !strings.Contains(got, "not the method's") || !strings.Contains(got, "`calibrl reproduce --task docedit:easy --preset quick --pipelines 1,2,3`") {
		t.Errorf("alone: %q", got)
	}
}

// The note's command gives the run's recipe as a user types it: the
// ledger option the run's --sim-ledger added is left to the flag's auto,
// and a mend set apart from the task's auto choice is named.
func TestRecipeFlags(t *testing.T) {
	for _, tc := range []struct {
		task             string
		ledger, copyNums bool
		want             string
	}{
		{"mathchat:userledger", true, true, "--task mathchat"},
		{"mathchat", false, true, "--task mathchat --sim-ledger=false"},
		{"mathchat:userledger", true, false, "--task mathchat --sim-copy=false"},
		{"docedit:easy", false, false, "--task docedit:easy"},
		{"docedit:easy:userledger", true, false, "--task docedit:easy --sim-ledger=true"},
		{"support:userledger", true, true, "--task support"},
	} {
		if got := (Config{Task: tc.task, SimLedger: tc.ledger, SimCopy: tc.copyNums}).recipeFlags(); got != tc.want {
			t.Errorf("%s ledger=%t copy=%t: %q, want %q", tc.task, tc.ledger, tc.copyNums, got, tc.want)
		}
	}
}

// Pipelines one after another read as one run: stage k of pipeline i is
// stage i·n + k of all of them, named by its pipeline, and the run's
// plan covers the pipelines still to come. Before, the second pipeline's
// lines counted on from the first's ("stages 86 of 84 done … finished"
// while it trained).
func TestPipelineProgressCountsEveryPipeline(t *testing.T) {
	now := time.Unix(0, 0)
	board := progress.NewBoard(func() time.Time { return now })
	var lines []string
	prog := func(e progress.Event) {
		if l := board.Plain(e); l != "" {
			lines = append(lines, l)
		}
	}
	seeds := []uint64{5, 6}
	names := []string{"base", "arm", "eval"}
	for i := range seeds {
		p := pipelineProgress(prog, seeds, func(s uint64) string { return filepath.Join("runs", "q", fmt.Sprintf("seed-%d", s)) }, i)
		var plan []progress.Planned
		for _, n := range names {
			plan = append(plan, progress.Planned{Stage: n, Kind: n, Estimate: 10 * time.Second})
		}
		p(progress.Event{Plan: plan, Jobs: 1})
		for k, n := range names {
			p(progress.Event{Stage: n, Index: k + 1, Of: len(names)})
			now = now.Add(20 * time.Second) // each kind at twice its estimate
			p(progress.Event{Stage: n, Index: k + 1, Of: len(names), Done: true})
		}
	}
	want := []string{
		"[1/6] seed-5/base  started",
		"[1/6] seed-5/base  done in 20s · stages 1 of 6 done · 20s · ETA ~1m40s",
		"[2/6] seed-5/arm  started",
		"[2/6] seed-5/arm  done in 20s · stages 2 of 6 done · 40s · ETA ~1m20s",
		"[3/6] seed-5/eval  started",
		"[3/6] seed-5/eval  done in 20s · stages 3 of 6 done · 1m00s · ETA ~1m00s",
		"[4/6] seed-6/base  started",
		"[4/6] seed-6/base  done in 20s · stages 4 of 6 done · 1m20s · ETA ~40s",
		"[5/6] seed-6/arm  started",
		"[5/6] seed-6/arm  done in 20s · stages 5 of 6 done · 1m40s · ETA ~20s",
		"[6/6] seed-6/eval  started",
		"[6/6] seed-6/eval  done in 20s · stages 6 of 6 done · 2m00s · finished",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
