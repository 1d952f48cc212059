package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// An episode log with a record no trainer may read (no oracle context, a
// role that is no role) is refused by every command that reads logs, with
// its file, line and field; before, these exited 0 and wrote rows with an
// empty goal and ground truth, or a "robot" turn into policy SFT data.
func TestCommandsRefuseInvalidEpisodeLogs(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.jsonl")
	mustRun(t, "collect", "--task", "mathchat:easy", "--agent", "scripted:careful", "-n", "3", "--seed", "2", "--out", logs)
	data, err := os.ReadFile(logs)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	edit := func(name string, f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		out := append(append([]string{}, lines...), "")
		out[1] = string(b)
		path := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	role := func(r string) func(m map[string]any) {
		return func(m map[string]any) { m["messages"].([]any)[1].(map[string]any)["role"] = r }
	}
	for _, c := range []struct {
		path, field string
	}{
		{edit("no-oracle", func(m map[string]any) { delete(m, "oracle") }), `field "oracle": missing`},
		{edit("robot", role("robot")), `field "messages[1].role": "robot"`},
		{edit("root", role("root")), `field "messages[1].role": "root"`},
	} {
		want := c.path + ":2: " + c.field
		for _, args := range [][]string{
			{"export", "--logs", c.path, "--kind", "sim", "--format", "chat-jsonl", "--out", filepath.Join(dir, "sim.jsonl")},
			{"export", "--logs", c.path, "--kind", "policy", "--format", "chat-jsonl", "--out", filepath.Join(dir, "policy.jsonl")},
			{"train-sim", "--logs", c.path, "--out", filepath.Join(dir, "sim"), "--preset", "tiny", "--steps", "1"},
			{"train-policy", "--algo", "sft", "--logs", c.path, "--out", filepath.Join(dir, "pol"), "--preset", "tiny", "--steps", "1"},
		} {
			_, err := run(t, args...)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %s: %v, want an error containing %q", args[0], filepath.Base(c.path), err, want)
			}
		}
	}
}
