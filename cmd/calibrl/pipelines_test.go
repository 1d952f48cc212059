package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/reproduce"
)

// --pipelines takes at least two distinct seeds, names a bad one, and
// bounds the count.
func TestSeedList(t *testing.T) {
	var s seedList
	if err := s.Set("1, 2,3"); err != nil || !slices.Equal(s, seedList{1, 2, 3}) || s.String() != "1,2,3" {
		t.Errorf("1, 2,3: %v %v", s, err)
	}
	many := strings.Repeat("1,", maxPipelines) + "0"
	for in, want := range map[string]string{
		"1":      "at least 2",
		"1,x":    `"x" is not a seed`,
		"1,-2":   `"-2" is not a seed`,
		"3,3":    "seed 3 given twice",
		many:     "given twice",
		"":       "is not a seed",
		"1,2,,3": `"" is not a seed`,
	} {
		if err := s.Set(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", in, err, want)
		}
	}
	var big []string
	for i := range maxPipelines + 1 {
		big = append(big, strconv.Itoa(i))
	}
	if err := s.Set(strings.Join(big, ",")); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("%d seeds: %v", len(big), err)
	}
}

// eval --slice validation plays the validation slice's problems (from
// 20000) with users seeded apart; the default plays the first ones; a
// slice of the train split is refused.
func TestEvalSlice(t *testing.T) {
	dir := t.TempDir()
	read := func(file string) []dialog.Episode {
		eps, err := dialog.LoadEpisodes(file)
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}
	for _, c := range []struct {
		slice string
		first int
	}{{"test", 0}, {"validation", eval.ValidationSlice.Start}} {
		file := filepath.Join(dir, c.slice+".jsonl")
		if _, err := run(t, "eval", "--task", "mathchat:easy", "-n", "3", "--slice", c.slice, "--episodes-out", file); err != nil {
			t.Fatal(err)
		}
		eps := read(file)
		if len(eps) != 3 || eps[0].Index != c.first || eps[2].Index != c.first+2 {
			t.Errorf("--slice %s played %d episodes from %d", c.slice, len(eps), eps[0].Index)
		}
	}
	if _, err := run(t, "eval", "--task", "mathchat:easy", "-n", "3", "--slice", "validation", "--split", "train"); err == nil || !strings.Contains(err.Error(), "has no slices") {
		t.Errorf("--slice validation --split train: %v", err)
	}
	if _, err := run(t, "eval", "--task", "mathchat:easy", "-n", "3", "--slice", "dev"); err == nil || !strings.Contains(err.Error(), "unknown slice") {
		t.Errorf("--slice dev: %v", err)
	}
}

// eval says why conversations failed, for a task that classifies them:
// the guesser never asks.
func TestEvalPrintsFailureClasses(t *testing.T) {
	out := mustRun(t, "eval", "--task", "mathchat", "--agent", "scripted:guesser", "-n", "30", "--json")
	var s eval.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	failed := s.Episodes - int(s.Success*float64(s.Episodes)+0.5)
	if failed == 0 || s.Failures["never asks"] != failed {
		t.Errorf("%d failed, classes %v: the guesser's failures are all \"never asks\"", failed, s.Failures)
	}
	if text := mustRun(t, "eval", "--task", "mathchat", "--agent", "scripted:guesser", "-n", "30"); !strings.Contains(text, "why failed  never asks") {
		t.Errorf("the table has no failure line:\n%s", text)
	}
}

// eval --samples plays each problem several times and reports pass@k:
// pass@1 is the success rate, and pass@k never falls as k grows.
func TestEvalPassAtK(t *testing.T) {
	out := mustRun(t, "eval", "--task", "mathchat", "--agent", "scripted:guesser", "-n", "20", "--samples", "3", "--json")
	var s eval.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.Episodes != 60 || len(s.PassAtK) != 3 {
		t.Fatalf("%d episodes, pass@k %v", s.Episodes, s.PassAtK)
	}
	if d := s.PassAtK[1] - s.Success; d > 1e-9 || d < -1e-9 {
		t.Errorf("pass@1 %v, success %v", s.PassAtK[1], s.Success)
	}
	if !(s.PassAtK[1] <= s.PassAtK[2] && s.PassAtK[2] <= s.PassAtK[3]) {
		t.Errorf("pass@k falls with k: %v", s.PassAtK)
	}
	if _, err := run(t, "eval", "--task", "mathchat", "-n", "2", "--samples", "0"); err == nil || !strings.Contains(err.Error(), "--samples 0") {
		t.Errorf("--samples 0: %v", err)
	}
}

// --sim-copy and --sim-ledger read as bool flags (alone: true) and as
// auto, their default, which leaves the choice to the task: on for
// mathchat and support, off for docedit; a set flag overrides it.
func TestSimMendFlags(t *testing.T) {
	for _, c := range []struct {
		task       string
		args       []string
		copy, ledg bool
	}{
		{"mathchat", nil, true, true},
		{"support:easy", nil, true, true},
		{"docedit:easy", nil, false, false},
		{"mathchat", []string{"--sim-copy=false"}, false, true},
		{"mathchat", []string{"--sim-ledger=false", "--sim-copy=false"}, false, false},
		{"docedit:easy", []string{"--sim-copy"}, true, false},
		{"docedit:easy", []string{"--sim-ledger=true", "--sim-copy=auto"}, false, true},
	} {
		var simCopy, simLedger autoSwitch
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		addSimMendFlags(fs, &simCopy, &simLedger)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		cfg := reproduce.Config{Task: c.task}
		setSimMends(&cfg, simCopy, simLedger)
		if cfg.SimCopy != c.copy || cfg.SimLedger != c.ledg {
			t.Errorf("%s %v: copy %v ledger %v, want %v %v", c.task, c.args, cfg.SimCopy, cfg.SimLedger, c.copy, c.ledg)
		}
	}
	var s autoSwitch
	if err := s.Set("maybe"); err == nil || !strings.Contains(err.Error(), "true, false or auto") {
		t.Errorf("Set(maybe): %v, want the values named", err)
	}
	if s.String() != "auto" {
		t.Errorf("zero switch prints %q, want auto", s.String())
	}
}
