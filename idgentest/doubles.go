package idgentest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
)

// Clock is a clock a test steps by hand: a snowflake.Clock and
// snowflake.Sleeper whose Sleep advances it instead of blocking and counts
// the time slept. Safe for concurrent use.
type Clock struct {
	mu    sync.Mutex
	t     time.Time
	slept time.Duration
}

// NewClock returns a Clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Sleep advances the clock by d at once; it returns ctx's error, without
// advancing, when ctx is done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.slept += d
	return nil
}

// Add moves the clock by d, backwards when d < 0 (a clock rollback).
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Slept returns the total of the durations slept.
func (c *Clock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
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
