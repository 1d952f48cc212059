// Package remote drives language models behind OpenAI-compatible chat
// endpoints (vLLM, SGLang, llama.cpp server, Ollama, hosted APIs) as
// calibrl agents, users and judges.
//
// A Pool spreads requests over one or more endpoints serving the same model:
// each endpoint has a bound on requests in flight, a request goes to the
// least-loaded endpoint (ties broken round-robin), and failed requests
// (429, 5xx, timeouts, dropped connections) are retried with jittered
// exponential backoff up to a bounded number of attempts. Every pool counts
// requests, retries, errors and tokens so a run can put them in its metrics.
//
// API keys are never part of a configuration: an endpoint names the
// environment variable that holds its key, and the key is read from the
// environment when the pool is built. Keys are never logged or written out.
//
// Remote models are not deterministic. The pool passes a seed derived from
// the episode's seed as the request's "seed" (which vLLM and OpenAI honour
// on a best-effort basis), so reruns are as repeatable as the server allows.
package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/calibrl/calibrl/infile"
	"github.com/calibrl/calibrl/secretenv"
)

// Duration is a time.Duration that reads "30s" or "2m" from JSON and YAML.
type Duration time.Duration

// UnmarshalJSON reads a Go duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("duration: want a string like \"30s\" or seconds, got %s", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalYAML reads a Go duration string or a number of seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var secs float64
	if err := n.Decode(&secs); err == nil {
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Endpoint is one OpenAI-compatible server.
type Endpoint struct {
	// Name labels the endpoint in logs and errors. Default: the base URL
	// without its user-info (RedactURL).
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// BaseURL is the API root, e.g. "http://gpu0:8000/v1".
	BaseURL string `json:"base_url" yaml:"base_url"`
	// Model is the model name the server expects.
	Model string `json:"model" yaml:"model"`
	// APIKeyEnv names the environment variable holding the API key. Empty:
	// no key is sent (local servers). The key itself never appears in a
	// configuration.
	APIKeyEnv string `json:"api_key_env,omitempty" yaml:"api_key_env,omitempty"`
	// MaxConcurrency bounds this endpoint's requests in flight. Default 16.
	MaxConcurrency int `json:"max_concurrency,omitempty" yaml:"max_concurrency,omitempty"`
	// Timeout bounds one attempt of one request. Default 120s.
	Timeout Duration `json:"timeout,omitempty" yaml:"timeout,omitempty"`
}

// Defaults of Endpoint and Config fields left zero.
const (
	DefaultMaxConcurrency = 16
	DefaultTimeout        = 120 * time.Second
	DefaultMaxAttempts    = 4
	DefaultBackoffBase    = 500 * time.Millisecond
	DefaultBackoffMax     = 20 * time.Second
	DefaultMaxTokens      = 512
	DefaultTemperature    = 0.7
)

func (e *Endpoint) fill() {
	if e.Name == "" {
		e.Name = RedactURL(e.BaseURL)
	}
	// A name is shown everywhere; one holding a URL must not carry its
	// credentials.
	e.Name = scrub(e.Name, secretsOf(e.BaseURL, ""))
	if e.MaxConcurrency <= 0 {
		e.MaxConcurrency = DefaultMaxConcurrency
	}
	if e.Timeout <= 0 {
		e.Timeout = Duration(DefaultTimeout)
	}
}

// Validate reports an endpoint that cannot be used.
func (e Endpoint) Validate() error {
	u, err := url.Parse(e.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint %q: base_url must be an http(s) URL, got %q", scrub(e.Name, secretsOf(e.BaseURL, "")), RedactURL(e.BaseURL))
	}
	if e.Model == "" {
		return fmt.Errorf("endpoint %q: no model", e.Name)
	}
	if e.MaxConcurrency < 0 {
		return fmt.Errorf("endpoint %q: max_concurrency must not be negative, got %d", e.Name, e.MaxConcurrency)
	}
	if e.APIKeyEnv != "" && secretenv.LooksLikeSecret(e.APIKeyEnv) {
		// The value is not repeated: it is most likely the key itself.
		return fmt.Errorf("endpoint %q: api_key_env must name the environment variable that holds the key (letters, digits and _, e.g. OPENAI_API_KEY); the value given looks like a key itself and is not shown", e.Name)
	}
	return nil
}

// Config is a set of endpoints and how requests to them are made.
type Config struct {
	// Endpoints serve the models. remote:MODEL fans out over every endpoint
	// whose Model is MODEL.
	Endpoints []Endpoint `json:"endpoints" yaml:"endpoints"`
	// MaxAttempts bounds the tries of one request (first try included).
	// Default 4.
	MaxAttempts int `json:"max_attempts,omitempty" yaml:"max_attempts,omitempty"`
	// BackoffBase is the wait before the first retry; each retry doubles
	// it, up to BackoffMax, and the wait is drawn uniformly from [d/2, d]
	// ("equal jitter"). Defaults 500ms and 20s.
	BackoffBase Duration `json:"backoff_base,omitempty" yaml:"backoff_base,omitempty"`
	BackoffMax  Duration `json:"backoff_max,omitempty" yaml:"backoff_max,omitempty"`
	// MaxTokens bounds each completion. Default 512.
	MaxTokens int `json:"max_tokens,omitempty" yaml:"max_tokens,omitempty"`
	// Temperature of sampling. Default 0.7; nil in a file means default.
	Temperature *float64 `json:"temperature,omitempty" yaml:"temperature,omitempty"`
	// NoJSONMode stops asking for response_format json_object (for the
	// user's and judge's replies), for servers that reject it. The reply
	// parsers cope with JSON wrapped in prose either way.
	NoJSONMode bool `json:"no_json_mode,omitempty" yaml:"no_json_mode,omitempty"`
}

// DefaultConfig returns a configuration with no endpoints and every other
// field at its default.
func DefaultConfig() Config {
	t := DefaultTemperature
	return Config{
		MaxAttempts: DefaultMaxAttempts,
		BackoffBase: Duration(DefaultBackoffBase),
		BackoffMax:  Duration(DefaultBackoffMax),
		MaxTokens:   DefaultMaxTokens,
		Temperature: &t,
	}
}

// Fill sets zero fields to their defaults.
func (c *Config) Fill() {
	d := DefaultConfig()
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = d.MaxAttempts
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = d.BackoffBase
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = d.BackoffMax
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = d.MaxTokens
	}
	if c.Temperature == nil {
		c.Temperature = d.Temperature
	}
	for i := range c.Endpoints {
		c.Endpoints[i].fill()
	}
}

// Validate reports a configuration that cannot be used.
func (c Config) Validate() error {
	if len(c.Endpoints) == 0 {
		return errors.New("remote: no endpoints configured")
	}
	for _, e := range c.Endpoints {
		if err := e.Validate(); err != nil {
			return fmt.Errorf("remote: %w", err)
		}
	}
	if c.MaxAttempts < 0 || c.MaxAttempts > 20 {
		return fmt.Errorf("remote: max_attempts must be in [1, 20], got %d", c.MaxAttempts)
	}
	if c.Temperature != nil && (*c.Temperature < 0 || *c.Temperature > 2) {
		return fmt.Errorf("remote: temperature must be in [0, 2], got %g", *c.Temperature)
	}
	return nil
}

// Models lists the distinct models the endpoints serve, in order of first
// appearance.
func (c Config) Models() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range c.Endpoints {
		if !seen[e.Model] {
			seen[e.Model] = true
			out = append(out, e.Model)
		}
	}
	return out
}

// ParseConfig reads a configuration in JSON or YAML (JSON is YAML, but a
// file starting with "{" is read strictly as JSON so typos in field names
// are reported). Unknown fields are errors in both forms.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return Config{}, fmt.Errorf("remote config: %w", err)
		}
		return c, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("remote config: %w", err)
	}
	return c, nil
}

// LoadConfig reads, fills and validates a configuration file.
func LoadConfig(path string) (Config, error) {
	data, err := infile.ReadFile(nil, path)
	if err != nil {
		return Config{}, fmt.Errorf("remote config: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	c.Fill()
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
