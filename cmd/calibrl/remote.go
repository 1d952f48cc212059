package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/remote"
	"github.com/calibrl/calibrl/secretenv"
)

// remoteFlags configure the OpenAI-compatible endpoints behind remote:MODEL
// agents and users. API keys come only from the environment: the flags
// name the variable, never the key.
type remoteFlags struct {
	config      string
	urls        []string
	keyEnv      string
	concurrency int
	timeout     time.Duration
}

func (f *remoteFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.config, "remote-config", "", "endpoints of remote:MODEL agents and users, a YAML or JSON file (default: $"+remote.EnvConfig+", else $"+remote.EnvBaseURL+")")
	fl.StringSliceVar(&f.urls, "remote-url", nil, "OpenAI-compatible base URL(s) serving any remote:MODEL; several fan out (e.g. http://gpu0:8000/v1,http://gpu1:8000/v1)")
	fl.StringVar(&f.keyEnv, "remote-key-env", "", "name of the environment variable holding the --remote-url servers' API key")
	fl.IntVar(&f.concurrency, "remote-concurrency", remote.DefaultMaxConcurrency, "requests in flight per --remote-url server")
	fl.DurationVar(&f.timeout, "remote-timeout", remote.DefaultTimeout, "timeout of one request attempt to a --remote-url server")
}

// registry builds the endpoints the flags name, or from the environment
// when no flag is set. It returns nil and no error when nothing is
// configured at all: only remote:MODEL specs need endpoints.
func (f *remoteFlags) registry() (*remote.Registry, error) {
	if f.config == "" && len(f.urls) == 0 {
		if os.Getenv(remote.EnvConfig) == "" && os.Getenv(remote.EnvBaseURL) == "" {
			return nil, nil
		}
		return remote.FromEnv()
	}
	if f.keyEnv != "" {
		// Refused here, naming the flag, rather than deep in an endpoint's
		// construction; the value is never shown (secretenv.Read).
		if _, err := secretenv.Read(f.keyEnv); err != nil {
			return nil, fmt.Errorf("--remote-key-env: %w", err)
		}
	}
	cfg := remote.DefaultConfig()
	if f.config != "" {
		var err error
		if cfg, err = remote.LoadConfig(f.config); err != nil {
			return nil, fmt.Errorf("--remote-config: %w", err)
		}
	}
	var any []remote.Endpoint
	for _, u := range f.urls {
		any = append(any, remote.Endpoint{BaseURL: u, APIKeyEnv: f.keyEnv, MaxConcurrency: f.concurrency, Timeout: remote.Duration(f.timeout)})
	}
	reg, err := remote.NewRegistry(cfg, any, nil)
	if err != nil {
		return nil, fmt.Errorf("--remote-url: %w", err)
	}
	return reg, nil
}
