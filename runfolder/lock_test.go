//go:build unix

package runfolder

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary play a second writer: with
// CALIBRL_RUNFOLDER_HOLD set it opens that folder, says so, and waits to
// be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("CALIBRL_RUNFOLDER_HOLD"); dir != "" {
		f, err := Open(dir)
		if err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
			os.Exit(2)
		}
		os.Stdout.WriteString("holding\n")
		time.Sleep(time.Minute)
		f.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holder starts a process that holds dir open, waiting until it has.
func holder(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CALIBRL_RUNFOLDER_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "holding\n" {
		t.Fatalf("holder: %q", line)
	}
	return cmd
}

// One writer per run folder: a second process is refused, naming the
// holder's pid; the lock goes at Close (its file too), and a holder killed
// with SIGKILL leaves a lock the next writer takes over.
func TestOneWriterPerFolder(t *testing.T) {
	dir := t.TempDir()
	h := holder(t, dir)
	_, err := Open(dir)
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(h.Process.Pid)) {
		t.Fatalf("Open of a folder process %d writes: %v, want an error naming its pid", h.Process.Pid, err)
	}
	// SIGKILL: nothing of the holder runs again, its lock file stays.
	h.Process.Signal(syscall.SIGKILL)
	h.Wait()
	if _, err := os.Stat(filepath.Join(dir, "lock")); err != nil {
		t.Fatalf("the killed holder's lock file: %v", err)
	}
	f, err := Open(dir)
	if err != nil {
		t.Fatalf("Open after the holder was killed: %v, want the stale lock taken over", err)
	}
	// Within the process a folder opens again (a pool reading the runs it
	// has just made); the lock holds until the last Close.
	g, err := Open(dir)
	if err != nil {
		t.Fatalf("a second Open in the same process: %v", err)
	}
	g.Close()
	if data, err := os.ReadFile(filepath.Join(dir, "lock")); err != nil || strings.TrimSpace(string(data)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("lock after one of two Closes: %q, %v; want this pid", data, err)
	}
	f.Close()
	if _, err := os.Stat(filepath.Join(dir, "lock")); !os.IsNotExist(err) {
		t.Fatalf("lock after Close: %v, want it removed", err)
	}
	// Released, another process may write it.
	holder(t, dir)
}
