// Package reply holds the JSON shapes calibrl asks language models to
// answer in, and reads them back leniently: a user simulator's turn (User,
// the wire format of the LLM user of package remote, of calibrl's own
// simulator served over a chat API, and of the simulator SFT data package
// export writes) and a judge's verdict (Verdict).
package reply

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// User is the fixed JSON shape a user simulator's turn takes on the wire:
//
//	{"message": "what the user says", "end": false, "satisfied": false}
//
// End ends the conversation; Satisfied says it ended because the user got
// what they wanted (it is ignored unless End is set, and left out when
// false). A prompted LLM user answers in it, calibrl's own simulator is
// served in it, and simulator training data is written in it, so a
// trainer reads any of them alike.
type User struct {
	Message   string `json:"message"`
	End       bool   `json:"end"`
	Satisfied bool   `json:"satisfied,omitempty"`
}

// Encode writes r in its wire shape.
func (r User) Encode() string {
	b, _ := json.Marshal(r) // a struct of a string and bools always encodes
	return string(b)
}

// Unclear is what a simulated user says when its model's turn is unusable
// (empty, garbled, or never in the shape asked for): a confused turn, as a
// person who garbled a message would send.
const Unclear = "Sorry, I'm not sure what you mean."

// maxReplyBytes bounds the text a parser looks at; model replies past it
// are rambling, not answers.
const maxReplyBytes = 64 << 10

// maxObjectStarts bounds the '{' positions tried when looking for the
// reply's JSON object.
const maxObjectStarts = 8

// ErrMalformed marks a model reply that is not in the shape asked for.
var ErrMalformed = errors.New("malformed reply")

// ParseUser reads a user simulator's reply. Models wrap JSON in prose or
// code fences, so the first JSON object in the text is taken; it must have
// a string "message" and, if present, a boolean "end". A reply that
// neither says anything nor ends is malformed.
func ParseUser(text string) (User, error) {
	obj, err := firstObject(text)
	if err != nil {
		return User{}, err
	}
	var raw struct {
		Message   *string          `json:"message"`
		End       *json.RawMessage `json:"end"`
		Satisfied *json.RawMessage `json:"satisfied"`
	}
	if err := json.Unmarshal(obj, &raw); err != nil {
		return User{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if raw.Message == nil {
		return User{}, fmt.Errorf("%w: no \"message\" field", ErrMalformed)
	}
	r := User{Message: strings.TrimSpace(*raw.Message)}
	if r.End, err = boolField(raw.End, "end"); err != nil {
		return User{}, err
	}
	if r.Satisfied, err = boolField(raw.Satisfied, "satisfied"); err != nil {
		return User{}, err
	}
	if r.Message == "" && !r.End {
		return User{}, fmt.Errorf("%w: empty message without end", ErrMalformed)
	}
	return r, nil
}

// boolField reads an optional boolean, accepting the strings "true" and
// "false" that smaller models produce.
func boolField(raw *json.RawMessage, name string) (bool, error) {
	if raw == nil || string(*raw) == "null" {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(*raw, &b); err == nil {
		return b, nil
	}
	var s string
	if err := json.Unmarshal(*raw, &s); err == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, fmt.Errorf("%w: %q must be true or false, got %s", ErrMalformed, name, *raw)
}

// Verdict is a judge's score of an outcome: Score in [0, 1] and why.
type Verdict struct {
	Score  float64 `json:"score"`
	Reason string  `json:"reason,omitempty"`
}

// ParseVerdict reads a judge's {"score": x, "reason": "..."} reply. Scores
// outside [0, 1] are malformed, except that a score in (1, 100] is read
// as a percentage, a common slip.
func ParseVerdict(text string) (Verdict, error) {
	obj, err := firstObject(text)
	if err != nil {
		return Verdict{}, err
	}
	var raw struct {
		Score  *float64 `json:"score"`
		Reason string   `json:"reason"`
	}
	if err := json.Unmarshal(obj, &raw); err != nil {
		return Verdict{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if raw.Score == nil || math.IsNaN(*raw.Score) {
		return Verdict{}, fmt.Errorf("%w: no numeric \"score\"", ErrMalformed)
	}
	s := *raw.Score
	if s > 1 && s <= 100 {
		s /= 100
	}
	if s < 0 || s > 1 {
		return Verdict{}, fmt.Errorf("%w: score %g outside [0, 1]", ErrMalformed, *raw.Score)
	}
	return Verdict{Score: s, Reason: strings.TrimSpace(raw.Reason)}, nil
}

// firstObject returns the first complete JSON object in text.
func firstObject(text string) ([]byte, error) {
	if len(text) > maxReplyBytes {
		return nil, fmt.Errorf("%w: reply longer than %d bytes", ErrMalformed, maxReplyBytes)
	}
	b := []byte(text)
	// A few starting points suffice for prose around one object and keep
	// adversarial input ("{{{{…") linear rather than quadratic.
	for off, tries := 0, 0; off < len(b) && tries < maxObjectStarts; tries++ {
		i := bytes.IndexByte(b[off:], '{')
		if i < 0 {
			break
		}
		start := off + i
		dec := json.NewDecoder(bytes.NewReader(b[start:]))
		var obj json.RawMessage
		if err := dec.Decode(&obj); err == nil && len(obj) > 0 && obj[0] == '{' {
			return obj, nil
		}
		off = start + 1
	}
	return nil, fmt.Errorf("%w: no JSON object in %q", ErrMalformed, clip(text, 80))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
