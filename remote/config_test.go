package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	yamlText := `
endpoints:
  - name: gpu0
    base_url: http://gpu0:8000/v1
    model: qwen
    api_key_env: VLLM_KEY
    max_concurrency: 32
    timeout: 90s
  - base_url: http://gpu1:8000/v1
    model: qwen
    timeout: 30
max_attempts: 5
`
	jsonText := `{"endpoints": [{"name": "gpu0", "base_url": "http://gpu0:8000/v1", "model": "qwen", "api_key_env": "VLLM_KEY", "max_concurrency": 32, "timeout": "90s"},
	{"base_url": "http://gpu1:8000/v1", "model": "qwen", "timeout": 30}], "max_attempts": 5}`
	for name, text := range map[string]string{"yaml": yamlText, "json": jsonText} {
		t.Run(name, func(t *testing.T) {
			c, err := ParseConfig([]byte(text))
			if err != nil {
				t.Fatal(err)
			}
			c.Fill()
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if len(c.Endpoints) != 2 || c.MaxAttempts != 5 {
				t.Fatalf("got %d endpoints, %d attempts; want 2, 5", len(c.Endpoints), c.MaxAttempts)
			}
			e0, e1 := c.Endpoints[0], c.Endpoints[1]
			if e0.APIKeyEnv != "VLLM_KEY" || e0.MaxConcurrency != 32 || time.Duration(e0.Timeout) != 90*time.Second {
				t.Errorf("got endpoint 0 %+v", e0)
			}
			if e1.Name != "http://gpu1:8000/v1" || e1.MaxConcurrency != DefaultMaxConcurrency || time.Duration(e1.Timeout) != 30*time.Second {
				t.Errorf("got endpoint 1 %+v, want defaults filled", e1)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"unknown yaml field", "endpoints: []\nretries: 3\n", "retries"},
		{"unknown json field", `{"endpoints": [], "api_key": "sk-x"}`, "api_key"},
		{"no endpoints", "max_attempts: 2\n", "no endpoints"},
		{"bad url", "endpoints: [{base_url: 'gpu0:8000', model: m}]\n", "base_url"},
		{"no model", "endpoints: [{base_url: 'http://h/v1'}]\n", "no model"},
		{"key in env field", "endpoints: [{base_url: 'http://h/v1', model: m, api_key_env: 'sk key'}]\n", "api_key_env"},
		{"bad timeout", "endpoints: [{base_url: 'http://h/v1', model: m, timeout: soon}]\n", "soon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "remote.yaml")
			os.WriteFile(path, []byte(tt.text), 0o644)
			_, err := LoadConfig(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	f := newFake(t, func(int, map[string]any) fakeReply { return fakeReply{text: "ok"} })
	r, err := NewRegistry(Config{}, []Endpoint{{BaseURL: f.URL + "/v1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p1, err := r.Pool("llama")
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := r.Pool("llama")
	if p1 != p2 {
		t.Error("got two pools for one model, want one shared")
	}
	if p1.endpoints[0].cfg.Model != "llama" {
		t.Errorf("got model %q, want llama", p1.endpoints[0].cfg.Model)
	}
	t.Setenv(EnvConfig, "")
	t.Setenv(EnvBaseURL, "")
	if _, err := FromEnv(); err == nil {
		t.Error("got a registry from an empty environment")
	}
	t.Setenv(EnvBaseURL, f.URL+"/v1")
	if _, err := FromEnv(); err != nil {
		t.Errorf("got %v from OPENAI_BASE_URL", err)
	}
}
