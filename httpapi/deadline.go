package httpapi

import (
	"context"
	"sync"
	"time"
)

// deadlineCtx is a request's context bounded by a deadline whose timer is
// made only when the generator first asks for Done or Err: the paths that
// never wait (a Snowflake sequence number, a segment ID from memory) cost
// no timer, no channel and no cancel propagation. Once made, it behaves as
// context.WithDeadline(parent, deadline).
type deadlineCtx struct {
	context.Context // the parent: Value, and Deadline when it is earlier
	deadline        time.Time

	once   sync.Once
	timed  context.Context
	cancel context.CancelFunc
}

func withLazyDeadline(parent context.Context, d time.Time) *deadlineCtx {
	return &deadlineCtx{Context: parent, deadline: d}
}

func (c *deadlineCtx) start() {
	c.timed, c.cancel = context.WithDeadline(c.Context, c.deadline)
}

func (c *deadlineCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *deadlineCtx) Done() <-chan struct{} {
	c.once.Do(c.start)
	if c.timed == nil {
		return closed // released before anyone asked
	}
	return c.timed.Done()
}

func (c *deadlineCtx) Err() error {
	c.once.Do(c.start)
	if c.timed == nil {
		return context.Canceled
	}
	return c.timed.Err()
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// release stops the timer, if one was made; a context released before its
// first Done or Err is canceled from then on.
func (c *deadlineCtx) release() {
	c.once.Do(func() {}) // no timer from here on
	if c.cancel != nil {
		c.cancel()
	}
}
