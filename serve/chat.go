package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// ChatModel is what backs /v1/chat/completions: a model that continues a
// chat with the assistant's next message. The calibrated user simulator
// implements it (conditioned on the oracle context in the system message,
// it speaks as the assistant of a role-flipped chat; see package export).
// Implementations must be safe for concurrent use.
type ChatModel interface {
	Complete(ctx context.Context, messages []dialog.Message) (string, Usage, error)
}

// ChatModelFunc adapts a function to ChatModel.
type ChatModelFunc func(ctx context.Context, messages []dialog.Message) (string, Usage, error)

// Complete calls f.
func (f ChatModelFunc) Complete(ctx context.Context, m []dialog.Message) (string, Usage, error) {
	return f(ctx, m)
}

// Usage counts a completion's tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// chatRequest is the part of OpenAI's request the endpoint reads. Other
// fields (temperature, max_tokens, ...) are accepted and ignored: the
// simulator samples as it was configured.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N *int `json:"n"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text reads content that is a string or an array of text parts.
func (m chatMessage) text() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", fmt.Errorf("content must be a string or an array of text parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content part of type %q: only text is supported", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !decode(w, r, s.cfg.MaxBodyBytes, &req, false) {
		return
	}
	if s.opt.Chat == nil {
		writeError(w, http.StatusNotImplemented, errUnavailable,
			"no simulator is configured on this server: /v1/chat/completions answers once a calibrated user simulator is plugged in (serve.Options.Chat); the environment API (/v1/episodes) works without it")
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, errInvalid, "messages must not be empty")
		return
	}
	if req.N != nil && *req.N != 1 {
		writeError(w, http.StatusBadRequest, errInvalid, "only n=1 is supported")
		return
	}
	msgs := make([]dialog.Message, len(req.Messages))
	for i, m := range req.Messages {
		role := dialog.Role(m.Role)
		switch m.Role {
		case "system", "developer":
			role = dialog.RoleSystem
		case "user", "assistant":
		default:
			writeError(w, http.StatusBadRequest, errInvalid, fmt.Sprintf("messages[%d]: unsupported role %q", i, m.Role))
			return
		}
		text, err := m.text()
		if err != nil {
			writeError(w, http.StatusBadRequest, errInvalid, fmt.Sprintf("messages[%d]: %v", i, err))
			return
		}
		msgs[i] = dialog.Message{Role: role, Content: text}
	}
	text, usage, err := s.opt.Chat.Complete(r.Context(), msgs)
	if err != nil {
		s.log.Warn("chat completion failed", "err", err)
		writeError(w, http.StatusInternalServerError, errServer, "completion failed: "+err.Error())
		return
	}
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	id := "chatcmpl-" + strings.TrimPrefix(newID(), "ep_")
	created := s.opt.Now().Unix()
	if req.Stream {
		s.streamChat(w, id, created, text, usage, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "chat.completion", "created": created, "model": s.opt.ChatName,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": text, "refusal": nil},
		}},
		"usage": usage,
	})
}

// streamChat sends the completion as server-sent events: one chunk with
// the whole text (the simulator does not generate incrementally here), a
// closing chunk with finish_reason, optionally usage, then [DONE].
func (s *Server) streamChat(w http.ResponseWriter, id string, created int64, text string, usage Usage, withUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	chunk := func(delta map[string]any, finish any, u *Usage) {
		c := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": s.opt.ChatName,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
		if u != nil {
			c["usage"] = u
			c["choices"] = []any{}
		}
		b, _ := json.Marshal(c) // maps of strings and numbers always encode
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(map[string]any{"role": "assistant", "content": text}, nil, nil)
	chunk(map[string]any{}, "stop", nil)
	if withUsage {
		chunk(nil, nil, &usage)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
