package idgentest

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
)

// Clock is a clock a test steps by hand: an idgen.Clock and
// idgen.TimerClock (so a snowflake.Clock, and the clock of a segment
// Allocator or a workerid lease), and a snowflake.Sleeper whose Sleep
// advances it instead of blocking and counts the time slept. Timers made by
// AfterFunc fire when Add or Sleep moves the clock to or past them, each
// in a goroutine of its own (started in the order of their times, so they
// may run in any order). Safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	t      time.Time
	slept  time.Duration
	timers []*clockTimer // pending, in no order
}

var _ idgen.TimerClock = (*Clock)(nil)

// NewClock returns a Clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Sleep advances the clock by d at once, firing the timers it passes; it
// returns ctx's error, without advancing, when ctx is done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.slept += d
	c.mu.Unlock()
	c.Add(d)
	return nil
}

// Add moves the clock by d, backwards when d < 0 (a clock rollback), and
// fires the timers due at the new time.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	due := c.dueLocked()
	c.mu.Unlock()
	for _, f := range due {
		go f()
	}
}

// Slept returns the total of the durations slept.
func (c *Clock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}

// Pending returns how many timers wait to fire: a test waits for a
// goroutine to have armed its next timer before it moves the clock on.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// AfterFunc calls f in its own goroutine once the clock reaches d from now
// (at once if d <= 0), unless the returned Timer is stopped first.
func (c *Clock) AfterFunc(d time.Duration, f func()) idgen.Timer {
	tm := &clockTimer{c: c, f: f}
	tm.Reset(d)
	return tm
}

// dueLocked removes the timers due at c.t and returns their functions,
// earliest first.
func (c *Clock) dueLocked() []func() {
	var due []*clockTimer
	keep := c.timers[:0]
	for _, tm := range c.timers {
		if tm.at.After(c.t) {
			keep = append(keep, tm)
		} else {
			due = append(due, tm)
		}
	}
	clear(c.timers[len(keep):])
	c.timers = keep
	slices.SortStableFunc(due, func(a, b *clockTimer) int { return a.at.Compare(b.at) })
	fs := make([]func(), len(due))
	for i, tm := range due {
		fs[i] = tm.f
	}
	return fs
}

// A clockTimer is a Clock's idgen.Timer.
type clockTimer struct {
	c  *Clock
	f  func()
	at time.Time
}

// Stop removes the timer; it reports whether it was pending.
func (tm *clockTimer) Stop() bool {
	tm.c.mu.Lock()
	defer tm.c.mu.Unlock()
	return tm.removeLocked()
}

// Reset schedules the timer d from the clock's time; it reports whether it
// was pending.
func (tm *clockTimer) Reset(d time.Duration) bool {
	c := tm.c
	c.mu.Lock()
	was := tm.removeLocked()
	tm.at = c.t.Add(d)
	c.timers = append(c.timers, tm)
	due := c.dueLocked()
	c.mu.Unlock()
	for _, f := range due {
		go f()
	}
	return was
}

func (tm *clockTimer) removeLocked() bool {
	i := slices.Index(tm.c.timers, tm)
	if i < 0 {
		return false
	}
	tm.c.timers = slices.Delete(tm.c.timers, i, i+1)
	return true
}

// Lease is an idgen.Lease a test holds, takes away and gives back. The zero
// Lease holds no identity.
type Lease struct {
	p atomic.Pointer[idgen.Identity]
}

// Identity returns the identity held, or nil while none is.
func (l *Lease) Identity() *idgen.Identity { return l.p.Load() }

// Set makes id the identity held; nil means the lease is lost.
func (l *Lease) Set(id *idgen.Identity) { l.p.Store(id) }
