package remote

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"sync"
)

// Environment variables FromEnv reads.
const (
	// EnvConfig names a configuration file (JSON or YAML).
	EnvConfig = "CALIBRL_REMOTE_CONFIG"
	// EnvBaseURL is the OpenAI SDK's own variable: one server for any
	// model, keyed by OPENAI_API_KEY when that is set.
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
)

// Registry hands out one pool per model, so the agent, user and judge on
// one model share its endpoints' concurrency bounds and accounting.
type Registry struct {
	cfg Config
	// any, when set, serves models no endpoint names: copies with Model
	// set to the requested model (servers that take any model name, as a
	// hosted API, or N replicas of one vLLM deployment).
	any        []Endpoint
	httpClient *http.Client

	mu    sync.Mutex
	pools map[string]*Pool
}

// NewRegistry builds a registry over cfg. anyModel lists endpoints used,
// together, for models cfg does not name (their Model is ignored).
// httpClient may be nil for the default transport.
func NewRegistry(cfg Config, anyModel []Endpoint, httpClient *http.Client) (*Registry, error) {
	cfg.Fill()
	if len(cfg.Endpoints) > 0 {
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
	}
	anyModel = slices.Clone(anyModel)
	for i := range anyModel {
		e := &anyModel[i]
		e.Model = "any"
		e.fill()
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("remote: %w", err)
		}
	}
	if len(cfg.Endpoints) == 0 && len(anyModel) == 0 {
		return nil, fmt.Errorf("remote: no endpoints (set %s to a config file or %s to a server, or pass --remote-config / --remote-url)", EnvConfig, EnvBaseURL)
	}
	return &Registry{cfg: cfg, any: anyModel, httpClient: httpClient, pools: map[string]*Pool{}}, nil
}

// FromEnv builds a registry from CALIBRL_REMOTE_CONFIG, or failing that
// from OPENAI_BASE_URL (with OPENAI_API_KEY as the key variable when set).
func FromEnv() (*Registry, error) {
	if path := os.Getenv(EnvConfig); path != "" {
		cfg, err := LoadConfig(path)
		if err != nil {
			return nil, err
		}
		return NewRegistry(cfg, nil, nil)
	}
	if base := os.Getenv(EnvBaseURL); base != "" {
		e := Endpoint{Name: "env", BaseURL: base}
		if os.Getenv(EnvAPIKey) != "" {
			e.APIKeyEnv = EnvAPIKey
		}
		return NewRegistry(Config{}, []Endpoint{e}, nil)
	}
	return nil, fmt.Errorf("remote: no endpoints: set %s to a config file or %s to a server", EnvConfig, EnvBaseURL)
}

// Pool returns the pool of model, building it on first use.
func (r *Registry) Pool(model string) (*Pool, error) {
	if model == "" {
		return nil, fmt.Errorf("remote: empty model name (want remote:MODEL)")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.pools[model]; ok {
		return p, nil
	}
	cfg := r.cfg
	served := false
	for _, e := range cfg.Endpoints {
		if e.Model == model {
			served = true
			break
		}
	}
	if !served && len(r.any) > 0 {
		cfg.Endpoints = slices.Clone(r.any)
		for i := range cfg.Endpoints {
			cfg.Endpoints[i].Model = model
		}
	}
	p, err := NewPool(cfg, model, r.httpClient)
	if err != nil {
		return nil, err
	}
	r.pools[model] = p
	return p, nil
}

// Stats returns every pool's totals by model.
func (r *Registry) Stats() map[string]Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]Stats, len(r.pools))
	for m, p := range r.pools {
		out[m] = p.Stats()
	}
	return out
}

// Metrics flattens Stats into metric keys "remote/MODEL/requests", ...
func (r *Registry) Metrics() map[string]float64 {
	stats := r.Stats()
	models := make([]string, 0, len(stats))
	for m := range stats {
		models = append(models, m)
	}
	sort.Strings(models)
	out := map[string]float64{}
	for _, m := range models {
		for k, v := range stats[m].Metrics("remote/" + m) {
			out[k] = v
		}
	}
	return out
}
