//go:build !unix

package cli

// outputBroken: without poll, every SIGPIPE counts as stdout's.
func outputBroken() bool { return true }
