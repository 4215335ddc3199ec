package idgentest_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen/idgentest"
)

// fired collects the names of the timers that fired, in the order they
// ran; wait blocks until n have.
type fired struct {
	mu    sync.Mutex
	names []string
	ch    chan struct{}
}

func newFired() *fired { return &fired{ch: make(chan struct{}, 16)} }

func (f *fired) fn(name string) func() {
	return func() {
		f.mu.Lock()
		f.names = append(f.names, name)
		f.mu.Unlock()
		f.ch <- struct{}{}
	}
}

func (f *fired) wait(t *testing.T, n int) []string {
	t.Helper()
	for range n {
		select {
		case <-f.ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("timers fired: %v; want %d", f.got(), n)
		}
	}
	select {
	case <-f.ch:
		t.Fatalf("timers fired: %v; want %d only", f.got(), n)
	case <-time.After(20 * time.Millisecond):
	}
	return f.got()
}

func (f *fired) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.names)
}

func TestClockTimers(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := idgentest.NewClock(t0)
	f := newFired()
	c.AfterFunc(2*time.Second, f.fn("2s"))
	c.AfterFunc(time.Second, f.fn("1s"))
	stopped := c.AfterFunc(time.Second, f.fn("stopped"))
	reset := c.AfterFunc(time.Second, f.fn("reset to 5s"))
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop() of a pending timer = false, or a second Stop() = true")
	}
	if !reset.Reset(5 * time.Second) {
		t.Fatal("Reset() of a pending timer = false")
	}
	if got := c.Pending(); got != 3 {
		t.Fatalf("Pending() = %d; want 3", got)
	}

	c.Add(999 * time.Millisecond)
	f.wait(t, 0)
	c.Add(time.Millisecond)
	if got := f.wait(t, 1); !slices.Equal(got, []string{"1s"}) {
		t.Fatalf("fired at 1s: %v; want [1s]", got)
	}
	if err := c.Sleep(context.Background(), 5*time.Second); err != nil {
		t.Fatalf("Sleep() = %v", err)
	}
	if got := f.wait(t, 2); !slices.Equal(got[1:], []string{"2s", "reset to 5s"}) && !slices.Equal(got[1:], []string{"reset to 5s", "2s"}) {
		t.Fatalf("fired by 6s: %v; want 1s, then 2s and reset to 5s", got)
	}
	if got := c.Pending(); got != 0 {
		t.Fatalf("Pending() after all fired = %d; want 0", got)
	}
	if reset.Stop() {
		t.Fatal("Stop() of a fired timer = true")
	}
	if reset.Reset(-time.Second) {
		t.Fatal("Reset() of a fired timer = true")
	}
	if got := f.wait(t, 1); got[len(got)-1] != "reset to 5s" {
		t.Fatalf("a timer reset to -1s did not fire at once: %v", got)
	}
	if got, want := c.Now(), t0.Add(6*time.Second); !got.Equal(want) {
		t.Fatalf("Now() = %v; want %v", got, want)
	}
	if got := c.Slept(); got != 5*time.Second {
		t.Fatalf("Slept() = %v; want 5s", got)
	}
}
