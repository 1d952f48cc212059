//go:build !unix

package atomicfile

// alive cannot be told here: every writer counts as running, and only
// Clean's age rule for nameless temporaries applies.
func alive(pid int) bool { return true }

// Folders cannot be synced on Windows.
func isDirSyncUnsupported(err error) bool { return true }
