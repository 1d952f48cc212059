// Package checkpoint reads what a calibrl chat checkpoint says it was
// trained to do: calibrl.json beside its weights, written by package sft
// when a fit ends. The packages that play a checkpoint (spec, serve) read
// its role and conditioning here, without depending on the trainer that
// wrote it; sft.Meta is the same file with the fit's budget and result.
package checkpoint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// MetaFile describes a calibrl chat checkpoint beside its weights.
const MetaFile = "calibrl.json"

// The roles a checkpoint plays (Meta.Role): the chat role of the turns it
// writes.
const (
	RolePolicy    = "assistant"
	RoleSimulator = "user"
)

// Meta says what a checkpoint was trained to do.
type Meta struct {
	// Role is RolePolicy or RoleSimulator.
	Role string `json:"role"`
	Task string `json:"task"`
	// Oracle: a simulator conditioned on the oracle context. false is the
	// no-oracle-context ablation.
	Oracle bool `json:"oracle"`
	// Judged: the simulator was shown the task's verdict on every
	// delivered outcome (chatlm.Judge); it must be shown it when it plays.
	Judged bool   `json:"judged,omitempty"`
	Seed   uint64 `json:"seed"`
	Logs   int    `json:"logs"` // episodes trained on
	// From is the checkpoint a warm-started fit began from.
	From string `json:"from,omitempty"`
}

// ReadInto reads dir's calibrl.json into v: a *Meta, or a record that
// holds one (sft.Meta).
func ReadInto(dir string, v any) error {
	data, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("checkpoint %s: %s: %w", dir, MetaFile, err)
	}
	return nil
}

// Read reads what the checkpoint in dir was trained to do.
func Read(dir string) (Meta, error) {
	var m Meta
	err := ReadInto(dir, &m)
	return m, err
}
