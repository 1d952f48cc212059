package infile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO or a device is refused before it is opened (opening a FIFO with
// no writer would block), with an error naming it; a regular file reads.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, p := range []string{fifo, "/dev/zero"} {
		if _, err := Open(nil, p); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Errorf("Open(%s): %v, want ErrNotRegular naming it", p, err)
		}
	}
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("abc"), 0o644)
	if data, err := ReadFile(nil, file); err != nil || string(data) != "abc" {
		t.Errorf("ReadFile: %q, %v", data, err)
	}
}

// A read stops once the caller's context or the process's interrupt ends.
func TestReadStopsAtTheInterrupt(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, make([]byte, 3<<20), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	restore := SetInterrupt(ctx)
	defer restore()
	f, err := Open(nil, file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4<<20)
	if n, err := f.Read(buf); err != nil || n != 1<<20 {
		t.Fatalf("first read: %d, %v; want one chunk of %d", n, err, 1<<20)
	}
	cancel()
	if _, err := f.Read(buf); !errors.Is(err, context.Canceled) {
		t.Errorf("read after the interrupt: %v, want context.Canceled", err)
	}
}
