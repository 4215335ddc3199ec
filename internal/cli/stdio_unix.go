//go:build unix

package cli

import "golang.org/x/sys/unix"

// stdioGone reports whether the reader of stdout or stderr has gone away:
// poll reports an error or a hang-up on the write end of a pipe or socket
// whose other end is closed, never on a file or a terminal.
func stdioGone() bool {
	fds := []unix.PollFd{{Fd: 1}, {Fd: 2}}
	n, err := unix.Poll(fds, 0)
	if err != nil || n == 0 {
		return false
	}
	for _, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}
