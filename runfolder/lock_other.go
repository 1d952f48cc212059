//go:build !unix

package runfolder

import "os"

// lockFile takes no lock where flock is missing: one writer per folder is
// then the user's to keep.
func lockFile(path string) (*os.File, error) { return nil, nil }
