package spec

import (
	"strings"
	"testing"

	"github.com/calibrl/calibrl/task"
)

func TestNamesBuildOrExplain(t *testing.T) {
	tk, err := task.Lookup("mathchat")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tk.Profiles() {
		if _, err := Agent(tk, "scripted:"+p); err != nil {
			t.Errorf("scripted:%s: %v", p, err)
		}
	}
	for _, u := range []string{"human", "naive"} {
		if _, err := User(tk, u); err != nil {
			t.Errorf("user %s: %v", u, err)
		}
	}
	bad := []struct {
		agent bool
		name  string
		want  string
	}{
		{true, "scripted:", "name a profile"},
		{true, "scripted:wizard", "wizard"},
		{true, "robot", "unknown agent"},
		{true, "lm:", "name the checkpoint folder"},
		{true, "lm:/nonexistent/x", "/nonexistent/x"},
		{false, "human:extra", "unknown user"},
		{false, "learned:", "name the checkpoint folder"},
		{false, "alien", "unknown user"},
	}
	for _, b := range bad {
		var err error
		if b.agent {
			_, err = Agent(tk, b.name)
		} else {
			_, err = User(tk, b.name)
		}
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: got %v, want an error containing %q", b.name, err, b.want)
		}
	}
	if got := Agents(" scripted:a, b ,,c"); strings.Join(got, "|") != "scripted:a|b|c" {
		t.Errorf("Agents split = %v", got)
	}
}
