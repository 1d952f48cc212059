package reproduce

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/train"
)

// Both static rewards in one run: one arm each, per RL seed, the outcome
// one named static as before, each trained with its own reward, beside
// each other in every table, with calibrated > static-continuation among
// the claims; the manifest records both and a resume with another set is
// refused.
func TestBothStaticRewards(t *testing.T) {
	cfg := tinyConfig(t)
	// Asked in the other order: the arms' names do not depend on it.
	cfg.Out, cfg.StaticRewards = t.TempDir(), []string{train.StaticContinuation, train.StaticOutcome}
	rows, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var arms []string
	for _, r := range rows {
		arms = append(arms, r.Arm)
	}
	want := []string{ArmBase, ArmStatic, ArmStaticContinuation, ArmNaive, ArmCalibrated, ArmOracle}
	if !slices.Equal(arms, want) {
		t.Fatalf("summary.json's arms %v, want %v", arms, want)
	}
	if n := len(rows[2].Seeds); n != cfg.Preset.RLSeeds {
		t.Errorf("static-continuation has %d seeds, want %d", n, cfg.Preset.RLSeeds)
	}
	var claim *Comparison
	for _, r := range rows {
		for i, c := range r.Comparisons {
			if c.Claim == ArmCalibrated+" > "+ArmStaticContinuation {
				claim = &r.Comparisons[i]
			}
		}
	}
	if claim == nil || claim.Paper != "91.5 > not reported" || len(claim.Seeds) != cfg.Preset.RLSeeds {
		t.Errorf("the claim calibrated > static-continuation: %+v", claim)
	}
	for k := range cfg.Preset.RLSeeds {
		for _, arm := range []string{ArmStatic, ArmStaticContinuation} {
			for _, file := range []string{
				filepath.Join("checkpoints", seedName(arm, k), "last", "trainer_state.json"),
				evalFile(sampled, arm, k) + ".json", evalFile(greedy, arm, k) + ".json",
				fidelityFile(arm, k) + ".json",
			} {
				if _, err := os.Stat(filepath.Join(cfg.Out, file)); err != nil {
					t.Errorf("%s seed %d: %v", arm, k, err)
				}
			}
		}
	}
	// Each arm trained with its own reward: the outcome reward scores the
	// candidate turn alone (one turn a rollout), the continuation reward
	// plays the conversation on.
	f, err := runfolder.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := f.ReadMetrics()
	if err != nil {
		t.Fatal(err)
	}
	turns := map[string][]float64{}
	for _, rec := range recs {
		if v, ok := rec["rollout/turns"].(float64); ok {
			arm, _, _ := strings.Cut(rec["stage"].(string), "/")
			turns[arm] = append(turns[arm], v)
		}
	}
	if len(turns[ArmStatic]) == 0 || slices.ContainsFunc(turns[ArmStatic], func(v float64) bool { return v != 1 }) {
		t.Errorf("static's rollouts are not single turns (the outcome reward): %v", turns[ArmStatic])
	}
	if !slices.ContainsFunc(turns[ArmStaticContinuation], func(v float64) bool { return v > 1 }) {
		t.Errorf("static-continuation's rollouts never continue (not the continuation reward): %v", turns[ArmStaticContinuation])
	}
	var greedyRows []Row
	if err := f.ReadJSON("summary-greedy.json", &greedyRows); err != nil {
		t.Fatal(err)
	}
	if len(greedyRows) != len(want) || greedyRows[2].Arm != ArmStaticContinuation {
		t.Errorf("summary-greedy.json's rows: %+v", greedyRows)
	}
	md, err := os.ReadFile(filepath.Join(cfg.Out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| calibrated-interactive > static-continuation | 91.5 > not reported |", // the verdicts
		"| static-continuation | 0 | 0x3 | ",                                     // the seeds' table: seed 0 is RL seed 3
		"| answers before all facts |",                                           // the premature-answer rate, per arm
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// A row in every table with one per arm or seed: the arms' figures
	// (1), the seeds' (2), the failure classes at each decoding (2), the
	// sim-to-real gaps (1), the training diagnostics (2).
	if n := strings.Count(string(md), "\n| static-continuation | "); n != 8 {
		t.Errorf("report.md has %d rows of static-continuation, want 8", n)
	}
	html, err := os.ReadFile(filepath.Join(cfg.Out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), ArmStaticContinuation) {
		t.Error("report.html does not show static-continuation")
	}
	manifest, err := os.ReadFile(filepath.Join(cfg.Out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(manifest), `"static_reward": "outcome,continuation"`) {
		t.Error("the manifest does not record both static rewards")
	}
	cfg.StaticRewards = []string{train.StaticOutcome}
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), cfg.Out+" was started with static_reward outcome,continuation, not outcome (--static-reward)") {
		t.Errorf("resumed with the outcome reward alone: %v", err)
	}
}

// A folder from before several static rewards, whose manifest names none,
// reads as the outcome reward alone: it resumes with it (the default) and
// refuses to resume with both.
func TestOldFolderHasTheOutcomeStaticReward(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Out = t.TempDir()
	r, err := openRun(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = r.manifest()
	r.f.Close()
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(cfg.Out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(manifest), "static_reward") {
		t.Fatalf("a default run records its static reward: the manifest is not the one it always was:\n%s", manifest)
	}
	for _, c := range []struct {
		rewards []string
		want    string // "" for a resume
	}{
		{nil, ""},
		{[]string{train.StaticOutcome}, ""},
		{[]string{train.StaticOutcome, train.StaticContinuation}, cfg.Out + " was started with static_reward outcome, not outcome,continuation (--static-reward): use another --out"},
		{[]string{train.StaticContinuation}, "started with static_reward outcome, not continuation (--static-reward)"},
	} {
		c2 := cfg
		c2.StaticRewards = c.rewards
		r, err := openRun(c2)
		if err != nil {
			t.Fatal(err)
		}
		err = r.manifest()
		r.f.Close()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.rewards, err, c.want)
		}
	}
}

// An unknown static reward, or one named twice, is refused before the run
// folder exists; the order asked in does not matter.
func TestStaticRewardsChecked(t *testing.T) {
	for rewards, want := range map[string]string{
		"acceptance":                      `static reward "acceptance", want outcome, continuation, behaviour`,
		"outcome,outcome":                 "static reward outcome given twice",
		"outcome,continuation,outcome":    "static reward outcome given twice",
		"continuation,":                   `static reward ""`,
		"outcome,continuation,acceptance": `static reward "acceptance"`,
	} {
		cfg := tinyConfig(t)
		cfg.Out, cfg.StaticRewards = filepath.Join(t.TempDir(), "run"), strings.Split(rewards, ",")
		if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", rewards, err, want)
		}
		if _, err := os.Stat(cfg.Out); !os.IsNotExist(err) {
			t.Errorf("%s: refused after making %s (%v)", rewards, cfg.Out, err)
		}
	}
	for _, c := range []struct {
		rewards, arms []string
	}{
		{nil, []string{ArmStatic}},
		{[]string{"continuation"}, []string{ArmStatic}},
		{[]string{"continuation", "outcome"}, []string{ArmStatic, ArmStaticContinuation}},
		{[]string{"behaviour", "continuation"}, []string{ArmStatic, "static-behaviour"}},
	} {
		r := &run{cfg: Config{StaticRewards: c.rewards}}
		if got := r.staticArms(); !slices.Equal(got, c.arms) {
			t.Errorf("%v: arms %v, want %v", c.rewards, got, c.arms)
		}
		if rw, _ := r.staticReward(ArmStatic); rw != r.staticRewards()[0] {
			t.Errorf("%v: static trains %s", c.rewards, rw)
		}
		if got := r.rlArms(); len(got) != len(rlArms)+len(c.arms)-1 || got[0] != ArmStatic || got[len(c.arms)] != ArmNaive {
			t.Errorf("%v: RL arms %v", c.rewards, got)
		}
	}
}

// The pooled verdict over pipelines with both static rewards pools the
// second static arm and its claim; the Bonferroni correction counts it.
func TestPoolBothStaticRewards(t *testing.T) {
	half := func() evaluation { return successEval(1, 0, 1, 0, 1, 0, 1, 0) }
	all := func() evaluation { return successEval(1, 1, 1, 1, 1, 1, 1, 1) }
	none := func() evaluation { return successEval(0, 0, 0, 0, 0, 0, 0, 0) }
	pipeline := map[string][]evaluation{
		ArmBase:               {half()},
		ArmStatic:             {half(), half()},
		ArmStaticContinuation: {none(), none()},
		ArmNaive:              {half(), half()},
		ArmCalibrated:         {all(), all()},
		ArmOracle:             {half(), half()},
	}
	mk := func(seed uint64) *run {
		return &run{cfg: Config{Task: "mathchat", Seed: seed, Preset: preset.Preset{RLSeeds: 2},
			StaticRewards: []string{train.StaticOutcome, train.StaticContinuation}}}
	}
	ps, err := poolDecodings([]*run{mk(1), mk(2)}, []decoding{sampled}, [][]map[string][]evaluation{{pipeline, pipeline}})
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	if len(p.Arms) != 6 || p.Arms[2].Arm != ArmStaticContinuation || p.Arms[2].Value != 0 {
		t.Errorf("pooled arms: %+v", p.Arms)
	}
	c := claimOf(t, p, ArmCalibrated+" > "+ArmStaticContinuation)
	if c.Difference != 1 || c.Paper != "91.5 > not reported" || len(c.Pipelines) != 2 {
		t.Errorf("pooled calibrated > static-continuation: %+v", c)
	}
	if len(p.Claims) != 8 || p.Reported != 8 {
		t.Errorf("%d pooled claims of %d reported, want the 7 of one static arm and calibrated > static-continuation", len(p.Claims), p.Reported)
	}
}
