package reproduce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/sft"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

// recalConfig is the tiny run with the recalibrated arm.
func recalConfig(t *testing.T) Config {
	t.Helper()
	cfg := tinyConfig(t)
	cfg.Recalibrate = true
	if cfg.Preset.Recalibration.Rounds < 2 {
		t.Fatalf("the tiny preset has %d recalibration rounds: the tests want a re-fit", cfg.Preset.Recalibration.Rounds)
	}
	return cfg
}

// copyRun copies the uninterrupted run's folder, so that a recalibrated
// run adds only its own stages to it (the five arms are done).
func copyRun(t *testing.T, dst string) {
	t.Helper()
	src, _ := wholeRun(t)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// recalWhole is one uninterrupted tiny run with the recalibrated arm,
// shared by the tests that read it; TestMain removes root.
var recalWhole struct {
	once      sync.Once
	root, out string
	rows      []Row
	err       error
}

func recalRun(t *testing.T) (string, []Row) {
	t.Helper()
	cfg := recalConfig(t)
	src, _ := wholeRun(t)
	recalWhole.once.Do(func() {
		if recalWhole.root, recalWhole.err = os.MkdirTemp("", "reproduce-recal-"); recalWhole.err != nil {
			return
		}
		recalWhole.out = filepath.Join(recalWhole.root, "run")
		if recalWhole.err = os.CopyFS(recalWhole.out, os.DirFS(src)); recalWhole.err != nil {
			return
		}
		cfg.Out = recalWhole.out
		recalWhole.rows, recalWhole.err = Run(context.Background(), cfg)
	})
	if recalWhole.err != nil {
		t.Fatal(recalWhole.err)
	}
	return recalWhole.out, recalWhole.rows
}

// The rounds spend exactly the calibrated arm's budget: the same config
// but for the seed-independent split of iterations, contiguous training
// instances from the arm's first, and the arm's RL seed.
func TestRecalibrationRoundsKeepTheBudget(t *testing.T) {
	for _, name := range []string{"tiny", "quick"} {
		p, err := preset.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		r := &run{cfg: Config{Preset: p, Seed: 5, Recalibrate: true}}
		for k := range 2 {
			total, next := 0, p.RLConfig(0).Start
			for i := 1; i <= p.Recalibration.Rounds; i++ {
				c := r.roundConfig(k, i)
				if c.Start != next {
					t.Errorf("%s seed %d round %d: starts at instance %d, want %d (after the earlier rounds')", name, k, i, c.Start, next)
				}
				if c.Seed != RLSeed(5, k) {
					t.Errorf("%s seed %d round %d: RL seed %d, want RLSeed(5, %d) = %d", name, k, i, c.Seed, k, RLSeed(5, k))
				}
				same, want := c, p.RLConfig(0)
				same.Seed, same.Start, same.Iterations, want.Seed = 0, want.Start, 0, 0
				want.Iterations = 0
				if !reflect.DeepEqual(same, want) {
					t.Errorf("%s round %d: the config differs from every arm's beyond seed, start and iterations:\n got %+v\nwant %+v", name, i, same, want)
				}
				total += c.Iterations
				next += c.Iterations * c.InstancesPerStep
			}
			if total != p.RL.Iterations {
				t.Errorf("%s seed %d: %d iterations over the rounds, every other arm gets %d", name, k, total, p.RL.Iterations)
			}
		}
	}
}

// A tiny run with --recalibrate trains the arm through every round,
// evaluates it like the others, counts its human conversations and files
// the two recalibration claims under it.
func TestRecalibratedRun(t *testing.T) {
	dir, rows := recalRun(t)
	cfg := recalConfig(t)
	p := cfg.Preset
	// Without Recalibrate the arm is absent.
	plain, plainRows := wholeRun(t)
	if _, err := os.Stat(filepath.Join(plain, "recalibration.json")); err == nil || len(plainRows) != len(Arms) {
		t.Errorf("a run without Recalibrate has %d rows and recalibration.json (stat: %v)", len(plainRows), err)
	}
	rounds := p.Recalibration.RoundIterations(p.RL.Iterations)
	f := &runfolder.Folder{Dir: dir}
	var calib, recal train.RLResult
	for k := range p.RLSeeds {
		if err := f.ReadJSON(filepath.Join("checkpoints", seedName(ArmCalibrated, k), "grpo_result.json"), &calib); err != nil {
			t.Fatal(err)
		}
		sum := 0
		for i := 1; i <= len(rounds); i++ {
			ckpt := filepath.Join("checkpoints", ArmRecalibrated, "rounds", fmt.Sprintf("seed-%d", k), fmt.Sprintf("round-%d", i), "policy")
			if i == len(rounds) {
				ckpt = filepath.Join("checkpoints", seedName(ArmRecalibrated, k))
			}
			if err := f.ReadJSON(filepath.Join(ckpt, "grpo_result.json"), &recal); err != nil {
				t.Fatal(err)
			}
			sum += recal.Iterations
		}
		if sum != calib.Iterations || sum != p.RL.Iterations {
			t.Errorf("seed %d: the rounds trained %d iterations, the calibrated arm %d, the preset %d", k, sum, calib.Iterations, p.RL.Iterations)
		}
		for _, d := range decodings {
			if _, err := os.Stat(f.Path(evalFile(d, ArmRecalibrated, k) + ".episodes.jsonl")); err != nil {
				t.Errorf("seed %d: no %s evaluation", k, d.name)
			}
		}
	}

	var rec Recalibration
	if err := f.ReadJSON("recalibration.json", &rec); err != nil {
		t.Fatal(err)
	}
	want := p.RLSeeds * (len(rounds) - 1) * p.Recalibration.HumanEpisodes
	if rec.HumanConversations != want || len(rec.Seeds) != p.RLSeeds || len(rec.Mean) != len(rounds) {
		t.Fatalf("recalibration.json: %d human conversations (want %d), %d seeds, %d round means", rec.HumanConversations, want, len(rec.Seeds), len(rec.Mean))
	}
	for _, s := range rec.Seeds {
		if len(s.Rounds) != len(rounds) {
			t.Fatalf("seed %d: %d rounds, want %d", s.Seed, len(s.Rounds), len(rounds))
		}
		for _, rd := range s.Rounds {
			g := rd.Gap
			if g.Problems != p.Recalibration.GapEpisodes || math.Abs(g.Gap-(g.SimScore-g.HumanScore)) > 1e-12 || len(g.Delta) != fidelityTurns || g.NLL == nil {
				t.Errorf("seed %d round %d: gap %+v", s.Seed, rd.Round, g)
			}
			last := rd.Round == len(rounds)
			if last != (rd.AfterRefit == nil) || last != (rd.Refit == nil) {
				t.Fatalf("seed %d round %d: a re-fit reading after every round but the last, got %+v", s.Seed, rd.Round, rd)
			}
			if last {
				continue
			}
			if rd.Refit.NewHuman != p.Recalibration.HumanEpisodes || rd.Refit.Logs != p.LogEpisodes || rd.Refit.Steps != p.Recalibration.SFT.Steps {
				t.Errorf("seed %d round %d: re-fit %+v", s.Seed, rd.Round, *rd.Refit)
			}
			if rd.AfterRefit.Simulator == g.Simulator || *rd.AfterRefit.NLL == *g.NLL {
				t.Errorf("seed %d round %d: the reading after the re-fit (%s, NLL %v) is not of a new simulator (%s, %v)", s.Seed, rd.Round,
					rd.AfterRefit.Simulator, *rd.AfterRefit.NLL, g.Simulator, *g.NLL)
			}
			meta, err := sft.ReadMeta(f.Path(rd.AfterRefit.Simulator))
			if err != nil {
				t.Fatal(err)
			}
			if meta.From != f.Path(g.Simulator) {
				t.Errorf("seed %d round %d: re-fit warm-started from %q, want the round's simulator %q", s.Seed, rd.Round, meta.From, f.Path(g.Simulator))
			}
		}
	}

	var got []string
	for _, row := range rows {
		for _, c := range row.Comparisons {
			if row.Arm == ArmRecalibrated {
				got = append(got, c.Claim)
				if len(c.Seeds) != p.RLSeeds || !strings.Contains(c.Paper, "not in the paper") {
					t.Errorf("%s: %+v", c.Claim, c)
				}
			}
		}
	}
	if strings.Join(got, "; ") != "recalibrated-interactive > calibrated-interactive; recalibrated-interactive > oracle-interactive; recalibrated-interactive > refit-control-interactive" {
		t.Errorf("claims under the recalibrated arm: %q", got)
	}
	if rows[len(rows)-2].Arm != ArmRecalibrated || rows[len(rows)-1].Arm != ArmRefitControl || len(rows) != len(Arms)+2 {
		t.Errorf("rows end with %s, %s (%d rows): want the recalibrated arm, then its control", rows[len(rows)-2].Arm, rows[len(rows)-1].Arm, len(rows))
	}
	report, err := os.ReadFile(f.Path("report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Online recalibration (recalibrated-interactive)", fmt.Sprintf("Human conversations used: **%d**", want),
		"| recalibrated-interactive > calibrated-interactive |", "| 1 | 2 | "} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// No re-fit trains on a held-out problem: every episode of every re-fit's
// data is from the training split, the data is exactly what the re-fit
// trained on, and a test-split conversation slipped into it is refused.
func TestRefitNeverTrainsOnTheTestSplit(t *testing.T) {
	dir, _ := recalRun(t)
	cfg := recalConfig(t)
	tk, err := task.Lookup(cfg.Task + ":" + cfg.Preset.Level)
	if err != nil {
		t.Fatal(err)
	}
	r := &run{cfg: cfg, t: tk, f: &runfolder.Folder{Dir: dir}, logsPath: filepath.Join(dir, "logs.jsonl"), shared: filepath.Join(dir, "checkpoints")}
	rounds := len(r.rounds())
	for k := range r.seeds() {
		for i := 1; i < rounds; i++ {
			logs, human, err := r.refitData(k, i)
			if err != nil {
				t.Fatal(err)
			}
			held, err := dialog.LoadEpisodes(filepath.Join(r.roundDir(k, i), "gap-human.episodes.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			heldOut := map[string]bool{}
			for _, ep := range held {
				if ep.Split != "test" {
					t.Fatalf("gap conversation %s is from split %s, want test", ep.ID, ep.Split)
				}
				heldOut[ep.Oracle.ID] = true
			}
			for _, ep := range append(logs, human...) {
				if ep.Split != "train" || ep.Oracle.Split != "train" || heldOut[ep.Oracle.ID] {
					t.Errorf("seed %d re-fit %d trains on %s (split %s, problem %s)", k, i, ep.ID, ep.Split, ep.Oracle.ID)
				}
			}
			meta, err := sft.ReadMeta(r.roundSim(k, i))
			if err != nil {
				t.Fatal(err)
			}
			if meta.Logs != len(logs)+len(human) || len(human) != i*cfg.Preset.Recalibration.HumanEpisodes {
				t.Errorf("seed %d re-fit %d trained on %d episodes; its data is %d logs + %d human conversations", k, i, meta.Logs, len(logs), len(human))
			}
		}
	}

	// A test-split conversation among a round's human ones is refused.
	bad := t.TempDir()
	planted := &run{cfg: cfg, t: tk, f: &runfolder.Folder{Dir: bad}, logsPath: r.logsPath}
	human, err := dialog.LoadEpisodes(r.humanFile(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	held, err := dialog.LoadEpisodes(filepath.Join(r.roundDir(0, 1), "gap-human.episodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(planted.roundDir(0, 1), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := dialog.SaveEpisodes(planted.humanFile(0, 1), append(human, held[0])); err != nil {
		t.Fatal(err)
	}
	if _, _, err := planted.refitData(0, 1); err == nil || !strings.Contains(err.Error(), `split "test"`) {
		t.Errorf("re-fit data with a held-out conversation: %v, want a refusal naming the test split", err)
	}
}

// The kill test of the re-fit: a run is killed with SIGKILL in the middle
// of a re-fit's SFT (after its first checkpoint, before its second) and
// started again; it ends with the same summaries, recalibration.json,
// report.md and re-fitted simulator as the uninterrupted run.
//
// The killed run is this test binary re-executed (TestRecalKillChild),
// which kills itself at that log line, so the kill lands at exactly that
// point with no deferred cleanup.
const (
	recalKillEnv   = "CALIBRL_RECAL_KILL_CHILD" // the run folder
	recalKillStage = "CALIBRL_RECAL_KILL_STAGE" // the re-fit stage to kill in
)

// killAt is a slog handler that SIGKILLs its own process when stage logs
// a step.
type killAt struct {
	slog.Handler
	stage, step string
}

func (h killAt) Enabled(context.Context, slog.Level) bool { return true }

func (h killAt) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if r.Message == h.stage && a.Key == "step" && a.Value.String() == h.step {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		return true
	})
	return nil
}

// The re-fit is killed at its second evaluation step, before the
// checkpoint of that step: it resumes from the first one.
const (
	killStep      = "4"
	killResumedAt = 2
)

func TestRecalKillChild(t *testing.T) {
	out := os.Getenv(recalKillEnv)
	if out == "" {
		t.Skip("run by TestRecalibrationKilledInARefitResumesIdentically")
	}
	cfg := recalConfig(t)
	cfg.Out = out
	cfg.Log = slog.New(killAt{Handler: quiet.Handler(), stage: os.Getenv(recalKillStage), step: killStep})
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
}

func TestRecalibrationKilledInARefitResumesIdentically(t *testing.T) {
	killInARefit(t, roundStage(0, 1)+"/refit", filepath.Join("checkpoints", ArmRecalibrated, "rounds", "seed-0", "round-1", "sim"),
		filepath.Join("checkpoints", seedName(ArmRecalibrated, 0)))
}

// killInARefit kills a recalibrated run in the re-fit stage refit, which
// writes the simulator sim, resumes it, and compares the summaries,
// recalibration.json, report.md, that simulator and policy's weights
// with the uninterrupted run's.
func killInARefit(t *testing.T, refit, sim, policy string) {
	t.Helper()
	if os.Getenv(recalKillEnv) != "" {
		t.Skip("inside a child")
	}
	cfg := recalConfig(t)
	if s := cfg.Preset.Recalibration.SFT.Config(0); s.EvalEvery != killResumedAt || s.CheckpointEvery != killResumedAt || s.Steps <= 4 {
		t.Fatalf("the tiny re-fit evaluates every %d and checkpoints every %d of %d steps: the kill point assumes 2, 2 and more than 4", s.EvalEvery, s.CheckpointEvery, s.Steps)
	}
	want, _ := recalRun(t)
	cut := filepath.Join(t.TempDir(), "cut")
	copyRun(t, cut)

	cmd := exec.Command(os.Args[0], "-test.run=^TestRecalKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), recalKillEnv+"="+cut, recalKillStage+"="+refit)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v, want killed by SIGKILL\n%s", err, output.String())
	}
	if _, err := os.Stat(filepath.Join(cut, "stages", refit)); err == nil {
		t.Fatal("the re-fit is marked done: the kill did not land in it")
	}
	if _, err := os.Stat(filepath.Join(cut, "stages", filepath.Dir(refit), "human")); err != nil {
		t.Fatal("the re-fit's human conversations are not done: the kill landed before the re-fit")
	}
	var st struct {
		Step int `json:"step"`
	}
	state, err := os.ReadFile(filepath.Join(cut, sim, "last", "trainer_state.json"))
	if err != nil {
		t.Fatalf("no re-fit checkpoint to resume from: %v", err)
	}
	if err := json.Unmarshal(state, &st); err != nil || st.Step != killResumedAt {
		t.Fatalf("re-fit checkpoint at step %d (%v), want %d", st.Step, err, killResumedAt)
	}

	cfg.Out = cut
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"summary.json", "summary-greedy.json", "recalibration.json", "report.md",
		filepath.Join(sim, "model.safetensors"), filepath.Join(policy, "model.safetensors")} {
		a, err := os.ReadFile(filepath.Join(want, file))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(cut, file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the uninterrupted run and the one killed in %s", file, refit)
		}
	}
	// metrics.jsonl holds each record once: none of the steps the killed
	// re-fit logged after its checkpoint is repeated.
	got, wantRecs := recordKeys(t, cut), recordKeys(t, want)
	for st, w := range wantRecs {
		if !slices.Equal(got[st], w) {
			t.Errorf("stage %s: metrics.jsonl after the kill in %s and resume holds\n%s\nwant, as the uninterrupted run's,\n%s", st, refit, strings.Join(got[st], "\n"), strings.Join(w, "\n"))
		}
	}
	for st := range got {
		if _, ok := wantRecs[st]; !ok {
			t.Errorf("stage %s: only in the resumed run", st)
		}
	}
}
