package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// An interrupted command exits 130 saying so, and a command that resumes
// says that the same command picks up where it stopped; one that does
// not resume promises nothing.
func TestInterruptSaysHowToResume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the interrupt, before anything ran
	for _, c := range []struct {
		args    []string
		resumes bool
	}{
		{[]string{"reproduce", "--task", "mathchat", "--preset", "tiny", "--out", filepath.Join(t.TempDir(), "run")}, true},
		{[]string{"eval", "--task", "mathchat", "--preset", "tiny", "--agent", "scripted:careful", "-n", "4"}, false},
	} {
		var stderr bytes.Buffer
		if code := execute(ctx, c.args, &stderr); code != 130 {
			t.Errorf("%s: exit %d, want 130; %s", c.args[0], code, stderr.String())
		}
		msg := stderr.String()
		if !strings.Contains(msg, "calibrl: interrupted") || strings.Contains(msg, "same command resumes") != c.resumes {
			t.Errorf("%s: %q: want it to say interrupted, and that it resumes: %v", c.args[0], msg, c.resumes)
		}
	}
}
