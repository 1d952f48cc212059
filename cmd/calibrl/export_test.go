package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/export"
)

// export streams the log into the file the whole-slice writer makes from
// the loaded episodes, and an interrupted export (SIGINT, SIGTERM: exit
// status 130) leaves no file.
func TestExportStreamsTheWholeSliceFile(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.jsonl")
	mustRun(t, "collect", "--task", "mathchat", "--agent", "scripted:careful,guesser", "-n", "60", "--seed", "6", "--out", logs)
	eps, err := dialog.LoadEpisodes(logs)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{export.FormatChatJSONL, export.FormatParquet} {
		opt := export.Options{Kind: export.KindRollouts, Format: format, SuccessOnly: true}
		want := filepath.Join(dir, "want."+format)
		if _, err := export.Write(want, eps, opt); err != nil {
			t.Fatal(err)
		}
		got := filepath.Join(dir, "got."+format)
		mustRun(t, "export", "--logs", logs, "--kind", "rollouts", "--success-only", "--format", format, "--out", got)
		a, _ := os.ReadFile(got)
		b, _ := os.ReadFile(want)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: export wrote %d bytes, the whole-slice writer %d", format, len(a), len(b))
		}

		out := filepath.Join(dir, "interrupted", "x."+format)
		os.MkdirAll(filepath.Dir(out), 0o755)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := runCtx(ctx, "export", "--logs", logs, "--kind", "rollouts", "--format", format, "--out", out)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want context.Canceled (exit status 130)", format, err)
		}
		if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
			t.Errorf("%s: an interrupted export left %v", format, entries)
		}
	}
}
