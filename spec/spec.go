// Package spec turns the agent and user names used on the command line
// ("scripted:careful", "human", "naive", ...) into the objects that play
// them, so every command reads them the same way.
package spec

import (
	"fmt"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
)

// Agent builds the agent named by s for task t.
//
//	scripted:PROFILE   one of the task's scripted reference agents
func Agent(t task.Task, s string) (dialog.Agent, error) {
	kind, arg, _ := strings.Cut(s, ":")
	switch kind {
	case "scripted":
		if arg == "" {
			return nil, fmt.Errorf("agent %q: name a profile, e.g. scripted:%s (profiles: %s)", s, first(t.Profiles()), strings.Join(t.Profiles(), ", "))
		}
		a, err := t.Agent(arg)
		if err != nil {
			return nil, fmt.Errorf("agent %q: %w", s, err)
		}
		return a, nil
	}
	return nil, fmt.Errorf("unknown agent %q (want scripted:PROFILE with a profile of %s: %s)", s, t.Name(), strings.Join(t.Profiles(), ", "))
}

// Agents splits a comma-separated list of agent names.
func Agents(s string) []string {
	var names []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// User builds the user named by s for task t.
//
//	human   the task's held-out proxy of a real person
//	naive   the task's prompted-style simulator with its artifacts
func User(t task.Task, s string) (dialog.User, error) {
	switch s {
	case "human", "naive":
		u, err := t.User(s)
		if err != nil {
			return nil, fmt.Errorf("user %q: %w", s, err)
		}
		return u, nil
	}
	return nil, fmt.Errorf("unknown user %q (want human or naive)", s)
}

func first(xs []string) string {
	if len(xs) == 0 {
		return "PROFILE"
	}
	return xs[0]
}
