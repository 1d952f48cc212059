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

// Every field error names the file and the field.
func TestReadIsStrict(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, MetaFile)
	for body, want := range map[string]string{
		`{x`: "byte 2: malformed JSON",
		`{"role": "user", "task": "t", "oracle": true} trailing`:                 "malformed JSON",
		`{"role": "user", "task": "t", "oracle": 1}`:                             `field "oracle": want bool`,
		`{"role": "root", "task": "t", "oracle": true}`:                          `field "role"`,
		`{"task": "t", "oracle": true}`:                                          `field "role": missing`,
		`{"role": "user", "oracle": true}`:                                       `field "task": missing`,
		`{"role": "user", "task": "t", "oracle": false, "judged": true}`:         `field "judged"`,
		`{"role": "assistant", "task": "t", "oracle": true}`:                     `field "oracle"`,
		`{"role": "user", "task": "t", "oracle": true, "logs": -1}`:              `field "logs"`,
		`{"role": "user", "task": "t", "oracle": true, "sft": {"Steps": "two"}}`: "",
	} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(dir)
		if want == "" { // the players' part is whole; the rest is the trainer's to read
			if err != nil {
				t.Errorf("%s: %v", body, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s and %q", body, err, path, want)
		}
		if _, ok, err := ReadOptional(dir); ok || err == nil {
			t.Errorf("ReadOptional(%s) = %v, %v, want the same error", body, ok, err)
		}
	}
	os.Remove(path)
	if _, ok, err := ReadOptional(dir); ok || err != nil {
		t.Errorf("ReadOptional with no calibrl.json = %v, %v, want false and no error", ok, err)
	}
}
