//go:build unix

package public_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the test process has used.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
