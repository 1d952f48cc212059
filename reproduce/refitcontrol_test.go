package reproduce

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/sft"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

// recalRunOf is the recalibrated tiny run's folder as a run.
func recalRunOf(t *testing.T) *run {
	t.Helper()
	dir, _ := recalRun(t)
	cfg := recalConfig(t)
	tk, err := task.Lookup(cfg.Task + ":" + cfg.Preset.Level)
	if err != nil {
		t.Fatal(err)
	}
	return &run{cfg: cfg, t: tk, f: &runfolder.Folder{Dir: dir}, logsPath: filepath.Join(dir, "logs.jsonl"), shared: filepath.Join(dir, "checkpoints")}
}

// A tiny run with --recalibrate trains the control with the whole RL
// budget, evaluates it like every arm, and reports recalibrated − control
// paired over problems and seeds, with the control's gaps beside the
// rounds'.
func TestRefitControlRun(t *testing.T) {
	r := recalRunOf(t)
	_, rows := recalRun(t)
	p := r.cfg.Preset
	m := r.measure()
	var want float64 // recalibrated − control, from the evaluations themselves
	for k := range p.RLSeeds {
		var res train.RLResult
		if err := r.f.ReadJSON(filepath.Join("checkpoints", seedName(ArmRefitControl, k), "grpo_result.json"), &res); err != nil {
			t.Fatal(err)
		}
		if res.Iterations != p.RL.Iterations {
			t.Errorf("seed %d: the control trained %d iterations, the preset's budget is %d", k, res.Iterations, p.RL.Iterations)
		}
		for _, d := range decodings {
			if _, err := os.Stat(r.f.Path(evalFile(d, ArmRefitControl, k) + ".episodes.jsonl")); err != nil {
				t.Errorf("seed %d: no %s evaluation of the control", k, d.name)
			}
		}
		recal, err := r.loadEval(sampled, ArmRecalibrated, k)
		if err != nil {
			t.Fatal(err)
		}
		ctl, err := r.loadEval(sampled, ArmRefitControl, k)
		if err != nil {
			t.Fatal(err)
		}
		want += (mean(recal.scores(m)) - mean(ctl.scores(m))) / float64(p.RLSeeds)
	}
	got, err := comparison(rows, ArmRecalibrated, ArmRefitControl)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Difference-want) > 1e-12 || len(got.Seeds) != p.RLSeeds || got.CI95[0] > got.Difference || got.CI95[1] < got.Difference {
		t.Errorf("recalibrated − control: %+v, want the difference %v of the evaluations with its interval around it", got, want)
	}
	if _, err := comparison(rows, ArmRefitControl, ArmCalibrated); err != nil {
		t.Error(err)
	}

	var rec Recalibration
	if err := r.f.ReadJSON("recalibration.json", &rec); err != nil {
		t.Fatal(err)
	}
	if rec.VersusControl.Claim != got.Claim || rec.VersusControl.Difference != got.Difference || len(rec.Control) != p.RLSeeds {
		t.Fatalf("recalibration.json: versus control %+v (summary %+v), %d control seeds", rec.VersusControl, got, len(rec.Control))
	}
	for k, c := range rec.Control {
		for _, g := range []GapMeasure{c.AfterRefit, c.End} {
			if g.Arm != ArmRefitControl || g.Seed != k || g.Problems != p.Recalibration.GapEpisodes || g.NLL == nil ||
				g.Simulator != filepath.Join("checkpoints", ArmRefitControl, "sim", fmt.Sprintf("seed-%d", k)) {
				t.Errorf("seed %d: control gap %+v", k, g)
			}
		}
		if c.AfterRefit.HumanFrom == c.End.HumanFrom {
			t.Errorf("seed %d: the base's and the trained policy's gaps read the same conversations %s", k, c.End.HumanFrom)
		}
	}
	report, err := os.ReadFile(r.f.Path("report.md"))
	if err != nil {
		t.Fatal(err)
	}
	c := rec.VersusControl
	for _, want := range []string{"### Against its control (refit-control-interactive)",
		fmt.Sprintf("recalibrated-interactive − refit-control-interactive = **%+.3f [%+.3f, %+.3f]**", c.Difference, c.CI95[0], c.CI95[1]),
		"| recalibrated-interactive > refit-control-interactive |", "| refit-control-interactive > calibrated-interactive |",
		fmt.Sprintf("| 0 | %+.3f [%+.3f, %+.3f] → %+.3f |", rec.Seeds[0].Rounds[0].Gap.Gap, rec.Seeds[0].Rounds[0].Gap.CI95[0],
			rec.Seeds[0].Rounds[0].Gap.CI95[1], rec.Seeds[0].Rounds[0].AfterRefit.Gap)} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// The control's one re-fit trains on exactly as many human conversations
// as the recalibrated arm's re-fits of the seed together, on the same
// training problems with the same episode seeds but played by the base,
// with as many replayed logs as one of those re-fits and their steps in
// total, warm-started from the shared simulator.
func TestRefitControlMatchesTheRecalibratedData(t *testing.T) {
	r := recalRunOf(t)
	rounds := len(r.rounds())
	for k := range r.seeds() {
		var recal []dialog.Episode
		steps := 0
		for i := 1; i < rounds; i++ {
			eps, err := dialog.LoadEpisodes(r.humanFile(k, i))
			if err != nil {
				t.Fatal(err)
			}
			recal = append(recal, eps...)
			meta, err := sft.ReadMeta(r.roundSim(k, i))
			if err != nil {
				t.Fatal(err)
			}
			steps += meta.Result.Steps
		}
		roundLogs, _, err := r.refitData(k, 1)
		if err != nil {
			t.Fatal(err)
		}
		logs, human, err := r.controlData(k)
		if err != nil {
			t.Fatal(err)
		}
		meta, err := sft.ReadMeta(r.controlSim(k))
		if err != nil {
			t.Fatal(err)
		}
		if len(recal) == 0 || len(human) != len(recal) || meta.Logs != len(logs)+len(recal) || len(logs) != len(roundLogs) {
			t.Fatalf("seed %d: the control re-fit trained on %d episodes (%d logs + %d human); the recalibrated arm's re-fits got %d human in total, %d logs each",
				k, meta.Logs, len(logs), len(human), len(recal), len(roundLogs))
		}
		if meta.Result.Steps != steps || meta.From != r.ckpt("sim") {
			t.Errorf("seed %d: the control re-fit took %d steps from %q, want the re-fits' %d from the shared simulator", k, meta.Result.Steps, meta.From, steps)
		}
		for j, ep := range human {
			if ep.Split != "train" || ep.Index != recal[j].Index || ep.Seed != recal[j].Seed || ep.Agent == recal[j].Agent {
				t.Fatalf("seed %d conversation %d: the control's is %s problem %d seed %d by %s; the recalibrated arm's problem %d seed %d by %s",
					k, j, ep.Split, ep.Index, ep.Seed, ep.Agent, recal[j].Index, recal[j].Seed, recal[j].Agent)
			}
		}
	}

	// A control short of one conversation is refused, not re-fitted.
	bad := &run{cfg: r.cfg, t: r.t, f: &runfolder.Folder{Dir: t.TempDir()}, logsPath: r.logsPath}
	human, err := dialog.LoadEpisodes(r.controlHumanFile(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(bad.controlHumanFile(0)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := dialog.SaveEpisodes(bad.controlHumanFile(0), human[1:]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bad.controlData(0); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("want %d", len(human))) {
		t.Errorf("control data one conversation short: %v, want a refusal naming the count", err)
	}
}

// A run killed in the control's re-fit resumes to the uninterrupted
// run's files.
func TestRefitControlKilledInItsRefitResumesIdentically(t *testing.T) {
	killInARefit(t, controlStage(0, "refit"), filepath.Join("checkpoints", ArmRefitControl, "sim", "seed-0"),
		filepath.Join("checkpoints", seedName(ArmRefitControl, 0)))
}

// A recalibration of one round has no re-fit: its control would be the
// calibrated arm again, so the run refuses it before training anything.
func TestRefitControlWantsARefit(t *testing.T) {
	cfg := recalConfig(t)
	cfg.Out = filepath.Join(t.TempDir(), "run")
	cfg.Preset.Recalibration.Rounds = 1
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "want at least 2 rounds") {
		t.Errorf("one round: %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Out, "logs.jsonl")); err == nil {
		t.Error("the refused run collected logs")
	}
}
