package reproduce

import (
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/gemm"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

// openTiny opens a tiny mathchat run with seed 1 in a fresh folder, as Run
// would, after edit changes its config.
func openTiny(t *testing.T, edit func(*Config)) *run {
	t.Helper()
	cfg := tinyConfig(t)
	cfg.Seed, cfg.Out = 1, filepath.Join(t.TempDir(), "run")
	if edit != nil {
		edit(&cfg)
	}
	r, err := openRun(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.f.Close() })
	return r
}

// writeOld puts the manifest in testdata/name into r's folder.
func writeOld(t *testing.T, r *run, name string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.f.Path("manifest.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A folder started by the program before the manifest was a struct (a
// map-shaped config, no format; 8f05f75's tiny mathchat run with seed 1)
// resumes under the same settings, and is refused under other ones with
// the field, its old and its new value named.
func TestOldManifestResumes(t *testing.T) {
	r := openTiny(t, nil)
	writeOld(t, r, "manifest-8f05f75.json")
	if err := r.manifest(); err != nil {
		t.Fatalf("the same settings: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"iterations", func(c *Config) { c.RLIterations = 3 }, "rl.Iterations 2, not 3 (--rl-iterations)"},
		{"seeds", func(c *Config) { c.Preset.RLSeeds = 3 }, "rl_seeds 2, not 3"},
		{"slice", func(c *Config) { c.EvalSlice = eval.ValidationSlice }, "eval_slice test, not validation"},
		{"curves", func(c *Config) { c.Curves = 8 }, "curves 0, not 8"},
		{"copy", func(c *Config) { c.SimCopy = true }, "sim_copy false, not true (--sim-copy: true, false or auto, the task's choice)"},
		{"grid", func(c *Config) { c.TuneGrid = []float64{0, 1} }, "tune_grid none, not [0 1]"},
		{"static reward", func(c *Config) { c.StaticRewards = []string{train.StaticOutcome, train.StaticContinuation} }, "static_reward outcome, not outcome,continuation"},
		{"fill", func(c *Config) { c.StaticFill = 2 }, "static_fill 0, not 2"},
		{"prompts", func(c *Config) { c.StaticPrompts = 5 }, "static_prompts 0, not 5"},
		{"tokens", func(c *Config) { c.StaticFill, c.StaticTokens = 2, 100 }, "static_fill 0, not 2"},
		{"task", func(c *Config) { c.Task = "docedit" }, "holds a mathchat:easy/tiny run, not docedit:easy/tiny"},
	} {
		r := openTiny(t, c.edit)
		writeOld(t, r, "manifest-8f05f75.json")
		err := r.manifest()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "use another --out") {
			t.Errorf("%s: %v, want a refusal naming %q", c.name, err, c.want)
		}
	}
	// It may gain arms: filtered BC and another optimizer.
	r = openTiny(t, func(c *Config) { c.FilteredBC, c.Optimizers = true, []string{"grpo", optGRPOTurns.name} })
	writeOld(t, r, "manifest-8f05f75.json")
	if err := r.manifest(); err != nil {
		t.Errorf("gaining filtered BC and grpo-turn-credit: %v", err)
	}
}

// A run's own manifest reads back as the struct it wrote, resumes under
// the same settings, and is refused, naming the field, under each other
// one; a newer format is refused as such.
func TestManifestRoundTrip(t *testing.T) {
	on := func(c *Config) {
		c.Recalibrate, c.FilteredBC, c.StaticFill, c.StaticTokens = true, true, 2, 100
		c.StaticRewards, c.TuneGrid = []string{train.StaticOutcome, train.StaticBehaviour}, []float64{0, 0.5}
		c.Optimizers = []string{"grpo", optGRPOGreedy.name}
	}
	r := openTiny(t, on)
	if err := r.manifest(); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Config runConfig `json:"config"`
	}
	if err := r.f.ReadJSON("manifest.json", &m); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(m.Config)
	want, _ := json.Marshal(r.runConfig())
	if string(got) != string(want) || m.Config.Format != manifestFormat || m.Config.Recalibration == nil || m.Config.FilteredBC == nil || m.Config.Optimizers != "grpo,grpo-greedy-baseline" {
		t.Fatalf("manifest read back\n%s\nwant\n%s", got, want)
	}
	if err := r.manifest(); err != nil {
		t.Fatalf("resume with the same settings: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"recalibration", func(c *Config) { c.Preset.Recalibration.HumanEpisodes++ }, "recalibration {Rounds:"},
		{"static reward", func(c *Config) { c.StaticRewards = nil }, "static_reward outcome,behaviour, not outcome (--static-reward)"},
		{"tokens", func(c *Config) { c.StaticTokens = 50 }, "static_tokens 100, not 50"},
		{"grid", func(c *Config) { c.TuneGrid = []float64{0, 1} }, "tune_grid [0 0.5], not [0 1]"},
		{"filtered BC", func(c *Config) { c.FilteredBC = false }, "filtered_bc true, not false"},
		{"optimizers", func(c *Config) { c.Optimizers = nil }, "optimizers grpo,grpo-greedy-baseline, not grpo (--optimizers: a run folder may gain optimizers, never lose one)"},
		{"other optimizers", func(c *Config) { c.Optimizers = []string{"grpo", optGRPOTurns.name} }, "optimizers grpo,grpo-greedy-baseline, not grpo,grpo-turn-credit (--optimizers"},
	} {
		other := openTiny(t, func(cfg *Config) { on(cfg); c.edit(cfg) })
		data, err := os.ReadFile(r.f.Path("manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(other.f.Path("manifest.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := other.manifest(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal naming %q", c.name, err, c.want)
		}
	}
	newer := r.runConfig()
	newer.Format = manifestFormat + 1
	if err := r.f.WriteJSON("manifest.json", runfolder.Manifest{Seed: 1, Config: newer}); err != nil {
		t.Fatal(err)
	}
	if err := r.manifest(); err == nil || !strings.Contains(err.Error(), "newer calibrl") {
		t.Errorf("a newer format: %v", err)
	}
}

// Every run folder committed under results/ that a reproduce run made
// reads into the manifest struct, with the settings the resume compares
// equal to the map it was written from.
func TestResultsManifestsLoad(t *testing.T) {
	n := 0
	err := filepath.WalkDir(filepath.Join("..", "results"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "manifest.json" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var raw struct {
			Config map[string]any `json:"config"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			return err
		}
		if _, ok := raw.Config["rl"]; !ok {
			return nil // a prepared folder's (prepare.go), or another command's
		}
		var typed struct {
			Config runConfig `json:"config"`
		}
		if err := json.Unmarshal(data, &typed); err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		c := typed.Config
		seeds, hasSeeds := raw.Config["rl_seeds"].(float64)
		iters := raw.Config["rl"].(map[string]any)["Iterations"].(float64)
		if c.Task != raw.Config["task"] || c.Preset != raw.Config["preset"] || c.RL.Iterations != int(iters) ||
			hasSeeds != (c.RLSeeds != nil) || hasSeeds && *c.RLSeeds != int(seeds) {
			t.Errorf("%s: read as %s/%s, %d iterations, seeds %v; the map holds %v", path, c.Task, c.Preset, c.RL.Iterations, c.RLSeeds, raw.Config)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Skip("no committed run folders under results/")
	}
	t.Logf("%d committed run manifests read", n)
}

// The models' and the sampler's precision are settings the folder holds:
// a folder started in fp32 is refused, naming the field, to a run in bf16
// and to one sampling in bf16 apart, and a folder started so resumes only
// so (a resumed run must give the uninterrupted one's numbers).
func TestManifestPrecision(t *testing.T) {
	if !gemm.HasBF16() {
		t.Skip("no bf16 instructions on this CPU: bf16 runs as fp32")
	}
	defer lm.SetPrecision(lm.SetPrecision(lm.FP32))
	fp32 := openTiny(t, nil)
	if err := fp32.manifest(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		set        func()
		want, back string
	}{
		{"bf16", func() { lm.SetPrecision(lm.BF16) }, "precision fp32, not bf16", "precision bf16, not fp32"},
		{"sample bf16", func() { lm.SetSamplePrecision(lm.BF16) }, "sample_precision --precision's, not bf16 (--sample-precision)", "sample_precision bf16, not --precision's"},
	} {
		c.set()
		r := openTiny(t, nil)
		if err := r.manifest(); err != nil {
			t.Fatalf("%s in a new folder: %v", c.name, err)
		}
		r.cfg.Out = fp32.cfg.Out
		r.f = fp32.f
		if err := r.manifest(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s resuming an fp32 folder: %v, want a refusal naming %q", c.name, err, c.want)
		}
		bfFolder := openTiny(t, nil)
		if err := bfFolder.manifest(); err != nil {
			t.Fatal(err)
		}
		if err := bfFolder.manifest(); err != nil {
			t.Errorf("%s resuming its own folder: %v", c.name, err)
		}
		lm.SetPrecision(lm.FP32)
		if err := bfFolder.manifest(); err == nil || !strings.Contains(err.Error(), c.back) {
			t.Errorf("fp32 resuming a %s folder: %v, want a refusal naming %q", c.name, err, c.back)
		}
	}
}

// A folder records the copy its simulator was held to and its value
// words; another kind or other words, as another version might hold the
// same task's simulator to, are refused by name, and a folder from
// before the fields resumes.
func TestManifestSimCopyKind(t *testing.T) {
	copying := func(c *Config) { c.SimCopy = true }
	r := openTiny(t, copying)
	if err := r.manifest(); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := r.f.ReadJSON("manifest.json", &m); err != nil {
		t.Fatal(err)
	}
	config := m["config"].(map[string]any)
	if config["sim_copy_kind"] != "numbers" || config["sim_copy_words"] != nil {
		t.Fatalf("mathchat's copy recorded as %v, words %v; want numbers and none", config["sim_copy_kind"], config["sim_copy_words"])
	}
	for _, c := range []struct {
		name  string
		field string
		value any
		want  string
	}{
		{"another kind", "sim_copy_kind", "values", "sim_copy_kind values, not numbers"},
		{"words", "sim_copy_words", []string{"lena"}, "sim_copy_words lena, not"},
		{"before the fields", "sim_copy_kind", nil, ""},
	} {
		r := openTiny(t, copying)
		cfg := maps.Clone(config)
		cfg[c.field] = c.value
		if c.value == nil {
			delete(cfg, c.field)
		}
		old := maps.Clone(m)
		old["config"] = cfg
		if err := r.f.WriteJSON("manifest.json", old); err != nil {
			t.Fatal(err)
		}
		err := r.manifest()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// A folder started before the simulator's ledger was the default is
// refused by a run that adds it, with the flag that resumes it named.
// The ledger joins the task's name itself, so no other field is needed
// to tell the two apart.
func TestManifestSimLedger(t *testing.T) {
	plain := openTiny(t, nil)
	if err := plain.manifest(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.cfg.Task, task.WithUserLedger) {
		t.Fatalf("task %s without SimLedger carries the ledger", plain.cfg.Task)
	}
	withLedger := openTiny(t, func(c *Config) { c.SimLedger, c.Out = true, plain.cfg.Out })
	if !strings.HasSuffix(withLedger.cfg.Task, ":"+task.WithUserLedger) {
		t.Fatalf("task %s with SimLedger, want the ledger option", withLedger.cfg.Task)
	}
	err := withLedger.manifest()
	if err == nil || !strings.Contains(err.Error(), "--sim-ledger=false") {
		t.Fatalf("resuming a folder without the ledger: %v, want the flag that resumes it named", err)
	}
}
