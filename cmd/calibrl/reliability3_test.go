package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An output path that is one of the command's inputs, however spelled
// (the same path, a symlink to it, a path through ".."), is refused
// before anything is written: the input is left byte for byte.
func TestOutputThatIsAnInputRefused(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.jsonl")
	mustRun(t, "collect", "-n", "2", "--out", logs)
	orig, err := os.ReadFile(logs)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(logs, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	dotdot := filepath.Join(sub, "..", "logs.jsonl")
	conv := []string{"--task", "mathchat", "--instruction", "oracle.instruction", "--ground-truth", "oracle.truth", "--end", "solved"}
	for _, args := range [][]string{
		{"export", "--logs", logs, "--out", logs},
		{"export", "--logs", logs, "--out", link},
		{"export", "--logs", link, "-o", dotdot},
		append([]string{"convert-logs", "--in", logs, "-o", logs}, conv...),
		append([]string{"convert-logs", "--in", dotdot, "--out", link}, conv...),
		{"collect", "-n", "1", "--data", "../../task/testdata/gsm8k/train.jsonl", "--out", "../../task/testdata/gsm8k/train.jsonl"},
		{"train-policy", "--algo", "sft", "--preset", "tiny", "--logs", logs, "--out", filepath.Join(dir, "base"), "--metrics", link},
		{"report", dir, "--out", logs},
	} {
		out, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), "input itself") && !strings.Contains(err.Error(), "file of the run folder") {
			t.Errorf("calibrl %s: %v (%s), want a refusal naming the input", strings.Join(args, " "), err, out)
		}
		if got, _ := os.ReadFile(logs); !bytes.Equal(got, orig) {
			t.Fatalf("calibrl %s changed the input", strings.Join(args, " "))
		}
	}
}

// interruptible runs the command under a context cancelled after 300 ms
// and fails unless it returns within done of the start; a command that
// does not return in 5 s is reported (and the FIFO, if any, unblocked).
func interruptible(t *testing.T, done time.Duration, fifo string, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	ch := make(chan error, 1)
	go func() { ch <- runCtx(ctx, args...) }()
	select {
	case err := <-ch:
		if took := time.Since(start); took > done {
			t.Errorf("calibrl %s: returned %v after %v, want within %v", strings.Join(args, " "), err, took, done)
		}
		return err
	case <-time.After(5 * time.Second):
		t.Errorf("calibrl %s: still reading 5 s after the start (the interrupt came at 0.3 s)", strings.Join(args, " "))
		if fifo != "" {
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				f.Close() // the blocked reader sees EOF
			}
		}
		return <-ch
	}
}

// A FIFO or a device given as input is refused at once with an error
// naming it, in every command that reads one, and hashing a huge --data
// stops within a second of the interrupt.
func TestFIFOsDevicesAndHugeInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	out := filepath.Join(dir, "out.jsonl")
	for _, c := range []struct {
		path string
		args []string
	}{
		{"/dev/zero", []string{"collect", "-n", "1", "--data", "/dev/zero", "--out", out}},
		{fifo, []string{"collect", "-n", "1", "--data", fifo, "--out", out}},
		{fifo, []string{"train-sim", "--preset", "tiny", "--logs", fifo, "--out", filepath.Join(dir, "sim")}},
		{fifo, []string{"export", "--logs", fifo, "--out", out}},
		{fifo, []string{"convert-logs", "--in", fifo, "--out", out, "--instruction", "q", "--ground-truth", "a", "--end", "solved"}},
	} {
		err := interruptible(t, time.Second, fifo, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("calibrl %s: %v, want a refusal naming %s as not a regular file", strings.Join(c.args, " "), err, c.path)
		}
	}
	// A 16 GB (sparse) --data takes seconds to hash: the interrupt at 0.3
	// s stops it within a second, exit status 130 (context.Canceled).
	huge := filepath.Join(dir, "huge.jsonl")
	if err := os.Truncate(huge, 0); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Truncate(huge, 16<<30); err != nil {
		t.Skip("no sparse files here:", err)
	}
	err = interruptible(t, 1300*time.Millisecond, "", "collect", "-n", "1", "--data", huge, "--out", out)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted hashing: %v, want context.Canceled", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an interrupted collect wrote its output")
	}
}

// A secret pasted where its variable's name belongs is never printed,
// whatever its shape: short and name-shaped ones included. The error
// names the flag and says a variable's name was expected.
func TestSecretFlagsNeverEchoTheValue(t *testing.T) {
	for _, secret := range []string{"hunter2", "a3f9a1c0e5b7d246", "Xk3pL9mQ2rT7vW1z", "glpat_x8Kd2mQ9pL", "sk-proj-abc123"} {
		for _, args := range [][]string{
			{"serve", "--addr", "127.0.0.1:0", "--token-env", secret},
			{"serve", "--addr", "127.0.0.1:0", "--remote-url", "http://127.0.0.1:9/v1", "--remote-key-env", secret},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			root := newRootCmd()
			var printed bytes.Buffer
			root.SetOut(&printed)
			root.SetErr(&printed)
			root.SetArgs(args)
			err := root.ExecuteContext(ctx)
			cancel()
			flag := args[len(args)-2]
			if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(printed.String(), secret) ||
				!strings.Contains(err.Error(), flag) || !strings.Contains(err.Error(), "environment variable") {
				t.Errorf("%s %s: %v (printed %q); want an error naming %s and asking for a variable's name, without the value", flag, secret, err, printed.String(), flag)
			}
		}
	}
}

// Own episode logs are checked like human logs: an unknown task, or data
// named by a path alone (which would make the trainer read that file),
// stops export and train-sim at the file, line and field.
func TestEpisodeLogTaskChecked(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.jsonl")
	mustRun(t, "collect", "-n", "2", "--out", logs)
	data, err := os.ReadFile(logs)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"nosuch", "mathchat:data=/etc/passwd"} {
		path := filepath.Join(dir, "bad.jsonl")
		if err := os.WriteFile(path, bytes.ReplaceAll(data, []byte(`"task":"mathchat"`), []byte(`"task":"`+bad+`"`)), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"export", "--logs", path, "--out", filepath.Join(dir, "sim.jsonl")},
			{"train-sim", "--preset", "tiny", "--steps", "1", "--logs", path, "--out", filepath.Join(dir, "sim")},
		} {
			_, err := run(t, args...)
			if err == nil || !strings.Contains(err.Error(), path+":1") || !strings.Contains(err.Error(), `"task"`) {
				t.Errorf("%s with task %q: %v, want an error naming %s:1 and field \"task\"", args[0], bad, err, path)
			}
		}
	}
}
