package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
