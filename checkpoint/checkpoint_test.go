package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A calibrl.json as train-sim writes it, budget and result included: the
// players read their part and pass over the rest.
const simMeta = `{
  "role": "user",
  "task": "mathchat:easy",
  "oracle": true,
  "judged": true,
  "seed": 3,
  "logs": 48,
  "sft": {"Steps": 12, "BatchSize": 8, "LR": 0.003},
  "result": {"steps": 12, "val_nll": 2.5},
  "model": {"VocabSize": 320, "Context": 256}
}
`

func TestReadTakesWhatTheCheckpointIs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte(simMeta), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Meta{Role: RoleSimulator, Task: "mathchat:easy", Oracle: true, Judged: true, Seed: 3, Logs: 48}
	if m != want {
		t.Errorf("Read = %+v, want %+v", m, want)
	}
	// A record that holds a Meta reads the rest of the file too.
	var full struct {
		Meta
		Result struct {
			Steps int `json:"steps"`
		} `json:"result"`
	}
	if err := ReadInto(dir, &full); err != nil || full.Meta != want || full.Result.Steps != 12 {
		t.Errorf("ReadInto = %+v, %v", full, err)
	}
}

func TestReadSaysWhichCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), dir) {
		t.Errorf("no calibrl.json: %v, want a not-exist error naming %s", err, dir)
	}
	if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), MetaFile) {
		t.Errorf("a torn calibrl.json: %v, want an error naming the file", err)
	}
}
