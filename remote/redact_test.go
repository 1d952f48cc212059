package remote

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A failing endpoint's error names it without the password or user of its
// URL and without its key, however the error came about.
func TestErrorsCarryNoCredentials(t *testing.T) {
	const pass, key = "s3cret-pass", "sk-live-9f8e7d6c5b4a"
	t.Setenv("TEST_REMOTE_KEY", key)
	for _, status := range []int{502, 401} {
		f := newFake(t, func(int, map[string]any) fakeReply { return fakeReply{status: status} })
		url := strings.Replace(f.URL, "http://", "http://alice:"+pass+"@", 1) + "/v1"
		cfg := testConfig(f)
		cfg.Endpoints[0].Name = "" // named by its URL
		cfg.Endpoints[0].BaseURL = url
		cfg.Endpoints[0].APIKeyEnv = "TEST_REMOTE_KEY"
		cfg.MaxAttempts = 2
		p := testPool(t, cfg)
		_, err := p.Complete(context.Background(), hello())
		if err == nil {
			t.Fatal("want an error")
		}
		msg := err.Error()
		for _, secret := range []string{pass, "alice", key} {
			if strings.Contains(msg, secret) {
				t.Errorf("status %d: error shows %q: %s", status, secret, msg)
			}
		}
		if !strings.Contains(msg, strings.TrimPrefix(f.URL, "http://")) {
			t.Errorf("status %d: error does not name the endpoint: %s", status, msg)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pass@gpu0:8000/v1":      "http://gpu0:8000/v1",
		"https://gpu0/v1?api_key=sk-abc&x=1": "https://gpu0/v1?api_key=REDACTED&x=REDACTED",
		"http://gpu0:8000/v1":                "http://gpu0:8000/v1",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	e := Endpoint{BaseURL: "http://user:pass@gpu0:8000/v1", Model: "m"}
	e.fill()
	if e.Name != "http://gpu0:8000/v1" {
		t.Errorf("default name %q", e.Name)
	}
}

// A key pasted into api_key_env is refused without being repeated.
func TestAPIKeyEnvHoldingAKey(t *testing.T) {
	for _, pasted := range []string{"sk-proj-AbC123xyz789QwErTy", "sk_live_51HabcdEFGH1234567890", "gsk_8f7e6d5c4b3a2f1e0d9c8b7a", "key with spaces"} {
		e := Endpoint{BaseURL: "http://gpu0/v1", Model: "m", APIKeyEnv: pasted}
		e.fill()
		err := e.Validate()
		if err == nil {
			t.Errorf("%q accepted as a variable name", pasted)
			continue
		}
		if strings.Contains(err.Error(), pasted) || !strings.Contains(err.Error(), "api_key_env") {
			t.Errorf("error %q: want it to name api_key_env and not repeat the value", err)
		}
	}
	for _, name := range []string{"OPENAI_API_KEY", "VLLM_KEY_2", "my_key"} {
		e := Endpoint{BaseURL: "http://gpu0/v1", Model: "m", APIKeyEnv: name}
		e.fill()
		if err := e.Validate(); err != nil {
			t.Errorf("%s refused: %v", name, err)
		}
	}
}

// A refused request's error carries the server's reason (its code and
// message), scrubbed of the endpoint's key even when the server echoes
// it; the status alone ("400 Bad Request") tells a user nothing to act on.
func TestErrorsCarryTheServersReason(t *testing.T) {
	const key = "sk-live-9f8e7d6c5b4a"
	t.Setenv("TEST_REMOTE_KEY", key)
	for _, c := range []struct {
		name, contentType, body string
		want                    []string
	}{
		{"openai shape", "application/json",
			`{"error":{"message":"this model's maximum context length is 256 tokens (key ` + key + `)","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			[]string{"400", "context_length_exceeded", "maximum context length is 256 tokens", "param messages"}},
		{"plain text", "text/plain", "upstream says: prompt too long", []string{"400", "prompt too long"}},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", c.contentType)
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, c.body)
		}))
		cfg := Config{Endpoints: []Endpoint{{Name: "sim", BaseURL: srv.URL + "/v1", Model: "m", APIKeyEnv: "TEST_REMOTE_KEY"}}, MaxAttempts: 1}
		p := testPool(t, cfg)
		_, err := p.Complete(context.Background(), hello())
		srv.Close()
		if err == nil {
			t.Fatalf("%s: want an error", c.name)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not carry %q", c.name, err, w)
			}
		}
		if strings.Contains(err.Error(), key) {
			t.Errorf("%s: error shows the key: %s", c.name, err)
		}
	}
}
