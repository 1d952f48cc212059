package remote

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// The request is OpenAI's chat completion shape, field by field, at the
// base URL's /chat/completions whether or not it ends in a slash.
func TestChatRequestOnTheWire(t *testing.T) {
	var got map[string]any
	var path, ctype string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, ctype = r.URL.Path, r.Header.Get("Content-Type")
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &got); err != nil {
			t.Errorf("body %q: %v", data, err)
		}
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"fine"}}],"usage":{"prompt_tokens":7,"completion_tokens":1}}`)
	}))
	defer srv.Close()
	temp := 0.5
	for _, base := range []string{srv.URL + "/v1", srv.URL + "/v1/"} {
		p := testPool(t, Config{Endpoints: []Endpoint{{Name: "a", BaseURL: base, Model: "m"}}, MaxAttempts: 1, MaxTokens: 33, Temperature: &temp})
		resp, err := p.Complete(context.Background(), Request{Messages: []dialog.Message{
			{Role: dialog.RoleSystem, Content: "be brief"}, {Role: dialog.RoleUser, Content: "hi"}, {Role: dialog.RoleAssistant, Content: "hello"}}})
		if err != nil || resp.Text != "fine" || resp.Usage.PromptTokens != 7 || resp.Usage.CompletionTokens != 1 {
			t.Fatalf("%s: %+v, %v", base, resp, err)
		}
		if path != "/v1/chat/completions" || ctype != "application/json" {
			t.Errorf("%s: posted to %s as %s", base, path, ctype)
		}
		want := `{"max_tokens":33,"messages":[{"content":"be brief","role":"system"},{"content":"hi","role":"user"},{"content":"hello","role":"assistant"}],"model":"m","temperature":0.5}`
		if b, _ := json.Marshal(got); string(b) != want {
			t.Errorf("%s: body %s, want %s", base, b, want)
		}
	}
}

// A reply that is not a chat completion, or that never ends, is an error
// naming what was wrong, not a hang or an empty turn.
func TestChatReplyBounded(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       string
	}{
		{"not json", "<html>gateway</html>", "not a chat completion"},
		{"too long", `{"choices":[{"message":{"content":"` + strings.Repeat("x", maxReplyBytes) + `"}}]}`, "reply over"},
		{"numeric code", "", "code 42"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c.body == "" {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"error":{"message":"no","code":42,"param":null}}`)
				return
			}
			io.WriteString(w, c.body)
		}))
		p := testPool(t, Config{Endpoints: []Endpoint{{Name: "a", BaseURL: srv.URL + "/v1", Model: "m"}}, MaxAttempts: 1})
		_, err := p.Complete(context.Background(), hello())
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
