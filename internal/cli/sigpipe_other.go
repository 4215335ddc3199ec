//go:build !linux

package cli

// outputBroken: without ppoll (off Linux), every SIGPIPE counts as stdout's.
func outputBroken() bool { return true }
