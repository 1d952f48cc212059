package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
)

func TestDataFlag(t *testing.T) {
	gsm, _ := filepath.Abs("../../task/testdata/gsm8k")
	var s map[string]any
	out := mustRun(t, "eval", "--task", "mathchat", "--data", gsm, "--agent", "scripted:careful", "-n", "3", "--json")
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	sum, err := task.DataHash("mathchat", gsm)
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := s["task"].(string); name != "mathchat:data=sha256:"+sum {
		t.Fatalf("eval records task %q", name)
	}
	// Collected logs carry the data; train-sim and the rest rebuild from it.
	logs := filepath.Join(t.TempDir(), "logs.jsonl")
	mustRun(t, "collect", "--task", "docedit:easy", "--data", "../../task/testdata/corpus", "-n", "4", "--out", logs)
	eps, err := dialog.LoadEpisodes(logs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(eps[0].Task, "docedit:easy:data=") || eps[0].Oracle.Family != "corpus" {
		t.Fatalf("collected episode task %q family %q", eps[0].Task, eps[0].Oracle.Family)
	}
	if _, err := run(t, "eval", "--task", "mathchat:"+gsm, "-n", "1"); err == nil || !strings.Contains(err.Error(), "--data") {
		t.Fatalf("a path as the level: %v", err)
	}
	if _, err := run(t, "eval", "--task", "mathchat", "--data", t.TempDir(), "-n", "1"); err == nil || !strings.Contains(err.Error(), "train.jsonl") {
		t.Fatalf("an empty folder: %v", err)
	}
	// A server reads no data a client names, only the data --data allows.
	tasks, _ := servedTasks("")
	if _, err := tasks("mathchat:data=" + gsm); err == nil || !strings.Contains(err.Error(), "serves no data") {
		t.Fatalf("serve without --data: %v", err)
	}
	tasks, _ = servedTasks("../../task/testdata/gsm8k")
	if _, err := tasks("mathchat:easy:data=sha256:" + sum); err != nil {
		t.Fatalf("serve --data: %v", err)
	}
	if _, err := tasks("mathchat:easy:data=" + gsm); err == nil || !strings.Contains(err.Error(), "by its content") {
		t.Fatalf("serve --data, data named by a path: %v", err)
	}
	if _, err := tasks("docedit:data=/etc"); err == nil {
		t.Fatal("serve --data served another folder")
	}
}

func TestConvertLogs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "human.jsonl")
	args := []string{"convert-logs", "--in", "../../humanlog/testdata/chat.jsonl", "--out", out, "--task", "mathchat",
		"--id", "conv_id", "--instruction", "question", "--ground-truth", "answer", "--hidden-facts", "hidden", "--end", "solved"}
	if got := mustRun(t, args...); !strings.Contains(got, "2 conversations") {
		t.Fatalf("convert-logs: %s", got)
	}
	eps, err := loadTaskLogs(context.Background(), out, "mathchat")
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 2 || !eps[0].Success || eps[0].Outcome != "7" || eps[0].View.Instructions == "" {
		t.Fatalf("human logs as episodes: %+v", eps[0])
	}
	if _, err := loadTaskLogs(context.Background(), out, "docedit"); err == nil || !strings.Contains(err.Error(), "not docedit") {
		t.Fatalf("logs of another task: %v", err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"conv_id":"x","question":"q","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`+"\n"), 0o644)
	args[2], args[4] = bad, filepath.Join(dir, "bad-out.jsonl")
	if _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), `bad.jsonl:1: field "answer": missing`) {
		t.Fatalf("incomplete record: %v", err)
	}
	if _, err := os.Stat(args[4]); !os.IsNotExist(err) {
		t.Fatal("a refused conversion left a file")
	}
}

// Own data is named by its content: a dataset exported from the data at
// one path holds no path, and a server holding a copy of the same bytes at
// another path accepts its rows.
func TestExportedDataIsPortable(t *testing.T) {
	copyData := func(dir string) string {
		for _, f := range []string{"train.jsonl", "test.jsonl"} {
			b, err := os.ReadFile(filepath.Join("../../task/testdata/gsm8k", f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	hostA := copyData(filepath.Join(t.TempDir(), "host-a", "gsm8k"))
	hostB := copyData(filepath.Join(t.TempDir(), "elsewhere", "copy"))
	out := t.TempDir()
	logs := filepath.Join(out, "logs.jsonl")
	mustRun(t, "collect", "--task", "mathchat:easy", "--data", hostA, "-n", "3", "--out", logs)
	tasks, err := servedTasks(hostB)
	if err != nil {
		t.Fatal(err)
	}
	taskField := regexp.MustCompile(`"task":\s*"([^"]+)"`)
	for _, kind := range []string{"sim", "policy", "rollouts", "prompts"} {
		file := filepath.Join(out, kind+".jsonl")
		mustRun(t, "export", "--logs", logs, "--kind", kind, "--format", "chat-jsonl", "--out", file)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), hostA) || strings.Contains(string(b), "host-a") {
			t.Errorf("export --kind %s: the data's path %s is in the dataset", kind, hostA)
		}
		if kind != "prompts" {
			continue
		}
		names := taskField.FindAllStringSubmatch(string(b), -1)
		if len(names) == 0 {
			t.Fatalf("export --kind prompts: no task in %s", b)
		}
		for _, m := range names {
			if _, err := tasks(m[1]); err != nil {
				t.Errorf("a server holding the data at another path refuses the row's task: %v", err)
			}
		}
	}
	b, _ := os.ReadFile(logs)
	if strings.Contains(string(b), hostA) {
		t.Errorf("the episode log holds the data's path %s", hostA)
	}
}

// eval -n larger than a data file's split is refused before anything is
// played, naming both numbers; -n that fits plays.
func TestEvalRefusesMoreProblemsThanTheDataHolds(t *testing.T) {
	gsm, _ := filepath.Abs("../../task/testdata/gsm8k")
	out := filepath.Join(t.TempDir(), "eps.jsonl")
	_, err := run(t, "eval", "--task", "mathchat", "--data", gsm, "--agent", "scripted:careful", "-n", "30", "--episodes-out", out)
	if err == nil || !strings.Contains(err.Error(), "-n 30") || !strings.Contains(err.Error(), "holds 3 problems") {
		t.Fatalf("eval -n 30 on 3 test problems: got %v, want a refusal naming 30 and 3", err)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Fatalf("the refused run wrote %s (%v): it played before refusing", out, serr)
	}
	mustRun(t, "eval", "--task", "mathchat", "--data", gsm, "--agent", "scripted:careful", "-n", "3", "--json")
	if _, err := run(t, "eval", "--task", "mathchat", "--data", gsm, "-n", "1", "--slice", "validation"); err == nil || !strings.Contains(err.Error(), "from problem 20000") {
		t.Fatalf("eval --slice validation on 3 test problems: got %v, want a refusal naming the slice's start", err)
	}
}

// fidelity on data of finite size refuses a slice past its problems as
// eval does, naming the slice's first problem and what the split holds.
func TestFidelityRefusesASlicePastTheData(t *testing.T) {
	gsm, _ := filepath.Abs("../../task/testdata/gsm8k")
	_, err := run(t, "fidelity", "--task", "mathchat", "--data", gsm, "--agents", "scripted:careful", "--histories", "0",
		"--slice", "validation", "-n", "2")
	if err == nil || !strings.Contains(err.Error(), "from problem 20000") || !strings.Contains(err.Error(), "holds 3 problems") {
		t.Fatalf("fidelity --slice validation on 3 test problems: got %v, want a refusal naming problem 20000 and 3", err)
	}
}
