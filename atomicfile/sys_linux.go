package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the folders a and b in one step. It reports false, and
// no error, where the file system cannot.
func exchange(a, b string) (bool, error) {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ENOTSUP) {
		return false, nil
	}
	return err == nil, err
}
