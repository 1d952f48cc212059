package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
)

// guessTask: the user holds a number in [0,10) (the instance index mod 10)
// and says higher or lower until the agent names it.
type guessTask struct{ user dialog.User }

func (guessTask) Name() string { return "guess" }
func (guessTask) Spec() string { return "guess" }
func (guessTask) Instance(split string, i int) (*dialog.Oracle, *dialog.View, error) {
	return &dialog.Oracle{Task: "guess", ID: fmt.Sprintf("guess/%s/%d", split, i), Split: split, Truth: strconv.Itoa(i % 10),
			Instruction: "guess", Opening: "guess my number (0-9)"},
		&dialog.View{Task: "guess", Instructions: "Find the user's number."}, nil
}
func (guessTask) Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	last := ""
	for _, m := range msgs {
		if m.Role == dialog.RoleAssistant {
			last = m.Content
		}
	}
	if last == o.Truth {
		return dialog.Score{Outcome: last, Reward: 1, Success: true}
	}
	return dialog.Score{Outcome: last}
}
func (g guessTask) User(kind dialog.UserKind) (dialog.User, error) {
	if !kind.Scripted() {
		return nil, fmt.Errorf("no user %q", kind)
	}
	if g.user != nil {
		return g.user, nil
	}
	return guessUser{}, nil
}
func (guessTask) Agent(string) (dialog.Agent, error) { return nil, errors.New("no agents") }
func (guessTask) Profiles() []string                 { return nil }

type guessUser struct{}

func (guessUser) NewSession(o *dialog.Oracle, _ *rand.Rand) dialog.UserSession {
	return &guessSession{o: o}
}

type guessSession struct {
	o      *dialog.Oracle
	reason dialog.EndReason
}

func (s *guessSession) Open(context.Context) (string, error) { return s.o.Opening, nil }
func (s *guessSession) Reply(_ context.Context, h []dialog.Message) (string, bool, error) {
	g := h[len(h)-1].Content
	switch {
	case g == s.o.Truth:
		s.reason = dialog.Solved
		return "yes!", true, nil
	case g < s.o.Truth:
		return "higher", false, nil
	default:
		return "lower", false, nil
	}
}
func (s *guessSession) EndReason() dialog.EndReason { return s.reason }

func taskByName(g guessTask) func(string) (task.Task, error) {
	return func(name string) (task.Task, error) {
		if name != "guess" {
			return nil, fmt.Errorf("unknown task %q (known: guess)", name)
		}
		return g, nil
	}
}

// newTestServer starts the handler over httptest with cfg adjusted by mod.
func newTestServer(t testing.TB, mod func(*Config, *Options)) (*Server, *httptest.Server) {
	t.Helper()
	cfg := DefaultConfig()
	opt := Options{Task: taskByName(guessTask{})}
	if mod != nil {
		mod(&cfg, &opt)
	}
	s, err := New(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts
}

// call sends a JSON request and decodes the JSON reply into out (if not
// nil); it returns the status.
func call(t testing.TB, c *http.Client, method, url, token string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: reply %q: %v", method, url, data, err)
		}
	}
	return resp.StatusCode
}

// bisect plays the guess episode id to the end with binary search and
// returns the replies.
func bisect(t testing.TB, c *http.Client, base, token, id string) []TurnResponse {
	t.Helper()
	lo, hi := 0, 9
	var out []TurnResponse
	for range 12 {
		g := (lo + hi) / 2
		var tr TurnResponse
		if st := call(t, c, "POST", base+"/v1/episodes/"+id+"/turns", token, TurnRequest{Message: strconv.Itoa(g)}, &tr); st != 200 {
			t.Fatalf("turn: got status %d", st)
		}
		out = append(out, tr)
		if tr.Done {
			return out
		}
		if tr.Reply == "higher" {
			lo = g + 1
		} else {
			hi = g - 1
		}
	}
	t.Fatalf("episode %s not done after 12 turns", id)
	return nil
}
