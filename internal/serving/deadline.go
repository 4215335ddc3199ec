package serving

import (
	"context"
	"sync"
	"time"
)

// A Deadline is a request's context bounded by a deadline whose timer is
// made only when the generator first asks for Done or Err: the paths that
// never wait (a Snowflake sequence number, a segment ID from memory) cost
// no timer, no channel and no cancel propagation. Once made, it behaves as
// context.WithDeadline(parent, deadline). A server keeps one in each
// pooled request state, so that it costs no allocation either: Reset
// readies it for the next use once Release has ended the last. Its zero
// value is ready for Reset.
type Deadline struct {
	context.Context // the parent: Value, and Deadline when it is earlier
	deadline        time.Time

	mu       sync.Mutex
	released bool
	timed    context.Context
	cancel   context.CancelFunc
}

// NewDeadline returns a Deadline of parent until d.
func NewDeadline(parent context.Context, d time.Time) *Deadline {
	c := new(Deadline)
	c.Reset(parent, d)
	return c
}

// Reset makes c a fresh lazy context of parent until d; c must be
// released (or new).
func (c *Deadline) Reset(parent context.Context, d time.Time) {
	c.Context, c.deadline, c.released, c.timed, c.cancel = parent, d, false, nil, nil
}

// timedCtx returns the context with the timer, making it on the first
// call; nil once released before any call.
func (c *Deadline) timedCtx() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timed == nil && !c.released {
		c.timed, c.cancel = context.WithDeadline(c.Context, c.deadline)
	}
	return c.timed
}

func (c *Deadline) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *Deadline) Done() <-chan struct{} {
	if t := c.timedCtx(); t != nil {
		return t.Done()
	}
	return closedCh // released before anyone asked
}

func (c *Deadline) Err() error {
	if t := c.timedCtx(); t != nil {
		return t.Err()
	}
	return context.Canceled
}

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Release stops the timer, if one was made; a context released before its
// first Done or Err is canceled from then on.
func (c *Deadline) Release() {
	c.mu.Lock()
	c.released = true
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
}
