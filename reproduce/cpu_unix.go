//go:build unix

package reproduce

import (
	"syscall"
	"time"
)

// processCPU is the process's user and system CPU time so far (0 when
// the system will not say).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
