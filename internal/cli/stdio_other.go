//go:build !unix

package cli

// stdioGone reports true: without poll, every SIGPIPE stops the command.
func stdioGone() bool { return true }
