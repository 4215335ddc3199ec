package dsn

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
)

// TestCauseKeepsHint: a hint that a wrapper appended after a network error
// (storetls.Explain's, when a server resets the connection before its TLS
// alert arrives) stays in the one line; what wrappers put before the cause
// does not.
func TestCauseKeepsHint(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"errno with a hint", fmt.Errorf("failed to connect to `host=127.0.0.1`: %w",
			fmt.Errorf("%w (the client certificate expired at 2026-11-26T07:41:00Z)", reset)),
			"connection reset by peer (the client certificate expired at 2026-11-26T07:41:00Z)"},
		{"errno alone", fmt.Errorf("dial: %w", reset), "connection reset by peer"},
		{"TLS alert", fmt.Errorf("x: %w", errors.New("remote error: tls: expired certificate")), "remote error: tls: expired certificate"},
		{"unknown with a hint", fmt.Errorf("%w (the driver's last log line: y)", errors.New("bad connection")), "bad connection (the driver's last log line: y)"},
	} {
		if got := Cause(c.err); got != c.want {
			t.Errorf("%s: Cause(%q) = %q; want %q", c.name, c.err, got, c.want)
		}
	}
}
