package reply

import (
	"errors"
	"strings"
	"testing"
)

func TestParseUser(t *testing.T) {
	tests := []struct {
		in   string
		want User
		ok   bool
	}{
		{`{"message": "hi", "end": false}`, User{Message: "hi"}, true},
		{`{"message": "bye", "end": true, "satisfied": true}`, User{Message: "bye", End: true, Satisfied: true}, true},
		{"Here you go:\n```json\n{\"message\": \"ok\", \"end\": \"false\"}\n```", User{Message: "ok"}, true},
		{`{"message": "", "end": true}`, User{End: true}, true},
		{`{"message": "  padded  "}`, User{Message: "padded"}, true},
		{`{"note": 1} then {"message": "second", "end": false}`, User{}, false},
		{`{"message": "", "end": false}`, User{}, false},
		{`{"message": 3, "end": false}`, User{}, false},
		{`{"message": "x", "end": "maybe"}`, User{}, false},
		{`just text`, User{}, false},
		{`{"message": "unterminated`, User{}, false},
		{``, User{}, false},
	}
	for _, tt := range tests {
		got, err := ParseUser(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseUser(%q): got err %v, want ok %v", tt.in, err, tt.ok)
			continue
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseUser(%q): got %v, want ErrMalformed", tt.in, err)
		}
		if got != tt.want {
			t.Errorf("ParseUser(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// The wire shape: satisfied only when set, text escaped as encoding/json
// writes it, and what is written reads back.
func TestUserEncode(t *testing.T) {
	for _, tt := range []struct {
		r    User
		want string
	}{
		{User{Message: "hi"}, `{"message":"hi","end":false}`},
		{User{Message: "bye", End: true}, `{"message":"bye","end":true}`},
		{User{Message: "thanks", End: true, Satisfied: true}, `{"message":"thanks","end":true,"satisfied":true}`},
		{User{End: true}, `{"message":"","end":true}`},
		{User{Message: "a <b> & \"c\"\n"}, `{"message":"a \u003cb\u003e \u0026 \"c\"\n","end":false}`},
	} {
		if got := tt.r.Encode(); got != tt.want {
			t.Errorf("%+v.Encode() = %s, want %s", tt.r, got, tt.want)
		}
		back, err := ParseUser(tt.r.Encode())
		if want := (User{Message: strings.TrimSpace(tt.r.Message), End: tt.r.End, Satisfied: tt.r.Satisfied}); err != nil || back != want {
			t.Errorf("ParseUser(%s) = %+v, %v; want %+v", tt.r.Encode(), back, err, want)
		}
	}
}

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{`{"score": 0.25, "reason": "partly"}`, 0.25, true},
		{`Verdict: {"score": 1}`, 1, true},
		{`{"score": 80}`, 0.8, true},
		{`{"score": -1}`, 0, false},
		{`{"score": 250}`, 0, false},
		{`{"reason": "no score"}`, 0, false},
		{`{"score": "high"}`, 0, false},
	}
	for _, tt := range tests {
		got, err := ParseVerdict(tt.in)
		if (err == nil) != tt.ok || got.Score != tt.want {
			t.Errorf("ParseVerdict(%q) = %v, %v; want %v, ok %v", tt.in, got.Score, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseUser(f *testing.F) {
	for _, s := range []string{
		`{"message": "hi", "end": false}`, "```json\n{\"message\":\"x\",\"end\":true}\n```",
		`{"message": "a", "end": "true", "satisfied": null}`, `{{{{`, `{"message": "\u00e9"}`, `[1,2]`, `{"a":{"b":{"c":`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseUser(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if r.Message == "" && !r.End {
			t.Fatalf("accepted an empty non-ending reply from %q", s)
		}
		if r.Message != strings.TrimSpace(r.Message) {
			t.Fatalf("message %q not trimmed", r.Message)
		}
		// What the parser accepts survives a round trip through the shape.
		again, err := ParseUser(r.Encode())
		if err != nil || again != r {
			t.Fatalf("round trip of %+v gave %+v, %v", r, again, err)
		}
	})
}

func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{`{"score": 0.5, "reason": "x"}`, `{"score": 80}`, `score: {"score": -0}`, `{"score": 1e400}`, `{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVerdict(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if !(v.Score >= 0 && v.Score <= 1) {
			t.Fatalf("accepted score %v from %q", v.Score, s)
		}
	})
}

// A malformed reply's error says what is wrong with it.
func TestParseUserErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`just text`, `malformed reply: no JSON object in "just text"`},
		{`{"end": true}`, `malformed reply: no "message" field`},
		{`{"message": "", "end": false}`, `malformed reply: empty message without end`},
		{`{"message": "x", "end": "maybe"}`, `malformed reply: "end" must be true or false, got "maybe"`},
		{`{"message": "x", "satisfied": 2}`, `malformed reply: "satisfied" must be true or false, got 2`},
	} {
		if _, err := ParseUser(tt.in); err == nil || err.Error() != tt.want {
			t.Errorf("ParseUser(%s): got %v, want %s", tt.in, err, tt.want)
		}
	}
}
