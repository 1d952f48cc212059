package reproduce

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/task"
)

// Every trained policy's sim-to-real gap is measured, its human side is
// the sampled evaluation's own conversations, and the report says it.
func TestSimToRealGapOfEveryArm(t *testing.T) {
	dir, _ := wholeRun(t)
	f := &runfolder.Folder{Dir: dir}
	cfg := tinyConfig(t)
	for _, arm := range append([]string{ArmBase}, rlArms...) {
		seeds := cfg.Preset.RLSeeds
		if arm == ArmBase {
			seeds = 1
		}
		for k := range seeds {
			file := fidelityFile(arm, k)
			var g SimToReal
			if err := f.ReadJSON(file+".json", &g); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var human eval.Summary
			if err := f.ReadJSON(evalFile(sampled, arm, k)+".json", &human); err != nil {
				t.Fatal(err)
			}
			if g.Problems != cfg.Preset.EvalEpisodes || g.HumanFrom != evalFile(sampled, arm, k)+".episodes.jsonl" {
				t.Errorf("%s: %d problems, human side from %s; want %d and the sampled evaluation's", file, g.Problems, g.HumanFrom, cfg.Preset.EvalEpisodes)
			}
			if g.HumanScore != human.Success {
				t.Errorf("%s: human score %v, the evaluation's success %v", file, g.HumanScore, human.Success)
			}
			if math.Abs(g.Gap-(g.SimScore-g.HumanScore)) > 1e-12 || g.CI95[0] > g.Gap || g.CI95[1] < g.Gap {
				t.Errorf("%s: gap %v [%v, %v], want sim − human = %v inside its interval", file, g.Gap, g.CI95[0], g.CI95[1], g.SimScore-g.HumanScore)
			}
			if g.Simulator != filepath.Join("checkpoints", "sim") || g.Decoding != "sampled" || len(g.Delta) != fidelityTurns {
				t.Errorf("%s: simulator %q, decoding %q, %d δ_t; want checkpoints/sim, sampled, %d", file, g.Simulator, g.Decoding, len(g.Delta), fidelityTurns)
			}
			simEps, err := dialog.LoadEpisodes(f.Path(file + ".episodes.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if simEps[0].User != "learned" || simEps[0].Split != "test" {
				t.Errorf("%s: conversations by user %q on split %q, want the learned simulator on test", file, simEps[0].User, simEps[0].Split)
			}
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Sim-to-real gap of the trained policies", "| calibrated-interactive | 2 |", "| base | 1 |"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// Without a usable evaluation the stage plays the human side itself, and
// gets the evaluation's conversations exactly: the same policy, decoding,
// problems and seeds.
func TestSimToRealPlaysTheHumanSideWhenNoEvaluation(t *testing.T) {
	dir, _ := wholeRun(t)
	cfg := tinyConfig(t)
	cfg.Task += ":" + cfg.Preset.Level
	cfg.Out = filepath.Join(t.TempDir(), "bare")
	tk, err := task.Lookup(cfg.Task)
	if err != nil {
		t.Fatal(err)
	}
	f, err := runfolder.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := &run{cfg: cfg, t: tk, f: f, shared: filepath.Join(dir, "checkpoints")}
	if err := r.simToReal(ArmBase, 0)(context.Background()); err != nil {
		t.Fatal(err)
	}
	var g SimToReal
	if err := f.ReadJSON(fidelityFile(ArmBase, 0)+".json", &g); err != nil {
		t.Fatal(err)
	}
	if g.HumanFrom != fidelityFile(ArmBase, 0)+".human.episodes.jsonl" {
		t.Fatalf("human side from %s, want played by the stage", g.HumanFrom)
	}
	var want SimToReal
	if err := (&runfolder.Folder{Dir: dir}).ReadJSON(fidelityFile(ArmBase, 0)+".json", &want); err != nil {
		t.Fatal(err)
	}
	if g.HumanScore != want.HumanScore || g.SimScore != want.SimScore {
		t.Errorf("played: sim %v human %v; from the evaluation: sim %v human %v", g.SimScore, g.HumanScore, want.SimScore, want.HumanScore)
	}
	if !strings.HasPrefix(g.Simulator, dir) {
		t.Errorf("simulator %q: a simulator outside the run folder is named by its path", g.Simulator)
	}
}

func TestSimToRealPairing(t *testing.T) {
	ep := func(index int, seed uint64, success bool) dialog.Episode {
		return dialog.Episode{Split: "test", Index: index, Seed: seed, Success: success, Agent: "a", User: "human", End: dialog.Solved,
			Messages: []dialog.Message{{Role: dialog.RoleUser, Content: "hi"}}}
	}
	sim := []dialog.Episode{ep(0, 7, true), ep(1, 8, true), ep(2, 9, false), ep(3, 10, true)}
	human := []dialog.Episode{ep(0, 7, false), ep(1, 8, true), ep(2, 9, false), ep(3, 10, false)}
	g, err := simToRealOf(dialog.Success, sim, human, 1)
	if err != nil {
		t.Fatal(err)
	}
	if g.SimScore != 0.75 || g.HumanScore != 0.25 || g.Gap != 0.5 || g.Problems != 4 {
		t.Errorf("got sim %v human %v gap %v over %d, want 0.75, 0.25, 0.5 over 4", g.SimScore, g.HumanScore, g.Gap, g.Problems)
	}
	human[2].Seed = 99
	if _, err := simToRealOf(dialog.Success, sim, human, 1); err == nil || !strings.Contains(err.Error(), "not paired") {
		t.Errorf("another seed on problem 2: got %v, want not paired", err)
	}
	if _, err := simToRealOf(dialog.Success, sim, human[:3], 1); err == nil {
		t.Error("3 conversations against 4: want an error")
	}

	rc := rollout.Config{Split: "test", Instances: 2, Seed: 5, AgentName: "a"}
	played := []dialog.Episode{ep(0, rollout.EpisodeSeed(5, 0, 0), true), ep(1, rollout.EpisodeSeed(5, 1, 0), true)}
	if err := pairing(played, rc, "human"); err != nil {
		t.Errorf("matching conversations: %v", err)
	}
	for name, breaks := range map[string]func([]dialog.Episode) []dialog.Episode{
		"fewer":       func(e []dialog.Episode) []dialog.Episode { return e[:1] },
		"other seed":  func(e []dialog.Episode) []dialog.Episode { e[1].Seed++; return e },
		"other agent": func(e []dialog.Episode) []dialog.Episode { e[0].Agent = "b"; return e },
		"other user":  func(e []dialog.Episode) []dialog.Episode { e[0].User = "naive"; return e },
	} {
		e := append([]dialog.Episode(nil), played...)
		if err := pairing(breaks(e), rc, "human"); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}
