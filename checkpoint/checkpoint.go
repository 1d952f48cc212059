// Package checkpoint reads what a calibrl chat checkpoint says it was
// trained to do: calibrl.json beside its weights, written by package sft
// when a fit ends. The packages that play a checkpoint (spec, serve) read
// its role and conditioning here, without depending on the trainer that
// wrote it; sft.Meta is the same file with the fit's budget and result.
package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
	Judged bool `json:"judged,omitempty"`
	// UserNotes: the simulator was shown the task's notes after agent
	// turns (chatlm.UserNotesOf: mathchat's user ledger, the task option
	// "userledger"); it must be played on a task that shows them, and a
	// simulator fitted without them on one that does not.
	UserNotes bool   `json:"user_notes,omitempty"`
	Seed      uint64 `json:"seed"`
	Logs      int    `json:"logs"` // episodes trained on
	// From is the checkpoint a warm-started fit began from.
	From string `json:"from,omitempty"`
}

// ReadInto reads dir's calibrl.json into v: a *Meta, or a record that
// holds one (sft.Meta). It is strict, as every reader of a checkpoint
// must be: a torn or malformed file, a field of the wrong type, or a Meta
// field missing or out of range is an error naming the file and the
// field, never a checkpoint played without what it was trained with.
func ReadInto(dir string, v any) error {
	path := filepath.Join(dir, MetaFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if err := decode(data, v); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	var m Meta
	if err := decode(data, &m); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(data, &raw) // decoded above, so it is an object
	if err := m.check(raw); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return nil
}

// decode reads one JSON object, naming the byte of a syntax error and the
// field of a type error.
func decode(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return fmt.Errorf("byte %d: malformed JSON: %w", se.Offset, err)
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf("field %q: want %s, got JSON %s", te.Field, te.Type, te.Value)
	}
	return err
}

// check reports the first field of m that is missing or wrong; raw is the
// file's object, for presence.
func (m *Meta) check(raw map[string]json.RawMessage) error {
	for _, f := range []string{"role", "task", "oracle"} {
		if v, ok := raw[f]; !ok || string(v) == "null" {
			return fmt.Errorf("field %q: missing", f)
		}
	}
	switch {
	case m.Role != RolePolicy && m.Role != RoleSimulator:
		return fmt.Errorf("field \"role\": %q, want %q (a policy) or %q (a user simulator)", m.Role, RolePolicy, RoleSimulator)
	case m.Role == RolePolicy && (m.Oracle || m.Judged || m.UserNotes):
		return errors.New(`field "oracle": a policy is never conditioned on the oracle context`)
	case m.Judged && !m.Oracle:
		return errors.New(`field "judged": a simulator shown the task's check is conditioned on the oracle context ("oracle": true)`)
	case m.UserNotes && !m.Oracle:
		return errors.New(`field "user_notes": a simulator shown the task's notes is conditioned on the oracle context ("oracle": true)`)
	case m.Logs < 0:
		return fmt.Errorf("field \"logs\": %d is negative", m.Logs)
	}
	return nil
}

// Read reads what the checkpoint in dir was trained to do (ReadInto).
func Read(dir string) (Meta, error) {
	var m Meta
	err := ReadInto(dir, &m)
	return m, err
}

// SFTResultFile is what a finished supervised fit writes beside its
// model (train.SFT), with calibrl.json. Its presence tells a fit's folder
// from the legacy layouts that have no calibrl.json.
const SFTResultFile = "sft_result.json"

// rlResultFiles are what a finished RL run writes beside its final model
// (train.GRPO, train.Static): a policy, for which RL writes no
// calibrl.json.
var rlResultFiles = []string{"grpo_result.json", "static_result.json"}

// ErrNoMeta is ReadOptional's error for a fit's folder without its
// calibrl.json.
var ErrNoMeta = errors.New("no " + MetaFile + ", yet the folder holds a supervised fit (" + SFTResultFile + "), which writes one: without it the checkpoint's role and conditioning are unknown (a simulator would play as a policy); restore it or fit again")

// ReadOptional is Read for a folder that may be one of the two documented
// layouts without calibrl.json (docs/commands.md): an RL run's final
// model, a policy (grpo_result.json or static_result.json beside it:
// role is RolePolicy), or a bare model folder written before calibrl.json
// existed (no trainer result at all: role is "", either role plays it).
// ok is false, with no error, only for those. A folder that a supervised
// fit wrote (sft_result.json) without its calibrl.json is refused
// (ErrNoMeta), as is anything else wrong with the file (Read's error).
func ReadOptional(dir string) (m Meta, ok bool, err error) {
	m, err = Read(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		return m, err == nil, err
	}
	if _, serr := os.Stat(filepath.Join(dir, SFTResultFile)); serr == nil {
		return Meta{}, false, fmt.Errorf("checkpoint %s: %w", dir, ErrNoMeta)
	}
	for _, name := range rlResultFiles {
		if _, serr := os.Stat(filepath.Join(dir, name)); serr == nil {
			return Meta{Role: RolePolicy}, false, nil
		}
	}
	return Meta{}, false, nil
}
