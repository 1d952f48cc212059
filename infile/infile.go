// Package infile opens the files calibrl reads from outside the process
// (episode and human logs, --data, tokenizers, endpoint configurations):
// regular files only, read so that an interrupt stops them.
//
// A FIFO, a device or a socket given where a file belongs is refused
// before it is read: reading /dev/zero or a pipe nobody writes never ends,
// and a hash of it means nothing. A read of a regular file checks, before
// each chunk, the process's interrupt (SetInterrupt: main's SIGINT and
// SIGTERM context) and the context the caller gives, so that hashing a
// 30 GB --data stops within a chunk of the signal, as everything else does.
package infile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
)

// ErrNotRegular is the error for a path that is neither a regular file
// nor a folder: a FIFO, a device, a socket.
var ErrNotRegular = errors.New("not a regular file (a FIFO, device or socket never ends or cannot be re-read): give a file")

// interrupt is the process's stop: the signal context main sets, which
// every read checks even where the caller has no context to give (the
// task name lookups that re-hash --data). Process-wide, as signals are.
var interrupt = struct {
	sync.Mutex
	ctx context.Context
}{ctx: context.Background()}

// SetInterrupt makes ctx the process's interrupt: once it ends, every read
// through this package fails with its error (context.Canceled). It
// returns a func that restores the previous one (for tests).
func SetInterrupt(ctx context.Context) (restore func()) {
	interrupt.Lock()
	prev := interrupt.ctx
	interrupt.ctx = ctx
	interrupt.Unlock()
	return func() {
		interrupt.Lock()
		interrupt.ctx = prev
		interrupt.Unlock()
	}
}

func interrupted() error {
	interrupt.Lock()
	ctx := interrupt.ctx
	interrupt.Unlock()
	return ctx.Err()
}

// Check stats path and refuses what is not a regular file or a folder,
// the error naming the path. Symlinks are followed.
func Check(path string) (fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	return st, nil
}

// File is an open regular file whose reads stop at an interrupt.
type File struct {
	*os.File
	ctx context.Context
}

// Open opens the regular file at path for reading under ctx (nil: the
// process's interrupt alone). A FIFO or device is refused without being
// opened (opening a FIFO blocks until a writer comes); a folder too.
func Open(ctx context.Context, path string) (*File, error) {
	st, err := Check(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a folder, want a file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// The path may have been swapped for a FIFO between the stat and the
	// open; the open file itself is what is read.
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = ErrNotRegular
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return &File{File: f, ctx: ctx}, nil
}

// chunk bounds one read, so a stop is seen at least every chunk (1 MiB
// reads at well over 100 MB/s: a few ms).
const chunk = 1 << 20

// Read reads up to len(p) bytes, at most a chunk, failing once the
// caller's context or the process's interrupt has ended.
func (f *File) Read(p []byte) (int, error) {
	if err := f.stopped(); err != nil {
		return 0, err
	}
	if len(p) > chunk {
		p = p[:chunk]
	}
	return f.File.Read(p)
}

// WriteTo copies the file to w chunk by chunk through Read, so that
// io.Copy (which would use the os.File's own WriteTo, sendfile or splice,
// in one uninterruptible call) stops at an interrupt too.
func (f *File) WriteTo(w io.Writer) (int64, error) {
	return io.Copy(w, struct{ io.Reader }{f})
}

func (f *File) stopped() error {
	if err := f.ctx.Err(); err != nil {
		return err
	}
	return interrupted()
}

// ReadFile reads the regular file at path whole, as os.ReadFile does,
// under ctx and the process's interrupt.
func ReadFile(ctx context.Context, path string) ([]byte, error) {
	f, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
