package remote

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseUserReply(t *testing.T) {
	tests := []struct {
		in   string
		want UserReply
		ok   bool
	}{
		{`{"message": "hi", "end": false}`, UserReply{Message: "hi"}, true},
		{`{"message": "bye", "end": true, "satisfied": true}`, UserReply{Message: "bye", End: true, Satisfied: true}, true},
		{"Here you go:\n```json\n{\"message\": \"ok\", \"end\": \"false\"}\n```", UserReply{Message: "ok"}, true},
		{`{"message": "", "end": true}`, UserReply{End: true}, true},
		{`{"message": "  padded  "}`, UserReply{Message: "padded"}, true},
		{`{"note": 1} then {"message": "second", "end": false}`, UserReply{}, false},
		{`{"message": "", "end": false}`, UserReply{}, false},
		{`{"message": 3, "end": false}`, UserReply{}, false},
		{`{"message": "x", "end": "maybe"}`, UserReply{}, false},
		{`just text`, UserReply{}, false},
		{`{"message": "unterminated`, UserReply{}, false},
		{``, UserReply{}, false},
	}
	for _, tt := range tests {
		got, err := ParseUserReply(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseUserReply(%q): got err %v, want ok %v", tt.in, err, tt.ok)
			continue
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseUserReply(%q): got %v, want ErrMalformed", tt.in, err)
		}
		if got != tt.want {
			t.Errorf("ParseUserReply(%q) = %+v, want %+v", tt.in, got, tt.want)
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

func FuzzParseUserReply(f *testing.F) {
	for _, s := range []string{
		`{"message": "hi", "end": false}`, "```json\n{\"message\":\"x\",\"end\":true}\n```",
		`{"message": "a", "end": "true", "satisfied": null}`, `{{{{`, `{"message": "\u00e9"}`, `[1,2]`, `{"a":{"b":{"c":`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseUserReply(s)
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
		b, _ := json.Marshal(r)
		again, err := ParseUserReply(string(b))
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
