package idgentest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
)

// counter issues 1, 2, 3, ... of idgen.Int64Scheme(). Its faults, for the
// suite to catch, are set by name.
type counter struct {
	n      atomic.Uint64
	fault  string
	mu     sync.Mutex
	closes int
	closed atomic.Bool
}

func (c *counter) Scheme() *idgen.Scheme { return idgen.Int64Scheme() }

func (c *counter) Next(ctx context.Context) (idgen.ID, error) {
	if c.fault == "cancel-error" && ctx.Err() != nil {
		return idgen.ID{}, errors.New("store unreachable")
	}
	if c.closed.Load() && c.fault != "open-after-close" {
		return idgen.ID{}, idgen.ErrClosed
	}
	return idgen.Int64Scheme().FromUint64(c.n.Add(1)), nil
}

var errClosed = errors.New("counter: closed")

func (c *counter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closes++
	c.closed.Store(true)
	switch {
	case c.fault == "close-error":
		return errors.New("flush failed")
	case c.closes > 1 && (c.fault == "close-twice" || c.fault == ""):
		return errClosed
	}
	return nil
}

// TestRun runs the suite on a sound generator, whose second Close returns
// a documented error: it passes, with one generator built per subtest.
func TestRun(t *testing.T) {
	if fault := os.Getenv("IDGENTEST_FAULT"); fault != "" {
		// The child of TestRunCatchesFaults: run on a faulty generator.
		idgentest.Run(t, func(*testing.T) idgen.Generator {
			if fault == "no-close" {
				return struct{ idgen.Generator }{&counter{}} // Next and Scheme only
			}
			return &counter{fault: fault}
		}, idgentest.Options{Goroutines: 2, PerGoroutine: 100})
		return
	}
	var built atomic.Int64
	idgentest.Run(t, func(*testing.T) idgen.Generator {
		built.Add(1)
		return &counter{}
	}, idgentest.Options{Goroutines: 2, PerGoroutine: 1000, CloseAgain: errClosed})
	if got := built.Load(); got != 5 {
		t.Fatalf("generators built = %d; want 5, one per subtest", got)
	}
}

// TestRunCatchesFaults runs the suite, in a child process, on generators
// with one fault each: it fails, naming the check; on one without Close it
// passes, skipping the Close subtest and saying why.
func TestRunCatchesFaults(t *testing.T) {
	for _, tc := range []struct{ fault, want string }{
		{"cancel-error", "Next(cancelled ctx) = "},
		{"close-error", "Close() = flush failed; want nil"},
		{"close-twice", "second Close() = counter: closed; want nil (Close idempotent)"},
		{"open-after-close", "Next() after Close = 2, <nil>; want an error wrapping idgen.ErrClosed"},
		{"no-close", "--- SKIP: TestRun/Close"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestRun$", "-test.v")
			cmd.Env = append(os.Environ(), "IDGENTEST_FAULT="+tc.fault)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if tc.fault == "no-close" { // passes, skipping Close and saying why
				if err != nil || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "is not an io.Closer: nothing to close") {
					t.Fatalf("suite on a generator without Close: %v; want a pass with Close skipped; output:\n%s", err, out)
				}
				return
			}
			if !errors.As(err, &exit) || !strings.Contains(string(out), tc.want) {
				t.Fatalf("suite on a generator with fault %s: %v; want a failure naming %q; output:\n%s", tc.fault, err, tc.want, out)
			}
		})
	}
}
