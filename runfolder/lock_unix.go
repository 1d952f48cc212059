//go:build unix

package runfolder

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// lockFile opens and locks the file at path, exclusively, without waiting,
// and writes this process's pid into it. The kernel drops the lock when
// the process dies, however it dies.
func lockFile(path string) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, lockedErr(path)
			}
			return nil, err
		}
		// The holder before may have removed the file after we opened it:
		// then the lock is on a file nobody else sees; take the path's.
		fst, err1 := f.Stat()
		pst, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(fst, pst) {
			f.Close()
			continue
		}
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
		if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
}
