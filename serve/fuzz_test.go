package serve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/task/level"
)

// FuzzRequestBodies sends arbitrary bodies to every JSON endpoint: the
// server must answer 2xx or 4xx, always with a JSON body, never 5xx or a
// panic.
func FuzzRequestBodies(f *testing.F) {
	for _, s := range []string{
		`{"task":"guess","seed":1}`, `{"task":"guess","index":-5}`, `{"message":"3"}`, `{"message":7}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`, `{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"stream":true}`,
		`{"messages":[{"role":"user","content":null}],"n":2}`, `[]`, `null`, `{"task":"guess"}{"x":1}`,
		`{"message":"5","messages":[{"role":"system","content":"s"},{"role":"user","content":"Guess my number (0-9)."},{"role":"assistant","content":"4"},{"role":"user","content":"higher"},{"role":"assistant","content":"5"}]}`,
		`{"message":"5","messages":[{"role":"assistant","content":"4","tool_calls":[]},{"role":"user","content":[{"type":"text","text":"x"}]}]}`,
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
	// An id this server writes but does not hold: turns on it recover it.
	other := episodeKey{Task: "guess", Split: "train", User: "human", MaxTurns: level.DefaultMaxTurns, Nonce: "fuzz"}.id()
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/episodes", "/v1/episodes/" + cr.ID + "/turns", "/v1/episodes/" + other + "/turns", "/v1/chat/completions"} {
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

// FuzzEpisodeID reads arbitrary ids: an id is either refused or read back
// to a key that writes that very id (one episode, one id), and checking
// the key against the configuration never fails otherwise than by error.
func FuzzEpisodeID(f *testing.F) {
	for _, s := range []string{
		episodeKey{Task: "mathchat:easy", Split: "train", User: "human", Index: 3, Seed: 1 << 60, MaxTurns: 8, Nonce: "ab"}.id(),
		"ep_0123", idPrefix, idPrefix + "e30", idPrefix + "eyJ0IjoiIn0", "",
	} {
		f.Add(s)
	}
	s, err := New(DefaultConfig(), Options{Task: taskByName(guessTask{})})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id string) {
		k, err := parseEpisodeID(id)
		if err != nil {
			return
		}
		if k.id() != id {
			t.Fatalf("id %q reads as %+v, which writes %q", id, k, k.id())
		}
		s.check(k)
	})
}
