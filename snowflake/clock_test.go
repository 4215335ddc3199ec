package snowflake_test

import (
	"context"
	"sync"
	"time"
)

// fakeClock is a Clock and Sleeper that tests step by hand; Sleep advances
// it instead of blocking, and counts how long was slept.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	slept  time.Duration
	sleeps int
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.slept += d
	c.sleeps++
	return nil
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *fakeClock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}
