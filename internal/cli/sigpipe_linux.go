//go:build linux

package cli

import (
	"syscall"
	"unsafe"
)

// pollFd is struct pollfd of poll(2).
type pollFd struct {
	fd              int32
	events, revents int16
}

// The poll(2) events outputBroken asks for and reads.
const (
	pollOut = 0x4
	pollErr = 0x8
	pollHup = 0x10
)

// outputBroken reports whether the process's stdout or stderr is a pipe
// or socket whose reader is gone (poll reports POLLERR or POLLHUP), which
// is what a SIGPIPE for them means. It polls with ppoll(2) and a zero
// timeout, through package syscall (no golang.org/x/sys requirement).
func outputBroken() bool {
	fds := [2]pollFd{{fd: 1, events: pollOut}, {fd: 2, events: pollOut}}
	var zero syscall.Timespec
	_, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)),
		uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	if errno != 0 {
		return true
	}
	for _, f := range fds {
		if f.revents&(pollErr|pollHup) != 0 {
			return true
		}
	}
	return false
}
