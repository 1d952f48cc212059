package dialog

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// FieldError names the field of a logged episode that is wrong, as
// "messages[3].role"; readers add the file and line.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %q: %v", e.Field, e.Err) }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, a...)}
}

// EndReasons are the values of an episode's "end".
var EndReasons = []EndReason{Solved, GaveUp, UserEnded, MaxTurns}

// requiredFields must be present (not null) in every logged episode: what
// the trainers and exports read. A log that lacks one is of another kind,
// or torn.
var requiredFields = []string{"id", "task", "split", "agent", "user", "seed", "index", "oracle", "view", "messages", "end", "turns"}

// requiredOracle must be present in the oracle context: the goal and the
// ground truth a simulator is conditioned on and exports carry.
var requiredOracle = []string{"task", "id", "split", "instruction", "truth"}

// Check reports the first field of a logged episode that is wrong: one
// missing or empty that calibrl writes for every episode, an unknown role
// or end, a count that disagrees with the messages, a persona out of range.
// Every reader of episode logs checks it (ReadEpisodes, EpisodeReader), so
// a torn or foreign record never reaches a trainer or an export.
func (ep *Episode) Check() error {
	switch {
	case strings.TrimSpace(ep.ID) == "":
		return fieldErr("id", "empty")
	case strings.TrimSpace(ep.Task) == "":
		return fieldErr("task", "empty")
	case strings.TrimSpace(ep.Agent) == "":
		return fieldErr("agent", "empty")
	case strings.TrimSpace(ep.User) == "":
		return fieldErr("user", "empty")
	case ep.Index < 0:
		return fieldErr("index", "%d is negative", ep.Index)
	case ep.Sample < 0:
		return fieldErr("sample", "%d is negative", ep.Sample)
	}
	if _, err := SplitStream(ep.Split); err != nil {
		return fieldErr("split", "%q, want train or test", ep.Split)
	}
	o := &ep.Oracle
	switch {
	case strings.TrimSpace(o.Instruction) == "":
		return fieldErr("oracle.instruction", "empty: the episode has no goal")
	case strings.TrimSpace(o.Truth) == "":
		return fieldErr("oracle.truth", "empty: the episode has no ground truth")
	case o.Split != ep.Split:
		return fieldErr("oracle.split", "%q, but the episode's split is %q", o.Split, ep.Split)
	}
	for i, f := range o.Facts {
		if strings.TrimSpace(f.Text) == "" {
			return fieldErr(fmt.Sprintf("oracle.facts[%d].text", i), "empty")
		}
	}
	p := o.Persona
	for _, c := range []struct {
		name string
		v    float64
	}{{"verbosity", p.Verbosity}, {"typo_rate", p.TypoRate}, {"clarity", p.Clarity}} {
		if !(c.v >= 0 && c.v <= 1) {
			return fieldErr("oracle.persona."+c.name, "%g not in [0,1]", c.v)
		}
	}
	switch {
	case p.Patience < 0:
		return fieldErr("oracle.persona.patience", "%d is negative", p.Patience)
	case !(p.Threshold >= 0 && p.Threshold <= 100):
		return fieldErr("oracle.persona.threshold", "%g not in [0,100]", p.Threshold)
	}
	ok := false
	for _, e := range EndReasons {
		ok = ok || ep.End == e
	}
	if !ok {
		return fieldErr("end", "%q, want one of %v", ep.End, EndReasons)
	}
	if len(ep.Messages) == 0 {
		return fieldErr("messages", "empty")
	}
	turns := 0
	for i, m := range ep.Messages {
		switch m.Role {
		case RoleAssistant:
			turns++
		case RoleUser, RoleSystem:
		default:
			return fieldErr(fmt.Sprintf("messages[%d].role", i), "%q, want user, assistant or system", m.Role)
		}
		if m.Tokens < 0 {
			return fieldErr(fmt.Sprintf("messages[%d].tokens", i), "%d is negative", m.Tokens)
		}
	}
	switch {
	case ep.Messages[0].Role != RoleUser:
		return fieldErr("messages[0].role", "%q: a conversation starts with the user's opening", ep.Messages[0].Role)
	case ep.Turns != turns:
		return fieldErr("turns", "%d, but the messages hold %d assistant turns", ep.Turns, turns)
	case ep.MaxTurns < 0:
		return fieldErr("max_turns", "%d is negative", ep.MaxTurns)
	case ep.MaxTurns > 0 && ep.Turns > ep.MaxTurns:
		return fieldErr("turns", "%d, over the episode's max_turns %d", ep.Turns, ep.MaxTurns)
	case ep.Tokens < 0:
		return fieldErr("tokens", "%d is negative", ep.Tokens)
	case math.IsNaN(ep.Reward) || math.IsInf(ep.Reward, 0):
		return fieldErr("reward", "%g is not a number", ep.Reward)
	}
	return nil
}

// checkPresent reports the first required field a record's JSON object
// lacks (or holds null): a missing field would otherwise read as its zero
// value, indistinguishable from one written empty.
func checkPresent(line []byte) error {
	var raw struct {
		Fields map[string]json.RawMessage
		Oracle map[string]json.RawMessage
	}
	if err := json.Unmarshal(line, &raw.Fields); err != nil {
		return err
	}
	for _, f := range requiredFields {
		if v, ok := raw.Fields[f]; !ok || string(v) == "null" {
			return &FieldError{Field: f, Err: errMissing}
		}
	}
	if err := json.Unmarshal(raw.Fields["oracle"], &raw.Oracle); err != nil {
		return fieldErr("oracle", "want an object: %v", err)
	}
	for _, f := range requiredOracle {
		if v, ok := raw.Oracle[f]; !ok || string(v) == "null" {
			return &FieldError{Field: "oracle." + f, Err: errMissing}
		}
	}
	return nil
}

var errMissing = fmt.Errorf("missing")
