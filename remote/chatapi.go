package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/calibrl/calibrl/dialog"
)

// The one request calibrl makes of an OpenAI-compatible endpoint, POST
// /chat/completions, written with net/http. The official Go SDK did it
// before and was 13.4 MB of the program's 32.7 MB of code and data for
// this single request shape (docs/building.md): its typed API covers
// every endpoint of OpenAI's. Retries, timeouts, concurrency and error
// scrubbing were calibrl's own already (Pool), so what is left here is
// the wire format, checked against fake servers in this package's tests
// and against vLLM-style refusals; the server side (serve) is still
// checked with the official SDKs.

// chatMessage is one message of a request.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatRequest is the body of a chat completion request.
type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []chatMessage   `json:"messages"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	Temperature    *float64        `json:"temperature,omitempty"`
	Seed           *int64          `json:"seed,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type responseFormat struct {
	Type string `json:"type"`
}

// chatResponse is what calibrl reads of a reply.
type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// maxReplyBytes bounds a reply's body: a completion of calibrl's turn
// lengths is a few kilobytes; a server that streams without end is cut.
const maxReplyBytes = 8 << 20

// apiError is an endpoint's refusal: its HTTP status and, where the body
// is in OpenAI's error shape ({"error": {...}}), its code, type, param and
// message; Body is the body otherwise (bounded).
type apiError struct {
	Method, URL string
	StatusCode  int
	Code, Type  string
	Param       string
	Message     string
	Body        string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s %q: %d %s", e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
}

// readAPIError reads a refused request's body into an apiError.
func readAPIError(req *http.Request, resp *http.Response) *apiError {
	e := &apiError{Method: req.Method, URL: req.URL.String(), StatusCode: resp.StatusCode}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxReason+1)) // what arrived is all there is to quote
	var shaped struct {
		Error *struct {
			Message string `json:"message"`
			Type    any    `json:"type"`
			Param   any    `json:"param"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &shaped) == nil && shaped.Error != nil {
		e.Message, e.Type, e.Param, e.Code = shaped.Error.Message, text(shaped.Error.Type), text(shaped.Error.Param), text(shaped.Error.Code)
		return e
	}
	e.Body = string(data)
	return e
}

// text is a JSON scalar as text ("" for null): servers send codes as
// strings or numbers.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// chatClient posts chat completions to one endpoint.
type chatClient struct {
	url     string // BaseURL + "/chat/completions"
	key     string // "" sends no Authorization header
	timeout time.Duration
	http    *http.Client
}

func newChatClient(baseURL, key string, timeout time.Duration, hc *http.Client) *chatClient {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &chatClient{url: strings.TrimSuffix(baseURL, "/") + "/chat/completions", key: key, timeout: timeout, http: hc}
}

// complete sends one request and reads its reply; a refusal is an
// *apiError, a transport failure the client's own error.
func (c *chatClient) complete(ctx context.Context, body chatRequest) (chatResponse, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return chatResponse{}, err
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(data))
	if err != nil {
		return chatResponse{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return chatResponse{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return chatResponse{}, readAPIError(req, resp)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes+1))
	if err != nil {
		return chatResponse{}, fmt.Errorf("%s %q: reading the reply: %w", req.Method, c.url, err)
	}
	if len(raw) > maxReplyBytes {
		return chatResponse{}, fmt.Errorf("%s %q: reply over %d bytes", req.Method, c.url, maxReplyBytes)
	}
	var out chatResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return chatResponse{}, fmt.Errorf("%s %q: reply is not a chat completion: %w", req.Method, c.url, err)
	}
	return out, nil
}

// chatMessages is msgs in the request's shape; any role but system and
// assistant is the user's.
func chatMessages(msgs []dialog.Message) []chatMessage {
	out := make([]chatMessage, 0, len(msgs))
	for _, m := range msgs {
		role := "user"
		switch m.Role {
		case dialog.RoleSystem:
			role = "system"
		case dialog.RoleAssistant:
			role = "assistant"
		}
		out = append(out, chatMessage{Role: role, Content: m.Content})
	}
	return out
}
