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
		i := strings.LastIndex(name, ".tmp-")
		if i <= 1 || !stale(name[i+len(".tmp-"):], e) {
			continue
		}
		errs = append(errs, os.RemoveAll(path))
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
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
