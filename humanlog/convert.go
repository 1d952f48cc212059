package humanlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
)

// Mapping says where a plain chat JSONL record keeps each field of the
// schema. Field names are dotted paths into the record ("meta.answer");
// an empty name means the record does not have it.
type Mapping struct {
	// Task is every record's task name (required).
	Task string
	// Messages is the field holding the turns (default "messages"): a list
	// of {"role","content"} (roles user, assistant, system) or
	// {"from","value"} (human, gpt) objects.
	Messages string
	// ID names the id field; without it records are numbered "LINE".
	ID string
	// Instruction, GroundTruth name the required oracle fields; Draft the
	// document the agent started from (docedit); Opening, HiddenFacts
	// (a list of strings or of {"text","value"} objects) and Persona
	// ({"patience","verbosity","typo_rate","clarity"}) optional ones.
	Instruction, GroundTruth, Draft, Opening, HiddenFacts, Persona string
	// Split names a field holding "train" or "test"; without it a record
	// goes to test when an FNV-1a hash of its id falls in TestPercent.
	Split       string
	TestPercent int
	// End names a field holding the end reason; EndValue is the end reason
	// of every record (one of the two is required: how a conversation
	// ended is not guessed).
	End, EndValue string
	// Agent names the field saying who played the agent; AgentValue is
	// every record's (default DefaultAgent).
	Agent, AgentValue string
}

// Check reports a mapping that cannot make complete records.
func (m *Mapping) Check() error {
	switch {
	case m.Task == "":
		return errors.New("convert: name the task (--task)")
	case m.Instruction == "":
		return errors.New("convert: name the field holding the instruction (--instruction)")
	case m.GroundTruth == "":
		return errors.New("convert: name the field holding the ground truth (--ground-truth)")
	case m.End == "" && m.EndValue == "":
		return fmt.Errorf("convert: say how conversations ended: --end-field NAME or --end VALUE (%v)", Ends)
	case m.TestPercent < 0 || m.TestPercent > 100:
		return fmt.Errorf("convert: test percent %d not in 0..100", m.TestPercent)
	}
	return nil
}

// Convert reads plain chat JSONL from r and writes schema records to w,
// returning how many. Every record is checked as Parse checks it; the
// first bad one stops the conversion with "name:LINE: field ...", where
// the field is the source record's.
func Convert(r io.Reader, name string, w io.Writer, m Mapping) (int, error) {
	if err := m.Check(); err != nil {
		return 0, err
	}
	if m.Messages == "" {
		m.Messages = "messages"
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n, line := 0, 0
	ids := map[string]bool{}
	err := dialog.ScanJSONL(r, name, func(raw []byte) error {
		line++
		var src map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&src); err != nil {
			return fmt.Errorf("not a JSON object: %w", err)
		}
		rec, err := m.record(src, line)
		if err != nil {
			return err
		}
		if ids[rec.ID] {
			return fieldErr(orDefault(m.ID, "id"), "%q appears twice", rec.ID)
		}
		ids[rec.ID] = true
		if err := rec.Check(); err != nil {
			return m.sourceField(err)
		}
		n++
		return enc.Encode(rec)
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("%s: no records", name)
	}
	return n, err
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// sourceField renames a schema field in err to the source's field.
func (m *Mapping) sourceField(err error) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return err
	}
	head, tail, _ := strings.Cut(fe.Field, ".")
	head, idx, _ := strings.Cut(head, "[")
	src := map[string]string{"instruction": m.Instruction, "ground_truth": m.GroundTruth, "draft": m.Draft,
		"opening": m.Opening, "hidden_facts": m.HiddenFacts, "persona": m.Persona, "split": m.Split,
		"end": m.End, "messages": m.Messages, "id": m.ID}[head]
	if src == "" {
		return err
	}
	f := src
	if idx != "" {
		f += "[" + idx
	}
	if tail != "" {
		f += "." + tail
	}
	return &FieldError{Field: f, Err: fe.Err}
}

// lookup follows a dotted path.
func lookup(rec map[string]any, path string) (any, bool) {
	var cur any = rec
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

// text reads a string or number field; required fields must be there.
func text(rec map[string]any, path string, required bool) (string, error) {
	if path == "" {
		return "", nil
	}
	v, ok := lookup(rec, path)
	if !ok {
		if required {
			return "", &FieldError{Field: path, Err: errMissing}
		}
		return "", nil
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	}
	return "", fieldErr(path, "want a string or a number, got %T", v)
}

func (m *Mapping) record(src map[string]any, line int) (Record, error) {
	rec := Record{Schema: Schema, Task: m.Task, End: m.EndValue, Agent: m.AgentValue}
	name, _ := task.ParseName(m.Task) // Check reports a bad name
	var err error
	if rec.ID = strconv.Itoa(line); m.ID != "" {
		if rec.ID, err = text(src, m.ID, true); err != nil {
			return rec, err
		}
	}
	for _, f := range []struct {
		dst      *string
		path     string
		required bool
	}{
		{&rec.Instruction, m.Instruction, true}, {&rec.GroundTruth, m.GroundTruth, true},
		{&rec.Draft, m.Draft, name.Needs(task.OracleDraft)}, {&rec.Opening, m.Opening, false},
		{&rec.Split, m.Split, true}, {&rec.End, m.End, true}, {&rec.Agent, m.Agent, false},
	} {
		if f.path == "" {
			continue
		}
		if *f.dst, err = text(src, f.path, f.required); err != nil {
			return rec, err
		}
	}
	if m.Split == "" {
		h := fnv.New32a()
		h.Write([]byte(rec.ID))
		rec.Split = "train"
		if int(h.Sum32()%100) < m.TestPercent {
			rec.Split = "test"
		}
	}
	if m.HiddenFacts != "" {
		if v, ok := lookup(src, m.HiddenFacts); ok {
			if rec.HiddenFacts, err = facts(v, m.HiddenFacts); err != nil {
				return rec, err
			}
		}
	}
	if m.Persona != "" {
		if v, ok := lookup(src, m.Persona); ok {
			b, _ := json.Marshal(v)
			var p Persona
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
				return rec, fieldErr(m.Persona, "%v", err)
			}
			rec.Persona = &p
		}
	}
	v, ok := lookup(src, m.Messages)
	if !ok {
		return rec, &FieldError{Field: m.Messages, Err: errMissing}
	}
	list, ok := v.([]any)
	if !ok {
		return rec, fieldErr(m.Messages, "want a list of messages, got %T", v)
	}
	for i, x := range list {
		obj, ok := x.(map[string]any)
		if !ok {
			return rec, fieldErr(fmt.Sprintf("%s[%d]", m.Messages, i), "want an object, got %T", x)
		}
		msg, err := message(obj)
		if err != nil {
			return rec, fieldErr(fmt.Sprintf("%s[%d]", m.Messages, i), "%v", err)
		}
		rec.Messages = append(rec.Messages, msg)
	}
	return rec, nil
}

// roles maps ShareGPT-style speaker names.
var roles = map[string]string{"user": "user", "human": "user", "assistant": "assistant", "gpt": "assistant", "bot": "assistant", "system": "system"}

func message(obj map[string]any) (Message, error) {
	role, _ := obj["role"].(string)
	content, hasContent := obj["content"].(string)
	if role == "" {
		role, _ = obj["from"].(string)
		content, hasContent = obj["value"].(string)
	}
	r, ok := roles[strings.ToLower(role)]
	switch {
	case role == "":
		return Message{}, errors.New(`no "role" (or "from")`)
	case !ok:
		return Message{}, fmt.Errorf("role %q, want user, assistant or system (or human, gpt)", role)
	case !hasContent:
		return Message{}, errors.New(`no string "content" (or "value")`)
	}
	return Message{Role: r, Content: content}, nil
}

func facts(v any, path string) ([]Fact, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fieldErr(path, "want a list, got %T", v)
	}
	var out []Fact
	for i, x := range list {
		switch f := x.(type) {
		case string:
			out = append(out, Fact{Text: f})
		case map[string]any:
			t, _ := f["text"].(string)
			val, err := text(f, "value", false)
			if err != nil {
				return nil, fieldErr(fmt.Sprintf("%s[%d].value", path, i), "want a string or a number")
			}
			out = append(out, Fact{Text: t, Value: val})
		default:
			return nil, fieldErr(fmt.Sprintf("%s[%d]", path, i), "want a string or {\"text\",\"value\"}, got %T", x)
		}
	}
	return out, nil
}

// jsonEncode writes one record as a line.
func jsonEncode(w io.Writer, r Record) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
