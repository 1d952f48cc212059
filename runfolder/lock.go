package runfolder

// One writer per run folder: Open takes the folder's lock, Close gives it
// back. Two processes writing one folder would each run every stage and
// append every record twice (metrics.jsonl twice as long), so the second
// is refused, naming the first's pid. The lock is the kernel's (flock on
// the file LockFile), so a writer killed with SIGKILL holds it no more and
// the next run takes the folder over; the file is removed at Close.
// Within one process a folder may be opened again (a pool reads the
// pipelines it has just run): the opens share the lock, released by the
// last Close.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// LockFile holds the pid of the process writing the folder.
const LockFile = "lock"

// ErrLocked is Open's error for a folder another process is writing.
var ErrLocked = errors.New("run folder in use")

// held are this process's locks, by folder, with how many Opens share
// each.
var held = struct {
	sync.Mutex
	m map[string]*heldLock
}{m: map[string]*heldLock{}}

type heldLock struct {
	n    int
	file *os.File
}

// lockKey is the folder's path as the lock registry keys it: absolute,
// with symlinks resolved, so two spellings of one folder share its lock.
func lockKey(dir string) (string, error) {
	p, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// acquire takes dir's lock for this process (dir exists).
func acquire(dir string) (key string, err error) {
	key, err = lockKey(dir)
	if err != nil {
		return "", fmt.Errorf("run folder: %w", err)
	}
	held.Lock()
	defer held.Unlock()
	if h, ok := held.m[key]; ok {
		h.n++
		return key, nil
	}
	f, err := lockFile(filepath.Join(key, LockFile))
	if err != nil {
		return "", fmt.Errorf("run folder %s: %w", dir, err)
	}
	held.m[key] = &heldLock{n: 1, file: f}
	return key, nil
}

// release gives back one share of the lock acquire took; the last removes
// the file and unlocks it.
func release(key string) error {
	held.Lock()
	defer held.Unlock()
	h, ok := held.m[key]
	if !ok {
		return nil
	}
	if h.n--; h.n > 0 {
		return nil
	}
	delete(held.m, key)
	if h.file == nil {
		return nil
	}
	// Removed while still locked: a process waiting on it finds the path
	// gone or another file there, and locks that one (lockFile).
	err := os.Remove(h.file.Name())
	if cerr := h.file.Close(); err == nil {
		err = cerr
	}
	return err
}

// lockedErr names the holder of the lock at path, read from the file.
func lockedErr(path string) error {
	data, _ := os.ReadFile(path)
	pid := string(data)
	for len(pid) > 0 && (pid[len(pid)-1] == '\n' || pid[len(pid)-1] == ' ') {
		pid = pid[:len(pid)-1]
	}
	if pid == "" {
		pid = "unknown"
	}
	return fmt.Errorf("%w: process %s is writing it (%s); a second run on it would redo its stages: wait for that one, or use another --out", ErrLocked, pid, path)
}
