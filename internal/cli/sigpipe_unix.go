//go:build unix

package cli

import "golang.org/x/sys/unix"

// outputBroken reports whether the process's stdout or stderr is a pipe
// or socket whose reader is gone (poll reports POLLERR or POLLHUP), which
// is what a SIGPIPE for them means.
func outputBroken() bool {
	fds := []unix.PollFd{{Fd: 1, Events: unix.POLLOUT}, {Fd: 2, Events: unix.POLLOUT}}
	if _, err := unix.Poll(fds, 0); err != nil {
		return true
	}
	for _, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}
