package serve

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/remote"
	"github.com/calibrl/calibrl/task"
)

func TestBodyMustBeJSON(t *testing.T) {
	_, ts := newTestServer(t, nil)
	body := `{"task":"guess"}`
	for ct, want := range map[string]int{
		"text/plain":                        http.StatusUnsupportedMediaType,
		"application/x-www-form-urlencoded": http.StatusUnsupportedMediaType,
		"application/json; charset=utf-8":   http.StatusCreated,
		"application/merge-patch+json":      http.StatusCreated,
		"":                                  http.StatusCreated,
	} {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/episodes", strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		reply, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Content-Type %q: got %d %s, want %d", ct, resp.StatusCode, reply, want)
		}
		if want == http.StatusUnsupportedMediaType && !strings.Contains(string(reply), "application/json") {
			t.Errorf("415 reply does not say what to send: %s", reply)
		}
	}
}

// The password of a --remote-url is in neither the 502 a client gets when
// the remote user fails nor the server's log.
func TestRemoteCredentialsNeverReachClientOrLog(t *testing.T) {
	const pass = "hunter2-topsecret"
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"down","type":"server_error"}}`, http.StatusBadGateway)
	}))
	defer fake.Close()
	base := strings.Replace(fake.URL, "http://", "http://bob:"+pass+"@", 1) + "/v1"
	reg, err := remote.NewRegistry(remote.Config{MaxAttempts: 2, BackoffBase: remote.Duration(time.Millisecond)},
		[]remote.Endpoint{{BaseURL: base}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	_, ts := newTestServer(t, func(c *Config, o *Options) {
		c.Users = []string{"remote:sim"}
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		o.User = func(_ task.Task, name string) (dialog.User, error) {
			p, err := reg.Pool(name[len("remote:"):])
			if err != nil {
				return nil, err
			}
			return remote.NewUser(p), nil
		}
	})
	req, _ := http.NewRequest("POST", ts.URL+"/v1/episodes", strings.NewReader(`{"task":"guess","user":"remote:sim"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("got %d %s, want 502", resp.StatusCode, reply)
	}
	for where, text := range map[string]string{"reply": string(reply), "log": logs.String()} {
		if strings.Contains(text, pass) || strings.Contains(text, "bob:") {
			t.Errorf("the %s shows the URL's credentials: %s", where, text)
		}
	}
}
