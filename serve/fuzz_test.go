package serve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequestBodies sends arbitrary bodies to every JSON endpoint: the
// server must answer 2xx or 4xx, always with a JSON body, never 5xx or a
// panic.
func FuzzRequestBodies(f *testing.F) {
	for _, s := range []string{
		`{"task":"guess","seed":1}`, `{"task":"guess","index":-5}`, `{"message":"3"}`, `{"message":7}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`, `{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"stream":true}`,
		`{"messages":[{"role":"user","content":null}],"n":2}`, `[]`, `null`, `{"task":"guess"}{"x":1}`,
	} {
		f.Add(s)
	}
	cfg := DefaultConfig()
	cfg.MaxBodyBytes = 4096
	s, err := New(cfg, Options{Task: taskByName(guessTask{}), Chat: guessChat})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/episodes", strings.NewReader(`{"task":"guess"}`)))
	var cr CreateResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &cr); err != nil || cr.ID == "" {
		f.Fatalf("create: %v %s", err, rec.Body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/episodes", "/v1/episodes/" + cr.ID + "/turns", "/v1/chat/completions"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
			if rec.Code >= 500 || rec.Code < 200 {
				t.Fatalf("POST %s %q: status %d", path, body, rec.Code)
			}
			ct := rec.Header().Get("Content-Type")
			if rec.Code >= 400 || ct == "application/json" {
				var v map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
					t.Fatalf("POST %s %q: status %d, body %q is not JSON", path, body, rec.Code, rec.Body)
				}
			}
			if rec.Code == http.StatusConflict {
				// The shared episode ended; later inputs still must not crash.
				continue
			}
		}
	})
}
