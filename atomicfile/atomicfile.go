// Package atomicfile writes files and folders so that a reader sees either
// the old content or the whole new content, never a partial one: the data
// goes to a temporary file (or folder) beside the destination, is synced,
// and is renamed over the destination. An interrupted write leaves at most
// a temporary name, which Clean removes once its writer is gone.
//
// Temporary names are ".<base>.tmp-<pid>-<random>": the writer's process
// id lets Clean tell the leftovers of a killed process from the files a
// live one is still writing. Every write first removes the leftovers of
// killed writes of its own destination; Clean and CleanTree sweep a
// folder.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// tempPattern is the os.CreateTemp / os.MkdirTemp pattern for a temporary
// beside path.
func tempPattern(path string) string {
	return "." + filepath.Base(path) + ".tmp-" + strconv.Itoa(os.Getpid()) + "-*"
}

// Write creates or replaces path with what fill writes. If fill returns an
// error the destination is untouched and the temporary file is removed.
func Write(path string, fill func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := cleanFor(path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err = fill(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteBytes is Write for content already in memory.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
