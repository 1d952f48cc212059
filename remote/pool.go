package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/secretenv"
)

// Request is one chat completion.
type Request struct {
	Messages []dialog.Message
	// Seed, when non-nil, is sent as the request's seed.
	Seed *int64
	// MaxTokens overrides the pool's bound when positive.
	MaxTokens int
	// JSON asks for a JSON object reply (response_format json_object),
	// unless the pool's config sets NoJSONMode.
	JSON bool
}

// Response is a completion's text and what it cost.
type Response struct {
	Text  string
	Usage Usage
	// Endpoint is the name of the endpoint that answered.
	Endpoint string
}

// Usage is the token count of one completion.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// Stats are a pool's running totals. Requests counts calls to Complete;
// Attempts counts HTTP requests sent (Requests plus retries).
type Stats struct {
	Requests         int64 `json:"requests"`
	Attempts         int64 `json:"attempts"`
	Retries          int64 `json:"retries"`
	Errors           int64 `json:"errors"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// Metrics returns the stats under namespaced metric keys, prefixed by
// prefix ("remote/agent").
func (s Stats) Metrics(prefix string) map[string]float64 {
	return map[string]float64{
		prefix + "/requests":          float64(s.Requests),
		prefix + "/attempts":          float64(s.Attempts),
		prefix + "/retries":           float64(s.Retries),
		prefix + "/errors":            float64(s.Errors),
		prefix + "/prompt_tokens":     float64(s.PromptTokens),
		prefix + "/completion_tokens": float64(s.CompletionTokens),
	}
}

type endpoint struct {
	cfg      Endpoint
	secrets  []string // scrubbed from every error (secretsOf)
	client   *chatClient
	slots    chan struct{} // one token per request in flight
	inflight atomic.Int64
}

// Pool sends chat completions to the endpoints of one model.
type Pool struct {
	model     string
	cfg       Config
	endpoints []*endpoint
	next      atomic.Uint64 // round-robin start for ties

	mu  sync.Mutex // guards rng
	rng *rand.Rand // backoff jitter

	requests, attempts, retries, errs atomic.Int64
	promptTokens, completionTokens    atomic.Int64
}

// NewPool builds a pool over the endpoints of cfg that serve model. Keys
// are read from the environment now; a named variable that is unset is an
// error (a silently missing key would surface later as 401s).
func NewPool(cfg Config, model string, httpClient *http.Client) (*Pool, error) {
	cfg.Endpoints = slices.Clone(cfg.Endpoints) // Fill writes; callers keep theirs
	cfg.Fill()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Pool{model: model, cfg: cfg, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x5eed))}
	for _, e := range cfg.Endpoints {
		if e.Model != model {
			continue
		}
		key := ""
		if e.APIKeyEnv != "" {
			v, err := secretenv.Read(e.APIKeyEnv)
			if err != nil {
				return nil, fmt.Errorf("remote: endpoint %q: api_key_env: %w", e.Name, err)
			}
			key = v
		}
		p.endpoints = append(p.endpoints, &endpoint{
			cfg:     e,
			secrets: secretsOf(e.BaseURL, key),
			// An empty key sends no credentials: OPENAI_API_KEY and
			// friends in the environment never reach an endpoint that did
			// not ask for them. Retries are Pool's, bounded, jittered and
			// counted.
			client: newChatClient(e.BaseURL, key, time.Duration(e.Timeout), httpClient),
			slots:  make(chan struct{}, e.MaxConcurrency),
		})
	}
	if len(p.endpoints) == 0 {
		return nil, fmt.Errorf("remote: no endpoint serves model %q (configured: %v)", model, cfg.Models())
	}
	return p, nil
}

// Model is the model the pool serves.
func (p *Pool) Model() string { return p.model }

// Stats returns the running totals.
func (p *Pool) Stats() Stats {
	return Stats{
		Requests:         p.requests.Load(),
		Attempts:         p.attempts.Load(),
		Retries:          p.retries.Load(),
		Errors:           p.errs.Load(),
		PromptTokens:     p.promptTokens.Load(),
		CompletionTokens: p.completionTokens.Load(),
	}
}

// pick returns the endpoint with the fewest requests in flight, starting
// the scan at a rotating index so ties spread round-robin.
func (p *Pool) pick() *endpoint {
	n := len(p.endpoints)
	start := int(p.next.Add(1) % uint64(n))
	best := p.endpoints[start]
	bestLoad := float64(best.inflight.Load()) / float64(best.cfg.MaxConcurrency)
	for i := 1; i < n; i++ {
		e := p.endpoints[(start+i)%n]
		if load := float64(e.inflight.Load()) / float64(e.cfg.MaxConcurrency); load < bestLoad {
			best, bestLoad = e, load
		}
	}
	return best
}

// Complete sends req, retrying transient failures, and returns the first
// choice's text. It fails when ctx ends, on a non-retryable error (4xx
// other than 408/409/429), or when every attempt failed.
func (p *Pool) Complete(ctx context.Context, req Request) (Response, error) {
	p.requests.Add(1)
	var last error
	for attempt := 0; attempt < p.cfg.MaxAttempts; attempt++ {
		if attempt > 0 {
			p.retries.Add(1)
			if err := sleep(ctx, p.backoff(attempt)); err != nil {
				p.errs.Add(1)
				return Response{}, fmt.Errorf("remote %s: %w (last error: %v)", p.model, err, last)
			}
		}
		resp, err := p.attempt(ctx, req)
		if err == nil {
			return resp, nil
		}
		last = err
		if ctx.Err() != nil || !retryable(err) {
			break
		}
	}
	p.errs.Add(1)
	if ctx.Err() != nil {
		return Response{}, fmt.Errorf("remote %s: %w", p.model, ctx.Err())
	}
	return Response{}, fmt.Errorf("remote %s: %w", p.model, last)
}

func (p *Pool) attempt(ctx context.Context, req Request) (Response, error) {
	e := p.pick()
	e.inflight.Add(1)
	defer e.inflight.Add(-1)
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
	defer func() { <-e.slots }()
	p.attempts.Add(1)

	maxTokens := p.cfg.MaxTokens
	if req.MaxTokens > 0 {
		maxTokens = req.MaxTokens
	}
	body := chatRequest{Model: e.cfg.Model, Messages: chatMessages(req.Messages), MaxTokens: maxTokens, Temperature: p.cfg.Temperature, Seed: req.Seed}
	if req.JSON && !p.cfg.NoJSONMode {
		body.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	c, err := e.client.complete(ctx, body)
	if err != nil {
		// Errors name the request URL, user-info included.
		// Its summary is the status alone; the server's reason (the code
		// and message of its error body: context_length_exceeded, ...) is
		// what a user can act on, so it is kept, scrubbed the same way.
		if reason := serverReason(err); reason != "" {
			return Response{}, fmt.Errorf("endpoint %s: %w: %s", e.cfg.Name, redact(err, e.secrets), scrub(reason, e.secrets))
		}
		return Response{}, fmt.Errorf("endpoint %s: %w", e.cfg.Name, redact(err, e.secrets))
	}
	if len(c.Choices) == 0 {
		return Response{}, fmt.Errorf("endpoint %s: %w", e.cfg.Name, errNoChoices)
	}
	u := Usage{PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens}
	p.promptTokens.Add(u.PromptTokens)
	p.completionTokens.Add(u.CompletionTokens)
	return Response{Text: c.Choices[0].Message.Content, Usage: u, Endpoint: e.cfg.Name}, nil
}

var errNoChoices = errors.New("reply has no choices")

// maxReason bounds the server's reason quoted in an error.
const maxReason = 1000

// serverReason is the reason an API error's body gives: its code, type,
// param and message in OpenAI's error shape, or the body itself (bounded)
// when it is not in that shape; "" for other errors. The caller scrubs it.
func serverReason(err error) string {
	var apiErr *apiError
	if !errors.As(err, &apiErr) {
		return ""
	}
	var parts []string
	for _, f := range []struct{ name, v string }{{"code", apiErr.Code}, {"type", apiErr.Type}, {"param", apiErr.Param}} {
		if f.v != "" {
			parts = append(parts, f.name+" "+f.v)
		}
	}
	reason := strings.Join(parts, ", ")
	msg := apiErr.Message
	if msg == "" && reason == "" {
		msg = apiErr.Body // not an error object: the body as the server wrote it
	}
	if msg != "" {
		if reason != "" {
			reason += ": "
		}
		reason += msg
	}
	reason = strings.Join(strings.Fields(reason), " ")
	if len(reason) > maxReason {
		reason = strings.ToValidUTF8(reason[:maxReason], "") + "…"
	}
	return reason
}

// retryable reports failures worth another attempt: rate limits, server
// errors, timeouts and broken connections, and empty replies.
func retryable(err error) bool {
	var apiErr *apiError
	if errors.As(err, &apiErr) {
		switch s := apiErr.StatusCode; {
		case s == http.StatusRequestTimeout, s == http.StatusConflict, s == http.StatusTooManyRequests, s >= 500:
			return true
		default:
			return false
		}
	}
	if errors.Is(err, errNoChoices) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	// Other transport failures (connection reset, EOF mid-body) are
	// transient on a busy server; a bounded number of retries is cheap.
	return !errors.Is(err, context.Canceled)
}

// backoff is the wait before attempt (1-based retry count): base·2^(a−1)
// capped at max, drawn uniformly from [d/2, d].
func (p *Pool) backoff(attempt int) time.Duration {
	d := time.Duration(p.cfg.BackoffBase)
	for i := 1; i < attempt && d < time.Duration(p.cfg.BackoffMax); i++ {
		d *= 2
	}
	d = min(d, time.Duration(p.cfg.BackoffMax))
	p.mu.Lock()
	j := p.rng.Int64N(int64(d)/2 + 1)
	p.mu.Unlock()
	return d/2 + time.Duration(j)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
