package idgen

import "time"

// A Clock tells the time to everything in the toolkit that reads it: the
// snowflake Generator (its ticks, as snowflake.Clock), the segment Allocator
// (how long a segment lasted, for the dynamic step), the worker-ID leases
// of package workerid (renewals, LostAfter, the high-water marks' order at
// acquire, the skew check at start) and the adapters in package strategies
// that put a time in their IDs (ULID, KSUID, xid, flake128, and Sonyflake
// under a lease). It is defined once, here, so that one test clock
// (idgentest.Clock) drives them all. The UUIDv1/v6/v7 adapters keep
// google/uuid's process-wide clock state, which is what makes their IDs
// increase across its callers, and Sonyflake without a lease the sony
// library's clock: neither library takes a clock.
//
// Every Config field of this type takes nil to mean the system clock,
// [SystemClock]. A Clock must be safe for concurrent use.
type Clock interface {
	// Now returns the current time. Readings compared with each other
	// (durations, deadlines) should carry the monotonic clock, as
	// time.Now's do.
	Now() time.Time
}

// A TimerClock is a Clock that also runs functions after durations on it,
// as time.AfterFunc does in real time. A workerid lease schedules its
// renewals and its LostAfter deadline on its Clock when the Clock is a
// TimerClock, so that a test clock moves a lease past LostAfter without
// waiting; on any other Clock it schedules in real time.
type TimerClock interface {
	Clock
	// AfterFunc calls f in its own goroutine once d has passed on the
	// clock (at once if d <= 0), unless the Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// A Timer is the handle a TimerClock returns; *time.Timer is one.
type Timer interface {
	// Stop prevents the call; it reports false when the call already
	// happened or the timer was stopped.
	Stop() bool
	// Reset schedules the call d from now on the clock; it reports whether
	// the timer was active.
	Reset(d time.Duration) bool
}

// SystemClock returns the system clock: time.Now (the wall clock with its
// monotonic reading) and time.AfterFunc. It is what a nil Clock means.
func SystemClock() TimerClock { return systemClock{} }

// ClockOr returns c, or SystemClock() when c is nil: the resolution of a
// nil Clock field.
func ClockOr(c Clock) Clock {
	if c == nil {
		return systemClock{}
	}
	return c
}

// Timers returns c's timers: c itself if it is a TimerClock, else the
// system clock's (real time), for a Clock that only reads.
func Timers(c Clock) TimerClock {
	if tc, ok := c.(TimerClock); ok {
		return tc
	}
	return timersOf{c}
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// timersOf reads c and schedules in real time.
type timersOf struct{ Clock }

func (timersOf) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
