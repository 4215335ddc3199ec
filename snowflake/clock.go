package snowflake

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
)

// A Clock tells a Generator the time. Tests inject one that they step back
// and forward; production uses SystemClock. It is the toolkit's one clock,
// idgen.Clock: the tick semantics (epoch, tick length, rollback policy) are
// the Generator's, applied to whatever Now returns, so the same test clock
// drives a Generator, its lease and a segment Allocator.
type Clock = idgen.Clock

// A Sleeper is a Clock that also sleeps. A Generator that waits (a full
// sequence, a clock rollback under Wait) sleeps through its Clock when the
// Clock is a Sleeper, so a fake clock can advance instead of blocking.
type Sleeper interface {
	// Sleep returns after d has passed on the clock, or ctx's error.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock returns the clock a Generator uses by default: the wall clock
// read once, then advanced by the monotonic clock. An NTP step after the
// clock is created does not move it, so within a process it never goes
// back; a restart reads the wall clock afresh, which is what the high-water
// mark guards. It costs one monotonic clock read per call.
func SystemClock() Clock {
	now := time.Now()
	return systemClock{start: now, startNs: now.UnixNano()}
}

type systemClock struct {
	start   time.Time // carries the monotonic reading
	startNs int64
}

func (c systemClock) Now() time.Time { return c.start.Add(time.Since(c.start)) }

// UnixNano is Now().UnixNano() with one monotonic clock read.
func (c systemClock) UnixNano() int64 { return c.startNs + int64(time.Since(c.start)) }

// Drift returns the system wall clock's reading minus this clock's: how far
// NTP steps (or a suspended VM) moved the wall clock since this clock was
// created, > 0 when the wall clock is ahead. IDs keep this clock's time.
func (c systemClock) Drift() time.Duration {
	now := time.Now()
	return time.Duration(now.UnixNano() - (c.startNs + int64(now.Sub(c.start))))
}

// A DriftReporter is a Clock that tells how far it is from the system wall
// clock (SystemClock's is one).
type DriftReporter interface {
	Drift() time.Duration
}

// WallClock returns the wall clock, read afresh at every call (time.Now). An
// NTP step back shows at once and the Generator's rollback policy applies.
func WallClock() Clock { return wallClock{} }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// A CoarseClock caches another clock's reading and refreshes it every
// resolution from a goroutine it owns, so that Now costs one atomic load
// instead of a clock read (about 40 ns here). IDs then carry a time up to
// about one resolution old. Share one CoarseClock between generators, and
// Close it when done.
type CoarseClock struct {
	base Clock
	ns   atomic.Int64 // the cached reading; closedNs once closed
	stop chan struct{}
	once sync.Once
	done chan struct{}
}

// NewCoarseClock starts a CoarseClock over base (SystemClock if nil),
// refreshed every resolution (1 ms if zero).
func NewCoarseClock(base Clock, resolution time.Duration) *CoarseClock {
	if base == nil {
		base = SystemClock()
	}
	if resolution <= 0 {
		resolution = time.Millisecond
	}
	c := &CoarseClock{base: base, stop: make(chan struct{}), done: make(chan struct{})}
	c.ns.Store(base.Now().UnixNano())
	go c.run(resolution)
	return c
}

func (c *CoarseClock) run(resolution time.Duration) {
	defer close(c.done)
	t := time.NewTicker(resolution)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.ns.Store(c.base.Now().UnixNano())
		}
	}
}

// Now returns the cached reading; after Close, the base clock's.
func (c *CoarseClock) Now() time.Time { return time.Unix(0, c.UnixNano()) }

// UnixNano returns the cached reading in ns since 1970; a Generator uses it
// in place of Now().UnixNano(). After Close it reads the base clock.
func (c *CoarseClock) UnixNano() int64 {
	if v := c.ns.Load(); v != closedNs {
		return v
	}
	return c.baseNow()
}

// closedNs marks a closed CoarseClock; no reading after 1970 equals it.
const closedNs = math.MinInt64

func (c *CoarseClock) baseNow() int64 { return c.base.Now().UnixNano() }

// Close stops the refreshing goroutine and waits for it to end. The clock
// goes on working, reading its base clock at every call.
func (c *CoarseClock) Close() error {
	c.once.Do(func() { close(c.stop) })
	<-c.done
	c.ns.Store(closedNs)
	return nil
}

// sleep waits d on clk if it is a Sleeper, else in real time.
func sleep(ctx context.Context, clk Clock, d time.Duration) error {
	if s, ok := clk.(Sleeper); ok {
		return s.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
