package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// legacyAge is how old a temporary without a process id (written before
// names carried one) must be before Clean takes it for a leftover.
const legacyAge = time.Hour

// Clean removes, directly under dir, the temporary files and folders that
// Write and WriteDir of processes no longer running left behind, and
// finishes a folder swap that a killed WriteDir left half done. It returns
// the names it removed. Temporaries of this process and of live ones are
// kept, so Clean is safe while other writers work in dir. A missing dir
// is clean.
func Clean(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		if base, ok := strings.CutSuffix(name[1:], ".old"); ok && base != "" && e.IsDir() {
			// A swap without RENAME_EXCHANGE died between its renames:
			// the old folder is whole; the new one never got in place.
			target := filepath.Join(dir, base)
			if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, os.Rename(path, target))
			} else {
				errs = append(errs, os.RemoveAll(path))
				removed = append(removed, name)
			}
			continue
		}
		if !leftover(name, e) {
			continue
		}
		errs = append(errs, os.RemoveAll(path))
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}

// leftover reports whether the entry name is a temporary of Write or
// WriteDir whose writer is gone.
func leftover(name string, e fs.DirEntry) bool {
	i := strings.LastIndex(name, ".tmp-")
	return i > 1 && strings.HasPrefix(name, ".") && stale(name[i+len(".tmp-"):], e)
}

// cleanFor removes the temporaries that killed writers of path left
// beside it: a write sweeps what an interrupted write of the same file
// left, wherever that file is, so no leftover outlives the next run that
// writes it (a killed 'collect -n 1000000' left a 12.8 MB one for good).
func cleanFor(path string) error {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)+".tmp-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // the write itself reports an unusable folder
	}
	var errs []error
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, prefix) && leftover(name, e) {
			errs = append(errs, os.RemoveAll(filepath.Join(dir, name)))
		}
	}
	return errors.Join(errs...)
}

// CleanTree is Clean of root and of every folder under it, for a run
// folder whose stages write into sub-folders of their own. It returns the
// removed paths relative to root.
func CleanTree(root string) ([]string, error) {
	var removed []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || !d.IsDir() {
			return err
		}
		names, err := Clean(path)
		for _, n := range names {
			rel, _ := filepath.Rel(root, filepath.Join(path, n))
			removed = append(removed, rel)
		}
		return err
	})
	return removed, err
}

// stale reports whether a temporary whose name ends in suffix ("<pid>-<random>",
// or a bare random number from before names carried a pid) belongs to no
// running writer.
func stale(suffix string, e fs.DirEntry) bool {
	pidText, _, withPID := strings.Cut(suffix, "-")
	pid, err := strconv.Atoi(pidText)
	if withPID && err == nil && pid > 0 {
		return pid != os.Getpid() && !alive(pid)
	}
	info, err := e.Info()
	return err == nil && time.Since(info.ModTime()) > legacyAge
}
