// Package humanlog reads and writes your own human conversation logs: one
// conversation a line, with the oracle context the person held, so that a
// simulator can be fitted to them (train-sim), a policy cloned from them
// (train-policy --algo sft) and a simulator measured against them
// (fidelity --logs).
//
// Schema calibrl.humanlog/v1 (docs/HUMANLOGS.md has the full text), one
// JSON object a line, unknown fields refused:
//
//	schema        "calibrl.humanlog/v1"                       required
//	id            conversation id, unique in the file          required
//	task          task name: "mathchat", "docedit:easy", …     required
//	split         "train" or "test" (held out)                 required
//	instruction   the user's whole goal in words               required
//	ground_truth  the answer (mathchat) or target document     required
//	draft         the document the agent starts from           required for docedit
//	opening       what the user opened with, if not message 1  optional
//	hidden_facts  [{"text", "value"?}]: facts the user held
//	              back until asked                             optional (mathchat)
//	persona       {"patience","verbosity","typo_rate",
//	              "clarity","threshold"?}                      optional
//	end           "solved", "gave_up", "user_ended" (the person
//	              ended) or "max_turns" (the session was cut)  required
//	agent         who played the agent                         optional ("logged")
//	messages      [{"role": "user"|"assistant"|"system",
//	              "content"}], starting with the user's turn   required
//
// A malformed or incomplete record is refused with its file, line and
// field ("logs.jsonl:7: field \"ground_truth\": missing"); nothing is
// filled with an empty value.
package humanlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/infile"
	"github.com/calibrl/calibrl/task"
)

// Schema is the version every record names.
const Schema = "calibrl.humanlog/v1"

// DefaultAgent names the agent of a record without one.
const DefaultAgent = "logged"

// Fact is a hidden fact: something the person knew and gave only when
// asked.
type Fact struct {
	Text  string `json:"text"`
	Value string `json:"value,omitempty"`
}

// Persona is the person's character, when the logs know it.
type Persona struct {
	Patience  *int     `json:"patience"`
	Verbosity *float64 `json:"verbosity"`
	TypoRate  *float64 `json:"typo_rate"`
	Clarity   *float64 `json:"clarity"`
	Threshold float64  `json:"threshold,omitempty"`
}

// Message is one turn.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Record is one logged conversation.
type Record struct {
	Schema      string    `json:"schema"`
	ID          string    `json:"id"`
	Task        string    `json:"task"`
	Split       string    `json:"split"`
	Instruction string    `json:"instruction"`
	GroundTruth string    `json:"ground_truth"`
	Draft       string    `json:"draft,omitempty"`
	Opening     string    `json:"opening,omitempty"`
	HiddenFacts []Fact    `json:"hidden_facts,omitempty"`
	Persona     *Persona  `json:"persona,omitempty"`
	End         string    `json:"end"`
	Agent       string    `json:"agent,omitempty"`
	Messages    []Message `json:"messages"`
}

// FieldError names the field of a record that is wrong: the one kind of
// field error calibrl's own episode logs use too (dialog.FieldError).
type FieldError = dialog.FieldError

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, a...)}
}

var errMissing = errors.New("missing")

// Parse reads one record and checks it (Check).
func Parse(line []byte) (Record, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return Record{}, fmt.Errorf("not a JSON object: %w", err)
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Record{}, fieldErr(te.Field, "want %s, got JSON %s", te.Type, te.Value)
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return Record{}, fieldErr(strings.Trim(f, `"`), "unknown field (schema %s)", Schema)
		}
		return Record{}, err
	}
	if dec.More() {
		return Record{}, errors.New("more than one JSON value on the line")
	}
	for _, f := range []string{"schema", "id", "task", "split", "instruction", "ground_truth", "end", "messages"} {
		if v, ok := raw[f]; !ok || string(v) == "null" {
			return Record{}, &FieldError{Field: f, Err: errMissing}
		}
	}
	return r, r.Check()
}

// Ends are the values of "end".
var Ends = []dialog.EndReason{dialog.Solved, dialog.GaveUp, dialog.UserEnded, dialog.MaxTurns}

// Check reports the first field that is wrong.
func (r *Record) Check() error {
	switch {
	case r.Schema != Schema:
		return fieldErr("schema", "%q, want %q", r.Schema, Schema)
	case strings.TrimSpace(r.ID) == "":
		return fieldErr("id", "empty")
	case strings.TrimSpace(r.Task) == "":
		return fieldErr("task", "empty")
	case r.Split != "train" && r.Split != "test":
		return fieldErr("split", "%q, want train or test", r.Split)
	case strings.TrimSpace(r.Instruction) == "":
		return fieldErr("instruction", "empty")
	case strings.TrimSpace(r.GroundTruth) == "":
		return fieldErr("ground_truth", "empty")
	}
	if err := task.CheckRecorded(r.Task); err != nil {
		return fieldErr("task", "%v", err)
	}
	n, err := task.ParseName(r.Task)
	if err != nil {
		return fieldErr("task", "%v", err)
	}
	if n.Needs(task.OracleDraft) && strings.TrimSpace(r.Draft) == "" {
		return fieldErr("draft", "missing: a %s conversation needs the document the agent started from", n.Family)
	}
	for i, f := range r.HiddenFacts {
		if strings.TrimSpace(f.Text) == "" {
			return fieldErr(fmt.Sprintf("hidden_facts[%d].text", i), "empty")
		}
	}
	if p := r.Persona; p != nil {
		for _, c := range []struct {
			name string
			v    *float64
		}{{"verbosity", p.Verbosity}, {"typo_rate", p.TypoRate}, {"clarity", p.Clarity}} {
			if c.v == nil {
				return fieldErr("persona."+c.name, "missing")
			}
			if !(*c.v >= 0 && *c.v <= 1) {
				return fieldErr("persona."+c.name, "%g not in [0,1]", *c.v)
			}
		}
		if p.Patience == nil {
			return fieldErr("persona.patience", "missing")
		}
		if *p.Patience < 0 {
			return fieldErr("persona.patience", "%d is negative", *p.Patience)
		}
		if p.Threshold < 0 || p.Threshold > 100 {
			return fieldErr("persona.threshold", "%g not in [0,100]", p.Threshold)
		}
	}
	ok := false
	for _, e := range Ends {
		ok = ok || r.End == string(e)
	}
	if !ok {
		return fieldErr("end", "%q, want one of %v", r.End, Ends)
	}
	if len(r.Messages) == 0 {
		return fieldErr("messages", "empty")
	}
	users, agents := 0, 0
	for i, m := range r.Messages {
		switch dialog.Role(m.Role) {
		case dialog.RoleUser:
			users++
		case dialog.RoleAssistant:
			agents++
		case dialog.RoleSystem:
		default:
			return fieldErr(fmt.Sprintf("messages[%d].role", i), "%q, want user, assistant or system", m.Role)
		}
		if strings.TrimSpace(m.Content) == "" {
			return fieldErr(fmt.Sprintf("messages[%d].content", i), "empty")
		}
		if len(m.Content) > dialog.MaxMessageBytes {
			return fieldErr(fmt.Sprintf("messages[%d].content", i), "%d bytes, the limit is %d (a message this long is no dialogue turn)", len(m.Content), dialog.MaxMessageBytes)
		}
	}
	switch {
	case r.Messages[0].Role != string(dialog.RoleUser):
		return fieldErr("messages[0].role", "%q: a conversation starts with the user's turn", r.Messages[0].Role)
	case agents == 0:
		return fieldErr("messages", "no assistant turn")
	}
	return nil
}

// Read parses every record of r; name is used in errors ("name:LINE:
// field ...").
func Read(r io.Reader, name string) ([]Record, error) {
	var out []Record
	ids := map[string]int{}
	n := 0
	err := dialog.ScanJSONL(r, name, func(line []byte) error {
		n++
		rec, err := Parse(line)
		if err != nil {
			return err
		}
		if first, dup := ids[rec.ID]; dup {
			return fieldErr("id", "%q is also record %d's", rec.ID, first)
		}
		ids[rec.ID] = n
		out = append(out, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no conversations", name)
	}
	return out, nil
}

// Load reads a log file.
func Load(path string) ([]Record, error) {
	f, err := infile.Open(nil, path)
	if err != nil {
		return nil, fmt.Errorf("load human logs: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// Sniff reports whether the file's first record names this schema (or
// any calibrl.humanlog version), to tell it from an episodes file.
func Sniff(path string) (bool, error) {
	f, err := infile.Open(nil, path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	found := false
	errStop := errors.New("stop")
	err = dialog.ScanJSONL(io.LimitReader(f, 64<<20), path, func(line []byte) error {
		var head struct {
			Schema string `json:"schema"`
		}
		json.Unmarshal(line, &head)
		found = strings.HasPrefix(head.Schema, "calibrl.humanlog/")
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return false, err
	}
	return found, nil
}

// Episode turns the record into the episode the trainers read: the oracle
// context from the record's fields, index its position in the file. The
// outcome, reward and success are the task's to judge (the caller scores
// it); View.Instructions the task's agent prompt.
func (r *Record) Episode(index int) dialog.Episode {
	o := dialog.Oracle{Task: r.Task, ID: r.ID, Split: r.Split, Family: "logged", Instruction: r.Instruction,
		Opening: r.Opening, Truth: r.GroundTruth, Draft: r.Draft}
	for i, f := range r.HiddenFacts {
		o.Facts = append(o.Facts, dialog.Fact{Key: fmt.Sprintf("hidden%d", i), Text: f.Text, Value: f.Value, Hidden: true})
	}
	if p := r.Persona; p != nil {
		o.Persona = dialog.Persona{Patience: *p.Patience, Verbosity: *p.Verbosity, TypoRate: *p.TypoRate, Clarity: *p.Clarity, Threshold: p.Threshold}
	}
	ep := dialog.Episode{ID: r.ID, Task: r.Task, Split: r.Split, Agent: r.Agent, User: "human-log", Index: index,
		Oracle: o, View: dialog.View{Task: r.Task, Draft: r.Draft}, End: dialog.EndReason(r.End)}
	if ep.Agent == "" {
		ep.Agent = DefaultAgent
	}
	for _, m := range r.Messages {
		msg := dialog.Message{Role: dialog.Role(m.Role), Content: m.Content}
		ep.Messages = append(ep.Messages, msg)
		if msg.Role == dialog.RoleAssistant {
			ep.Turns++
		}
		ep.Tokens += dialog.ApproxTokens(m.Content)
	}
	return ep
}
