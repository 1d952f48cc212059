package reproduce

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/fidelity"
	"github.com/calibrl/calibrl/task"
)

// The gate runs before RL in every run: the tiny run's folder holds its
// record (the calibrated and the naive simulator measured on the same
// validation histories) and the report its section, whose verdict is the
// record's.
func TestSimGateRecordAndReport(t *testing.T) {
	out, _ := wholeRun(t)
	var rec SimFidelity
	data, err := os.ReadFile(filepath.Join(out, simGateFile+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Sim.Histories == 0 || rec.Sim.Histories != rec.Naive.Histories || rec.Mode != SimGateWarn || rec.Bound != DefaultSimGateBound {
		t.Fatalf("gate record %+v: want both simulators on the same histories, warn mode, the default bound", rec)
	}
	if rec.Gap == nil || rec.Gap.Problems != tinyConfig(t).Preset.EvalEpisodes || rec.GapBound != DefaultSimGateGapBound {
		t.Fatalf("gate record's gap %+v (bound %v): want the base on the preset's %d evaluation episodes, the default bound",
			rec.Gap, rec.GapBound, tinyConfig(t).Preset.EvalEpisodes)
	}
	judged := rec
	judged.judge()
	if rec.Pass != judged.Pass || strings.Join(rec.Failed, ",") != strings.Join(judged.Failed, ",") {
		t.Errorf("recorded pass %v failed %q; its own figures give %v %q", rec.Pass, rec.Failed, judged.Pass, judged.Failed)
	}
	for _, name := range []string{".human.episodes.jsonl", ".sim.episodes.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, gateGapFile+name)); err != nil {
			t.Errorf("the gap's conversations: %v", err)
		}
	}
	t.Logf("tiny seed 3: calibrated %s; naive %s; base gap %+.3f (sim %.3f, human %.3f)", rec.Sim, rec.Naive, rec.Gap.Gap, rec.Gap.SimScore, rec.Gap.HumanScore)
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "within the gate's bound"
	if !rec.Pass {
		want = "outside the gate's bound"
	}
	if !strings.Contains(string(report), "## Simulator fidelity before RL") || !strings.Contains(string(report), want) {
		t.Errorf("report lacks the gate's section saying %q", want)
	}
}

// In refuse mode a simulator outside the bound stops the run before any
// arm trains; the record is written all the same.
func TestSimGateRefusesBeforeRL(t *testing.T) {
	whole, _ := wholeRun(t)
	dir := t.TempDir()
	// The stages before the gate, from the whole run.
	for _, p := range []string{"manifest.json", "logs.jsonl", "tokenizer.json", "checkpoints/base", "checkpoints/sim",
		"stages/collect", "stages/tokenizer", "stages/base", "stages/sim"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-r", filepath.Join(whole, p), filepath.Join(dir, p)).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v %s", p, err, out)
		}
	}
	cfg := tinyConfig(t)
	cfg.Out = dir
	cfg.SimGate = SimGate{Mode: SimGateRefuse, Bound: 1e-9, Conversations: 8, Samples: 4}
	_, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrSimGate) {
		t.Fatalf("refuse mode with a bound no simulator meets: %v, want ErrSimGate", err)
	}
	if _, err := os.Stat(filepath.Join(dir, simGateFile+".json")); err != nil {
		t.Errorf("no gate record: %v", err)
	}
	// The tiny simulator misstates facts (the whole run's record): the
	// refusal says what mends that.
	if !strings.Contains(err.Error(), "--sim-copy") || !strings.Contains(err.Error(), "--sim-ledger") {
		t.Errorf("refusal %q: want the mends for misstated facts named", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "checkpoints"))
	for _, e := range entries {
		if e.Name() != "base" && e.Name() != "sim" {
			t.Errorf("checkpoints/%s: an arm trained past the gate", e.Name())
		}
	}
	cfg.SimGate.Mode = "strict"
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "sim gate") {
		t.Errorf("unknown gate mode: %v, want an error naming the sim gate", err)
	}
}

// Each check fails on its own figure alone: acts on the per-history
// excess, facts on the share of false stated facts (skipped where none
// were stated), the success gap on |gap| either way; a record without a
// gap (written before the gate measured one) is judged on the rest.
func TestSimGateJudge(t *testing.T) {
	acc := func(a float64) *fidelity.Facts { return &fidelity.Facts{Stated: 100, True: int(a * 100), Accuracy: &a} }
	gap := func(d float64) *SimToReal { return &SimToReal{Gap: d, Problems: 500} }
	for _, c := range []struct {
		name   string
		excess float64
		facts  *fidelity.Facts
		gap    *SimToReal
		want   string
	}{
		{"all within", 0.09, acc(0.95), gap(-0.04), ""},
		{"acts", 0.11, acc(0.95), gap(0.01), gateActs},
		{"facts", 0.05, acc(0.88), gap(0.01), gateFacts},
		{"no facts stated", 0.05, &fidelity.Facts{}, gap(0.01), ""},
		{"task without facts", 0.05, nil, gap(0.01), ""},
		{"gap below", 0.05, acc(0.99), gap(-0.176), gateGap},
		{"gap above", 0.05, acc(0.99), gap(+0.06), gateGap},
		{"old record", 0.05, acc(0.99), nil, ""},
		{"every one", 0.2, acc(0.5), gap(-0.3), gateActs + "," + gateFacts + "," + gateGap},
	} {
		rec := SimFidelity{Bound: DefaultSimGateBound, GapBound: DefaultSimGateGapBound, Gap: c.gap,
			Sim: fidelity.HistoryReport{Excess: c.excess, SimFacts: c.facts}}
		rec.judge()
		if got := strings.Join(rec.Failed, ","); got != c.want || rec.Pass != (c.want == "") {
			t.Errorf("%s: failed %q pass %v, want %q", c.name, got, rec.Pass, c.want)
		}
		if !rec.Pass {
			msg := rec.failures()
			for _, f := range rec.Failed {
				if want := map[string]string{gateActs: "excess", gateFacts: "stated facts false", gateGap: "success gap"}[f]; !strings.Contains(msg, want) {
					t.Errorf("%s: %q does not say %q", c.name, msg, want)
				}
			}
		}
	}
}

// --sim-copy reaches every place the run plays its simulator: they all
// load it through learnedSim, which copies as the task does (the tiny
// run's mathchat: numbers) exactly when the run says so.
func TestSimCopyLoadsACopyingSimulator(t *testing.T) {
	whole, _ := wholeRun(t)
	for _, c := range []struct {
		simCopy bool
		want    dialog.Copy
	}{{false, dialog.CopyOff}, {true, dialog.CopyNumbers}} {
		r := openTiny(t, func(cfg *Config) { cfg.SimCopy = c.simCopy })
		sim, err := r.learnedSim(filepath.Join(whole, "checkpoints", "sim"))
		if err != nil {
			t.Fatal(err)
		}
		if sim.Copy != c.want {
			t.Errorf("SimCopy %v: the simulator copies %v, want %v", c.simCopy, sim.Copy, c.want)
		}
	}
}

// The gate's hint names the mends a run turned off, each as its task
// copies, and none where the run has both or its task was measured
// farther with them (docedit).
func TestMisstatesHint(t *testing.T) {
	for _, c := range []struct {
		task      string
		copy      bool
		want, not []string
	}{
		{"mathchat:easy", false, []string{"--sim-copy", "numbers", "--sim-ledger"}, nil},
		{"mathchat:easy:userledger", true, nil, nil},
		{"support:easy", true, []string{"--sim-ledger"}, []string{"--sim-copy"}},
		{"support:easy:userledger", false, []string{"--sim-copy", "values"}, []string{"--sim-ledger"}},
		{"docedit:easy", false, nil, nil},
	} {
		tk, err := task.Lookup(c.task)
		if err != nil {
			t.Fatal(err)
		}
		r := &run{cfg: Config{Task: c.task, SimCopy: c.copy}, t: tk}
		got := r.misstatesHint()
		if (c.want == nil) != (got == "") {
			t.Errorf("%s copy %v: hint %q", c.task, c.copy, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s copy %v: hint %q does not name %q", c.task, c.copy, got, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%s copy %v: hint %q names %q, which the run has", c.task, c.copy, got, w)
			}
		}
	}
}

// A gap in BLEU points is judged on the measure's scale: the 0.05 bound
// is 5 points, so docedit's −9.67 fails and −4 passes (compared as
// success, every BLEU gap above 0.05 points failed); a record from before
// the scale was written is judged as success.
func TestSimGateGapScale(t *testing.T) {
	for _, c := range []struct {
		gap, scale float64
		pass       bool
	}{
		{-9.67, 100, false},
		{-4, 100, true},
		{+5.5, 100, false},
		{0.04, 1, true},
		{0.06, 0, false},
		{0.04, 0, true},
	} {
		rec := SimFidelity{Bound: DefaultSimGateBound, GapBound: DefaultSimGateGapBound, GapScale: c.scale,
			Gap: &SimToReal{Gap: c.gap, Problems: 300}}
		rec.judge()
		if rec.Pass != c.pass {
			t.Errorf("gap %v at scale %v: pass %v, want %v (failed %v)", c.gap, c.scale, rec.Pass, c.pass, rec.Failed)
		}
	}
	rec := SimFidelity{GapBound: 0.05, GapScale: 100, Measure: "BLEU", Gap: &SimToReal{Gap: -9.67}, Failed: []string{gateGap}}
	if msg := rec.failures(); !strings.Contains(msg, "BLEU gap -9.670") || !strings.Contains(msg, "> 5.000") {
		t.Errorf("failure %q: want the BLEU gap against 5 points", msg)
	}
}
