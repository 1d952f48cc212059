package remote

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer is an in-process OpenAI-compatible chat endpoint. handle
// decides each reply from the call number (0-based) and the request body.
type fakeServer struct {
	*httptest.Server
	calls    atomic.Int64
	inflight atomic.Int64
	maxIn    atomic.Int64

	mu     sync.Mutex
	bodies []map[string]any
	auth   []string
}

type fakeReply struct {
	status int           // 0: 200
	text   string        // the completion's content
	delay  time.Duration // before answering (cut short when the client leaves)
	hang   bool          // wait until the client gives up
}

func newFake(t *testing.T, handle func(n int, body map[string]any) fakeReply) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		cur := f.inflight.Add(1)
		defer f.inflight.Add(-1)
		for {
			m := f.maxIn.Load()
			if cur <= m || f.maxIn.CompareAndSwap(m, cur) {
				break
			}
		}
		n := int(f.calls.Add(1) - 1)
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		rep := handle(n, body)
		if rep.hang {
			<-r.Context().Done()
			return
		}
		if rep.delay > 0 {
			select {
			case <-time.After(rep.delay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if rep.status != 0 && rep.status != http.StatusOK {
			w.WriteHeader(rep.status)
			fmt.Fprintf(w, `{"error":{"message":"fake %d","type":"fake","code":null,"param":null}}`, rep.status)
			return
		}
		reply := map[string]any{
			"id": fmt.Sprintf("c%d", n), "object": "chat.completion", "created": 0, "model": body["model"],
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": rep.text}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
		}
		json.NewEncoder(w).Encode(reply)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) body(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

// testConfig is a fast-retrying config over the given servers, all serving
// model "m".
func testConfig(servers ...*fakeServer) Config {
	cfg := Config{MaxAttempts: 3, BackoffBase: Duration(time.Millisecond), BackoffMax: Duration(5 * time.Millisecond)}
	for i, s := range servers {
		cfg.Endpoints = append(cfg.Endpoints, Endpoint{Name: fmt.Sprintf("e%d", i), BaseURL: s.URL + "/v1", Model: "m", MaxConcurrency: 4, Timeout: Duration(2 * time.Second)})
	}
	return cfg
}

func testPool(t *testing.T, cfg Config) *Pool {
	t.Helper()
	p, err := NewPool(cfg, "m", nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
