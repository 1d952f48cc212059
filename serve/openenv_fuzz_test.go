package serve

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// FuzzOpenEnvMessages sends arbitrary bodies to OpenEnv's HTTP routes and
// arbitrary messages over one WebSocket session: HTTP answers 2xx or 4xx
// with a JSON body, and the session answers every message but close with
// one JSON reply of a known type, and stays open (a message over the body
// limit closes it).
func FuzzOpenEnvMessages(f *testing.F) {
	for _, s := range []string{
		`{"type":"reset","data":{"task":"guess","seed":1}}`, `{"type":"step","data":{"message":"3"}}`,
		`{"type":"step","data":{"message":7}}`, `{"type":"state"}`, `{"type":"reset","data":null}`,
		`{"type":"reset","data":{"seed":"18446744073709551615"}}`, `{"type":"step"}`, `[]`, `null`, `{"type":1}`,
		`{"action":{"message":"x"},"episode_id":"ep_0"}`, `{"type":"reset","data":{"index":-1}}`,
	} {
		f.Add(s)
	}
	cfg := DefaultConfig()
	cfg.MaxBodyBytes = 4096
	cfg.OpenEnvTask = "guess"
	s, err := New(cfg, Options{Task: taskByName(guessTask{})})
	if err != nil {
		f.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
	if err != nil {
		f.Fatal(err)
	}
	defer c.CloseNow()
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/reset", "/step"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
			var v map[string]any
			if rec.Code >= 500 || rec.Code < 200 || json.Unmarshal(rec.Body.Bytes(), &v) != nil {
				t.Fatalf("POST %s %q: status %d, body %q", path, body, rec.Code, rec.Body)
			}
		}
		var m struct {
			Type any `json:"type"`
		}
		if json.Unmarshal([]byte(body), &m) == nil && m.Type == "close" {
			return // the one message without a reply
		}
		if int64(len(body)) > cfg.MaxBodyBytes {
			return // an oversized message closes the session (StatusMessageTooBig)
		}
		if err := c.Write(ctx, websocket.MessageText, []byte(body)); err != nil {
			t.Fatal(err)
		}
		_, raw, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("message %q: %v", body, err)
		}
		var r struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw, &r); err != nil || (r.Type != "observation" && r.Type != "state" && r.Type != "error") {
			t.Fatalf("message %q: reply %s", body, raw)
		}
	})
}
