//go:build !unix

package public_test

import "time"

// cpuTime is not measured on this system.
func cpuTime() (time.Duration, bool) { return 0, false }
