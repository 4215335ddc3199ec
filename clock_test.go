package idgen_test

import (
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
)

// stopped is a Clock that only reads: no timers of its own.
type stopped struct{ t time.Time }

func (s stopped) Now() time.Time { return s.t }

func TestClockOr(t *testing.T) {
	before := time.Now()
	now := idgen.ClockOr(nil).Now()
	if now.Before(before) || now.After(time.Now()) {
		t.Fatalf("ClockOr(nil).Now() = %v; want the system clock's time, from %v", now, before)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := idgen.ClockOr(stopped{t0}).Now(); !got.Equal(t0) {
		t.Fatalf("ClockOr(c).Now() = %v; want c's %v", got, t0)
	}
}

// Timers of a Clock that only reads keep its Now and schedule in real time.
func TestTimersOfAReadingClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tc := idgen.Timers(stopped{t0})
	if got := tc.Now(); !got.Equal(t0) {
		t.Fatalf("Timers(c).Now() = %v; want c's %v", got, t0)
	}
	fired := make(chan struct{})
	tm := tc.AfterFunc(time.Millisecond, func() { close(fired) })
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterFunc(1ms) of Timers(c) did not fire in 10s of real time")
	}
	if tm.Stop() {
		t.Fatal("Stop() after the call = true; want false")
	}
	// A TimerClock's own timers are kept.
	clk := idgentest.NewClock(t0)
	if got := idgen.Timers(clk); got != idgen.TimerClock(clk) {
		t.Fatalf("Timers(%T) = %T; want the clock itself", clk, got)
	}
}
