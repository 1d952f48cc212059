package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/chatlm/chatlmtest"
	"github.com/calibrl/calibrl/task"
)

// fidelity --logs on procedural held-out logs the human proxy wrote: every
// figure is reported, and the human proxy (the logs' author, replayed
// under other random draws) agrees with the logged people better than
// the naive simulator.
func TestFidelityAgainstLogs(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "held-out.jsonl")
	mustRun(t, "collect", "--task", "mathchat:easy", "--agent", "scripted:careful,sloppy,guesser,answer-seeker", "--split", "test", "-n", "40", "--max-turns", "6", "--out", logs)
	out := mustRun(t, "fidelity", "--task", "mathchat:easy", "--sim", "human,naive", "--logs", logs, "--json", "--out", filepath.Join(dir, "fid"))
	dec := json.NewDecoder(strings.NewReader(out))
	agree := map[string]float64{}
	for _, want := range []string{"human", "naive"} {
		var row map[string]any
		if err := dec.Decode(&row); err != nil {
			t.Fatalf("fidelity --logs --json: %v\n%s", err, out)
		}
		if row["sim"] != want || row["conversations"] != 40.0 {
			t.Fatalf("row %v: want sim %s over 40 conversations", row, want)
		}
		for _, k := range []string{"act_agreement", "act_agreement_by_turn", "delta", "delta_mean", "termination", "leakage", "person_leakage"} {
			if _, ok := row[k]; !ok {
				t.Errorf("%s: fidelity --logs --json lacks %q", want, k)
			}
		}
		if _, ok := row["nll"]; ok {
			t.Errorf("%s is no model simulator, yet has an NLL", want)
		}
		agree[want] = row["act_agreement"].(float64)
	}
	if agree["human"] <= agree["naive"] {
		t.Errorf("act agreement: human proxy %.3f, naive %.3f; want the logs' author to agree better", agree["human"], agree["naive"])
	}
	if _, err := os.Stat(filepath.Join(dir, "fid", "fidelity-logs.json")); err != nil {
		t.Error("--out wrote no fidelity-logs.json")
	}
	table := mustRun(t, "fidelity", "--task", "mathchat:easy", "--sim", "naive", "--logs", logs)
	for _, want := range []string{"act agree", "end P", "leak (people)", "agree / δ_t", "40 held-out conversations"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}

	// Logs without a held-out conversation say so, and how to get some.
	train := filepath.Join(dir, "train.jsonl")
	mustRun(t, "collect", "--task", "mathchat:easy", "-n", "3", "--out", train)
	if _, err := run(t, "fidelity", "--task", "mathchat:easy", "--logs", train); err == nil || !strings.Contains(err.Error(), "no held-out (split test)") {
		t.Errorf("train-only logs: got %v, want an error naming the missing split", err)
	}
}

// Human logs in the calibrl.humanlog/v1 schema go through the same path.
func TestFidelityAgainstConvertedHumanLogs(t *testing.T) {
	dir := t.TempDir()
	hl := filepath.Join(dir, "hl.jsonl")
	mustRun(t, "convert-logs", "--in", filepath.Join("..", "..", "humanlog", "testdata", "chat.jsonl"), "--out", hl, "--task", "mathchat",
		"--id", "conv_id", "--instruction", "question", "--ground-truth", "answer", "--hidden-facts", "hidden", "--end", "solved", "--test-percent", "100")
	out := mustRun(t, "fidelity", "--sim", "naive", "--logs", hl, "--json")
	var row map[string]any
	if err := json.Unmarshal([]byte(out), &row); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// chat.jsonl: two conversations with 3 and 2 user turns.
	if row["conversations"] != 2.0 || row["user_turns"] != 5.0 {
		t.Errorf("got %v conversations and %v user turns, want 2 and 5", row["conversations"], row["user_turns"])
	}
}

// --agents takes any agent spec: a bare profile, scripted:PROFILE, and a
// trained policy (lm:DIR), which gets the task's calculator as eval gives
// it; each gets its own sim-to-real gap.
func TestFidelityAgentsTakeAnySpec(t *testing.T) {
	m := chatlmtest.TinyModel(t, chatlmtest.AddEpisodes(8, 3))
	dir := filepath.Join(t.TempDir(), "policy")
	if err := m.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	tk, err := task.Lookup("mathchat:easy")
	if err != nil {
		t.Fatal(err)
	}
	a, err := fidelityAgent(tk, "lm:"+dir, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	la, ok := a.(*chatlm.Agent)
	if !ok || la.Tool == nil || la.Gen.Temperature != 0.7 {
		t.Fatalf("lm agent %T: want a *chatlm.Agent with the task's tool and temperature 0.7", a)
	}
	if a, _ := fidelityAgent(tk, "lm:"+dir, -1); a.(*chatlm.Agent).Gen.Temperature != 0 {
		t.Error("without --temperature an lm agent plays greedy, as eval does")
	}
	if _, err := fidelityAgent(tk, "nosuch:x", -1); err == nil || !strings.Contains(err.Error(), "--agents") {
		t.Errorf("unknown agent: got %v, want an error naming --agents", err)
	}

	out := mustRun(t, "fidelity", "--task", "mathchat:easy", "--sim", "naive", "--agents", "careful,scripted:guesser,lm:"+dir,
		"-n", "3", "--max-turns", "2", "--turns", "2", "--json", "--temperature", "1")
	var rep struct {
		Agents map[string]map[string]float64 `json:"agents"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, k := range []string{"careful", "scripted:guesser", "lm:" + dir} {
		g, ok := rep.Agents[k]
		if !ok {
			t.Errorf("no sim-to-real gap for agent %s (agents %v)", k, rep.Agents)
			continue
		}
		if g["gap"] != g["sim"]-g["human"] {
			t.Errorf("%s: gap %v, want sim − human = %v", k, g["gap"], g["sim"]-g["human"])
		}
	}
	if len(rep.Agents) != 3 {
		t.Errorf("%d agents, want the 3 named", len(rep.Agents))
	}
	table := mustRun(t, "fidelity", "--task", "mathchat:easy", "--sim", "naive", "--agents", "careful,lm:"+dir, "-n", "2", "--max-turns", "2")
	if !strings.Contains(table, "scripted:careful") || !strings.Contains(table, "lm:"+dir) || strings.Contains(table, "scripted:lm:") {
		t.Errorf("table names the agents wrongly:\n%s", table)
	}
}
