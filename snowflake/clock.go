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
// read once, then advanced by the monotonic clock, which costs one
// monotonic clock read per call. Every StepCheckEvery of monotonic time it
// reads the wall clock again, and follows a step of StepMin or more at once:
// a step forward (NTP, a resumed VM) moves the IDs' time forward, which is
// safe; a step back moves the clock back, and the Generator's rollback
// policy applies (Hold counts on, Fail returns *idgen.ClockRollbackError).
// Steps are counted (StepCounter). A restart reads the wall clock afresh,
// which is what the high-water mark guards.
func SystemClock() Clock { return followWall(time.Now) }

// StepCheckEvery is how often (in monotonic time) SystemClock reads the
// wall clock to look for a step.
const StepCheckEvery = time.Millisecond

// StepMin is the smallest difference between the wall clock and
// SystemClock's reading that SystemClock follows as a step; smaller ones
// add up until they reach it (Drift reports them).
const StepMin = time.Millisecond

// followWall returns the clock of SystemClock over the wall clock wall
// (time.Now, or a test's stepped one).
//
// The wall reading is placed at the middle of two monotonic readings
// around it, as follow does; when the reader is descheduled between them
// (a loaded machine), it reads again, up to 100 times, and keeps the
// closest pair: placed off by a millisecond, the clock would count a step
// that never happened at its first check.
func followWall(wall func() time.Time) *systemClock {
	c := &systemClock{wall: wall}
	best := time.Duration(-1)
	for range 100 {
		before := time.Now()
		w := wall().UnixNano()
		d := time.Since(before)
		if best < 0 || d < best {
			best, c.start = d, before.Add(d/2)
			c.base.Store(w)
		}
		if best <= StepMin/8 {
			break
		}
	}
	c.nextCheck.Store(int64(StepCheckEvery))
	return c
}

type systemClock struct {
	wall  func() time.Time
	start time.Time // carries the monotonic reading
	// base is the wall time at start plus the steps followed: the reading
	// is base + the monotonic time since start.
	base atomic.Int64
	// nextCheck is the monotonic time since start of the next wall read.
	nextCheck           atomic.Int64
	stepsFwd, stepsBack atomic.Uint64
	stepped             atomic.Int64 // the sum of the steps followed, ns
}

func (c *systemClock) Now() time.Time { return time.Unix(0, c.UnixNano()) }

// UnixNano is Now().UnixNano(): one monotonic clock read, and a wall clock
// read every StepCheckEvery.
func (c *systemClock) UnixNano() int64 {
	since := int64(time.Since(c.start))
	if next := c.nextCheck.Load(); since >= next && c.nextCheck.CompareAndSwap(next, since+int64(StepCheckEvery)) {
		c.follow()
	}
	return c.base.Load() + since
}

// follow reads the wall clock between two monotonic readings and moves
// base by the step, if any. When the two readings are more than StepMin/2
// apart (the reader was descheduled around the wall read, as happens on a
// loaded machine), the wall reading cannot be placed on the monotonic
// clock finely enough, and follow leaves the check to the next reader:
// taking it would follow a step that never happened, forward and then back.
func (c *systemClock) follow() {
	base := c.base.Load()
	before := int64(time.Since(c.start))
	wall := c.wall().UnixNano()
	after := int64(time.Since(c.start))
	if after-before > int64(StepMin)/2 {
		c.nextCheck.Store(after) // look again at the next reading
		return
	}
	step := wall - (base + before + (after-before)/2)
	if step > -int64(StepMin) && step < int64(StepMin) {
		return
	}
	if !c.base.CompareAndSwap(base, base+step) {
		return // another reader followed it
	}
	c.stepped.Add(step)
	if step > 0 {
		c.stepsFwd.Add(1)
	} else {
		c.stepsBack.Add(1)
	}
}

// Drift returns the system wall clock's reading minus this clock's: a step
// not followed yet (for up to StepCheckEvery), or the sum of steps below
// StepMin; > 0 when the wall clock is ahead.
func (c *systemClock) Drift() time.Duration {
	since := int64(time.Since(c.start))
	return time.Duration(c.wall().UnixNano() - (c.base.Load() + since))
}

// ClockSteps returns how many wall clock steps forward and back the clock
// followed, and their sum (> 0 forward).
func (c *systemClock) ClockSteps() (forward, back uint64, sum time.Duration) {
	return c.stepsFwd.Load(), c.stepsBack.Load(), time.Duration(c.stepped.Load())
}

// A StepCounter is a Clock that follows the wall clock's steps and counts
// them (SystemClock's is one).
type StepCounter interface {
	ClockSteps() (forward, back uint64, sum time.Duration)
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
