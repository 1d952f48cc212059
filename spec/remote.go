package spec

import (
	"fmt"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/remote"
)

// RemoteAgent builds the agent of spec "remote:MODEL" from reg, the
// endpoints a command was configured with. A nil reg is built from the
// environment (remote.FromEnv: CALIBRL_REMOTE_CONFIG or OPENAI_BASE_URL).
func RemoteAgent(reg *remote.Registry, s string) (*remote.Agent, error) {
	p, err := remotePool(reg, s)
	if err != nil {
		return nil, fmt.Errorf("agent %q: %w", s, err)
	}
	return remote.NewAgent(p), nil
}

// RemoteUser builds the LLM user of spec "remote:MODEL", role-played from
// the oracle context (remote.UserSystemPrompt).
func RemoteUser(reg *remote.Registry, s string) (*remote.User, error) {
	p, err := remotePool(reg, s)
	if err != nil {
		return nil, fmt.Errorf("user %q: %w", s, err)
	}
	return remote.NewUser(p), nil
}

// IsRemote reports whether s names a remote model ("remote:MODEL").
func IsRemote(s string) bool { return strings.HasPrefix(s, "remote:") }

func remotePool(reg *remote.Registry, s string) (*remote.Pool, error) {
	model, ok := strings.CutPrefix(s, "remote:")
	if !ok || model == "" {
		return nil, fmt.Errorf("want remote:MODEL")
	}
	if reg == nil {
		var err error
		if reg, err = remote.FromEnv(); err != nil {
			return nil, err
		}
	}
	return reg.Pool(model)
}

// remoteAgent and remoteUser keep Agent and User's remote cases one line.
func remoteAgent(s string) (dialog.Agent, error) { return RemoteAgent(nil, s) }
func remoteUser(s string) (dialog.User, error)   { return RemoteUser(nil, s) }
