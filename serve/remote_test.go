package serve

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/remote"
	"github.com/calibrl/calibrl/reply"
	"github.com/calibrl/calibrl/task"
)

// TestRemoteUserThroughService serves a remote:MODEL user backed by a fake
// OpenAI server: malformed model replies become an unclear turn, and a
// failing server fails the turn with 502 and undoes it, leaving the
// episode as it was.
func TestRemoteUserThroughService(t *testing.T) {
	var mode atomic.Int32 // 0: opening, 1: malformed, 2: server error
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		text := `{"message": "hello, I need help", "end": false}`
		switch mode.Load() {
		case 1:
			text = "I am not JSON"
		case 2:
			http.Error(w, `{"error":{"message":"down","type":"server_error"}}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "created": 0, "model": "sim",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}}})
	}))
	defer fake.Close()
	reg, err := remote.NewRegistry(remote.Config{MaxAttempts: 2, BackoffBase: remote.Duration(time.Millisecond)},
		[]remote.Endpoint{{BaseURL: fake.URL + "/v1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, func(c *Config, o *Options) {
		c.Users = []string{"remote:sim"}
		o.User = func(_ task.Task, name string) (dialog.User, error) {
			p, err := reg.Pool(name[len("remote:"):])
			if err != nil {
				return nil, err
			}
			return remote.NewUser(p), nil
		}
	})
	c := ts.Client()
	var cr CreateResponse
	if st := call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "guess", User: "remote:sim"}, &cr); st != 201 {
		t.Fatalf("create: got %d", st)
	}
	if got := cr.Observation.Messages[0].Content; got != "hello, I need help" {
		t.Errorf("got opening %q, want the model's", got)
	}
	mode.Store(1)
	var tr TurnResponse
	if st := call(t, c, "POST", ts.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: "what is it?"}, &tr); st != 200 || tr.Reply != reply.Unclear || tr.Done {
		t.Fatalf("malformed model: got %d %+v, want an unclear turn", st, tr)
	}
	mode.Store(2)
	if st := call(t, c, "POST", ts.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: "hello?"}, nil); st != http.StatusBadGateway {
		t.Fatalf("failing model: got %d, want 502", st)
	}
	var got Transcript
	call(t, c, "GET", ts.URL+"/v1/episodes/"+cr.ID, "", nil, &got)
	if got.Turns != 1 || len(got.Messages) != 3 {
		t.Errorf("got %d turns, %d messages; want the failed turn undone (1, 3)", got.Turns, len(got.Messages))
	}
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	_, ts := newTestServer(t, func(c *Config, _ *Options) { c.Token = "t" })
	resp, err := ts.Client().Get(ts.URL + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("got %d, want /openapi.yaml served without a token", resp.StatusCode)
	}
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"/healthz": {"get"}, "/v1/episodes": {"post"}, "/v1/episodes/{id}": {"get", "delete"},
		"/v1/episodes/{id}/turns": {"post"}, "/v1/chat/completions": {"post"},
		"/ws": {"get"}, "/reset": {"post"}, "/step": {"post"}, "/state": {"get"},
		"/schema": {"get"}, "/health": {"get"}, "/metadata": {"get"},
	}
	for path, methods := range want {
		for _, m := range methods {
			if _, ok := doc.Paths[path][m]; !ok {
				t.Errorf("openapi.yaml lacks %s %s", m, path)
			}
		}
	}
}

// TestRemoteUserCarriesTheServersReason plays a remote:NAME user against
// this server's own chat endpoint when the simulator refuses the
// conversation as too long: the user's error must carry the server's
// reason (context_length_exceeded and its message), not only "400 Bad
// Request", and never the key.
func TestRemoteUserCarriesTheServersReason(t *testing.T) {
	const key = "sk-live-0a1b2c3d4e5f6a7b"
	t.Setenv("CALIBRL_TEST_SERVE_KEY", key)
	tooLong := ChatModelFunc(func(context.Context, ChatRequest) (ChatReply, error) {
		return ChatReply{}, &InvalidRequest{Param: "messages", Code: "context_length_exceeded", Message: "this model's maximum context length is 256 tokens"}
	})
	_, ts := newTestServer(t, func(_ *Config, o *Options) { o.Chat = tooLong })
	reg, err := remote.NewRegistry(remote.Config{MaxAttempts: 1},
		[]remote.Endpoint{{BaseURL: ts.URL + "/v1", Model: "calibrl-sim", APIKeyEnv: "CALIBRL_TEST_SERVE_KEY"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := reg.Pool("calibrl-sim")
	if err != nil {
		t.Fatal(err)
	}
	o := &dialog.Oracle{Task: "guess", Instruction: "guess 7", Opening: "guess my number", Truth: "7"}
	_, err = remote.NewUser(p).NewSession(o, rand.New(rand.NewPCG(1, 2))).Open(context.Background())
	if err == nil {
		t.Fatal("want the server's refusal")
	}
	for _, want := range []string{"400", "context_length_exceeded", "maximum context length is 256 tokens"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not carry %q", err, want)
		}
	}
	if strings.Contains(err.Error(), key) {
		t.Errorf("error shows the key: %v", err)
	}
}
