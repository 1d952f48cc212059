package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteDir creates or replaces the folder dir with what fill writes into
// the fresh folder it is given. The new folder becomes visible all at once:
// until WriteDir returns, dir holds its old content in full, and after it
// returns, the new content in full, whenever the process is killed. On
// Linux the swap is one renameat2(RENAME_EXCHANGE); elsewhere, or on a file
// system without it, the old folder is first renamed aside, and Clean
// (which also runs at the start of every WriteDir) puts it back if the
// process died in between. If fill fails, dir is untouched.
//
// dir is wholly the new content: whatever it held is gone afterwards.
func WriteDir(dir string, fill func(tmp string) error) (err error) {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	if _, err := Clean(parent); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, tempPattern(dir))
	if err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	if err := fill(tmp); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	if err := syncTree(tmp); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	if err := replaceDir(tmp, dir); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	return syncDir(parent)
}

// replaceDir moves the complete folder tmp to dir.
func replaceDir(tmp, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(tmp, dir)
	}
	if exchanged, err := exchangeDir(tmp, dir); err != nil {
		return err
	} else if exchanged {
		// tmp now holds the old content; dir was never missing.
		return os.RemoveAll(tmp)
	}
	// No atomic exchange: move the old folder aside under a name Clean
	// recognises, then the new one in. A kill between the renames leaves
	// only the old folder, which Clean renames back.
	old := filepath.Join(filepath.Dir(dir), oldName(dir))
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.Rename(old, dir)
		return err
	}
	return os.RemoveAll(old)
}

func oldName(dir string) string { return "." + filepath.Base(dir) + ".old" }

// syncTree fsyncs every file and folder under root, deepest first, so that
// the rename that publishes root publishes data that is on disk.
func syncTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return syncPath(path)
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syncDir(dirs[i]); err != nil {
			return err
		}
	}
	return nil
}

func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a folder's entries durable. Some systems cannot fsync a
// folder; that is not an error there.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) && !isDirSyncUnsupported(err) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// exchangeDir is exchange, replaceable in tests to take the fallback path.
var exchangeDir = exchange
