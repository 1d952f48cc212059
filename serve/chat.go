package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// ChatModel is what backs /v1/chat/completions: a model that continues a
// chat with the assistant's next message. The calibrated user simulator
// implements it (Simulator). Implementations must be safe for concurrent
// use. An error that is an *InvalidRequest is the client's (answered 400
// naming the field); any other is the server's.
type ChatModel interface {
	Complete(ctx context.Context, req ChatRequest) (ChatReply, error)
}

// ChatModelFunc adapts a function to ChatModel.
type ChatModelFunc func(ctx context.Context, req ChatRequest) (ChatReply, error)

// Complete calls f.
func (f ChatModelFunc) Complete(ctx context.Context, req ChatRequest) (ChatReply, error) {
	return f(ctx, req)
}

// ChatRequest is what a client asked for: the messages and the sampling
// fields it set. Nil and zero fields take the model's own defaults.
type ChatRequest struct {
	Messages []dialog.Message
	// MaxTokens bounds the completion's tokens (max_tokens or
	// max_completion_tokens); 0: the model's own bound.
	MaxTokens   int
	Temperature *float64
	TopP        *float64
	// Seed makes the completion a function of the request alone.
	Seed *int64
	// Stream, when set, receives the completion's text as it is written,
	// piece by piece; the pieces joined are a prefix of the reply's Text
	// (the server sends the rest when Complete returns). A model that
	// cannot stream leaves it uncalled. It must not block for long: the
	// model waits on it.
	Stream func(piece string)
}

// ChatReply is a completion: its text, why it stopped ("stop" or
// "length") and what it cost.
type ChatReply struct {
	Text   string
	Finish string
	Usage  Usage
}

// InvalidRequest is a request the model cannot honour as asked. Param
// names the field, Code is OpenAI's error code when there is one
// ("context_length_exceeded").
type InvalidRequest struct {
	Param, Code, Message string
}

func (e *InvalidRequest) Error() string { return e.Param + ": " + e.Message }

// Usage counts a completion's tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// chatRequest is OpenAI's request as far as the endpoint honours it.
// Every other field is refused (checkChatFields): a sampling option the
// server would ignore must not look as if it had been applied.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N                   *int            `json:"n"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	Seed                *int64          `json:"seed"`
	Stop                json.RawMessage `json:"stop"`
	ResponseFormat      *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

// chatFields are the request fields the endpoint reads; chatNeutral the
// ones that do not change a completion (identifiers and bookkeeping,
// accepted and not used); chatDefaults the ones accepted only at the
// value that means "off".
var (
	chatFields = map[string]bool{
		"model": true, "messages": true, "stream": true, "stream_options": true, "n": true,
		"max_tokens": true, "max_completion_tokens": true, "temperature": true, "top_p": true,
		"seed": true, "stop": true, "response_format": true,
	}
	chatNeutral  = map[string]bool{"user": true, "metadata": true, "store": true}
	chatDefaults = map[string]string{
		"frequency_penalty": "0", "presence_penalty": "0", "logprobs": "false",
		"parallel_tool_calls": "", "tool_choice": "", "tools": "", "functions": "", "function_call": "",
		"logit_bias": "", "top_logprobs": "",
	}
)

// checkChatFields refuses fields the endpoint would otherwise ignore.
func checkChatFields(raw map[string]json.RawMessage) *InvalidRequest {
	for k, v := range raw {
		if chatFields[k] || chatNeutral[k] {
			continue
		}
		val := strings.TrimSpace(string(v))
		if def, ok := chatDefaults[k]; ok {
			if val == "null" || val == def || val == "{}" || val == "[]" {
				continue
			}
			return &InvalidRequest{Param: k, Message: fmt.Sprintf("%s is not supported by this server's simulator (only %s)", k, orNull(def))}
		}
		return &InvalidRequest{Param: k, Message: fmt.Sprintf("unknown or unsupported field %q", k)}
	}
	return nil
}

func orNull(def string) string {
	if def == "" {
		return "null or empty"
	}
	return def
}

// sampling checks the sampling fields and returns them for the model.
func (r *chatRequest) sampling() (ChatRequest, *InvalidRequest) {
	var out ChatRequest
	if r.N != nil && *r.N != 1 {
		return out, &InvalidRequest{Param: "n", Message: "only n=1 is supported"}
	}
	if r.MaxTokens != nil && r.MaxCompletionTokens != nil && *r.MaxTokens != *r.MaxCompletionTokens {
		return out, &InvalidRequest{Param: "max_completion_tokens", Message: "max_tokens and max_completion_tokens disagree: send one"}
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_tokens", r.MaxTokens}, {"max_completion_tokens", r.MaxCompletionTokens}} {
		if f.v == nil {
			continue
		}
		if *f.v < 1 {
			return out, &InvalidRequest{Param: f.name, Message: fmt.Sprintf("%s must be at least 1, got %d", f.name, *f.v)}
		}
		out.MaxTokens = *f.v
	}
	if t := r.Temperature; t != nil && !(*t >= 0 && *t <= 2) {
		return out, &InvalidRequest{Param: "temperature", Message: fmt.Sprintf("temperature must be in [0, 2], got %g", *t)}
	}
	if p := r.TopP; p != nil && !(*p > 0 && *p <= 1) {
		return out, &InvalidRequest{Param: "top_p", Message: fmt.Sprintf("top_p must be in (0, 1], got %g", *p)}
	}
	out.Temperature, out.TopP, out.Seed = r.Temperature, r.TopP, r.Seed
	if stop := strings.TrimSpace(string(r.Stop)); stop != "" && stop != "null" && stop != "[]" && stop != `""` {
		return out, &InvalidRequest{Param: "stop", Message: "stop sequences are not supported: the simulator ends its turn itself and replies with one JSON object ({\"message\", \"end\", \"satisfied\"})"}
	}
	if rf := r.ResponseFormat; rf != nil && rf.Type != "" && rf.Type != "text" && rf.Type != "json_object" {
		return out, &InvalidRequest{Param: "response_format", Message: fmt.Sprintf("response_format %q is not supported (the reply is always one JSON object: text and json_object are accepted)", rf.Type)}
	}
	return out, nil
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
	var raw map[string]json.RawMessage
	if !decode(w, r, s.cfg.MaxBodyBytes, &raw, false) {
		return
	}
	if s.opt.Chat == nil {
		// 404, not 501: SDKs retry 5xx, and no retry can make a model appear.
		writeErrorCode(w, http.StatusNotFound, errNotFound, "model_not_found", "model",
			"no simulator is served here: start the server with `calibrl serve --sim DIR` (a train-sim checkpoint) to answer /v1/chat/completions; the environment API (/v1/episodes) works without it")
		return
	}
	var req chatRequest
	if err := remarshal(raw, &req); err != nil {
		writeError(w, http.StatusBadRequest, errInvalid, "malformed request: "+err.Error())
		return
	}
	if bad := checkChatFields(raw); bad != nil {
		writeInvalid(w, bad)
		return
	}
	if req.Model != s.opt.ChatName {
		writeErrorCode(w, http.StatusNotFound, errNotFound, "model_not_found", "model",
			fmt.Sprintf("the model %q does not exist here: this server serves %q (GET /v1/models)", req.Model, s.opt.ChatName))
		return
	}
	if len(req.Messages) == 0 {
		writeInvalid(w, &InvalidRequest{Param: "messages", Message: "messages must not be empty"})
		return
	}
	creq, bad := req.sampling()
	if bad != nil {
		writeInvalid(w, bad)
		return
	}
	creq.Messages = make([]dialog.Message, len(req.Messages))
	for i, m := range req.Messages {
		role := dialog.Role(m.Role)
		switch m.Role {
		case "system", "developer":
			role = dialog.RoleSystem
		case "user", "assistant":
		default:
			writeInvalid(w, &InvalidRequest{Param: fmt.Sprintf("messages[%d].role", i), Message: fmt.Sprintf("unsupported role %q", m.Role)})
			return
		}
		text, err := m.text()
		if err != nil {
			writeInvalid(w, &InvalidRequest{Param: fmt.Sprintf("messages[%d].content", i), Message: err.Error()})
			return
		}
		creq.Messages[i] = dialog.Message{Role: role, Content: text}
	}
	if req.Stream {
		s.streamChat(w, r, creq, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	reply, err := s.opt.Chat.Complete(r.Context(), creq)
	if err != nil {
		s.completionFailed(w, err)
		return
	}
	usage := reply.settle()
	id, created := s.completionID()
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "chat.completion", "created": created, "model": s.opt.ChatName,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": reply.Finish, "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": reply.Text, "refusal": nil},
		}},
		"usage": usage,
	})
}

// completionFailed answers a completion the model could not write: the
// client's error (400 naming the field) or the server's.
func (s *Server) completionFailed(w http.ResponseWriter, err error) {
	var inv *InvalidRequest
	if errors.As(err, &inv) {
		writeInvalid(w, inv)
		return
	}
	s.log.Warn("chat completion failed", "err", err)
	writeError(w, http.StatusInternalServerError, errServer, "completion failed: "+err.Error())
}

// settle fills the reply's defaults and returns its usage with the total.
func (r *ChatReply) settle() Usage {
	if r.Finish == "" {
		r.Finish = "stop"
	}
	u := r.Usage
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// completionID names a completion and dates it.
func (s *Server) completionID() (string, int64) {
	return "chatcmpl-" + strings.TrimPrefix(newID(), "ep_"), s.opt.Now().Unix()
}

// remarshal reads a decoded object into v.
func remarshal(raw map[string]json.RawMessage, v any) error {
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// models answers GET /v1/models: the simulator, when one is served.
func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	data := []any{}
	if s.opt.Chat != nil {
		data = append(data, s.modelObject())
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	if id := r.PathValue("model"); s.opt.Chat == nil || id != s.opt.ChatName {
		writeErrorCode(w, http.StatusNotFound, errNotFound, "model_not_found", "model", fmt.Sprintf("the model %q does not exist here (GET /v1/models)", id))
		return
	}
	writeJSON(w, http.StatusOK, s.modelObject())
}

func (s *Server) modelObject() map[string]any {
	return map[string]any{"id": s.opt.ChatName, "object": "model", "created": s.started.Unix(), "owned_by": "calibrl"}
}
