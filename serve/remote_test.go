package serve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
	}
	for path, methods := range want {
		for _, m := range methods {
			if _, ok := doc.Paths[path][m]; !ok {
				t.Errorf("openapi.yaml lacks %s %s", m, path)
			}
		}
	}
}
