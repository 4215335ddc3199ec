package snowflake_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// steppedWall is a wall clock that the test steps: the real time plus an
// offset.
type steppedWall struct{ off atomic.Int64 }

func (w *steppedWall) now() time.Time       { return time.Now().Add(time.Duration(w.off.Load())) }
func (w *steppedWall) step(d time.Duration) { w.off.Add(int64(d)) }
func stepGen(t *testing.T, w *steppedWall, p snowflake.Policy) *snowflake.Generator {
	return mustNew(t, snowflake.Config{Clock: snowflake.SystemClockOver(w.now), Rollback: p})
}

// issueThenStep issues one ID under g, steps the wall clock w by d, and
// waits for the clock to look at it; it returns the IDs seen, the last one
// and its time.
func issueThenStep(t *testing.T, g *snowflake.Generator, w *steppedWall, d time.Duration) (seen map[idgen.ID]bool, last idgen.ID, at time.Time) {
	t.Helper()
	seen = map[idgen.ID]bool{}
	id, at := nextTime(t, g)
	increasing(t, seen, &last, id)
	w.step(d)
	time.Sleep(2 * snowflake.StepCheckEvery)
	return seen, last, at
}

// nextTime issues an ID and returns it with its time.
func nextTime(t *testing.T, g *snowflake.Generator) (idgen.ID, time.Time) {
	t.Helper()
	id, err := g.Next(context.Background())
	if err != nil {
		t.Fatalf("Next() = %v", err)
	}
	p, err := g.Decompose(id)
	if err != nil {
		t.Fatalf("Decompose(%s) = %v", id, err)
	}
	return id, p.Time
}

// TestClockFollowsForwardStep: the default clock follows a wall clock step
// of +5 s within StepCheckEvery: the IDs' time jumps 5 s forward and the
// IDs keep increasing; the step is counted.
func TestClockFollowsForwardStep(t *testing.T) {
	w := &steppedWall{}
	g := stepGen(t, w, snowflake.WaitThenFail)
	seen, last, before := issueThenStep(t, g, w, 5*time.Second)
	id, after := nextTime(t, g)
	increasing(t, seen, &last, id)
	if d := after.Sub(before); d < 5*time.Second || d > 6*time.Second {
		t.Fatalf("ID time after a +5s step = %v, %v after the one before; want 5s to 6s", after, d)
	}
	for range 1000 {
		id, _ := nextTime(t, g)
		increasing(t, seen, &last, id)
	}
	st := g.Stats()
	if st.ClockStepsForward != 1 || st.ClockStepsBack != 0 || (st.ClockStepped-5*time.Second).Abs() > time.Millisecond || st.Drift.Abs() > time.Millisecond {
		t.Fatalf("Stats() after a +5s step = %+v; want 1 step forward of 5s, none back, no drift", st)
	}
}

// TestClockBackStepPolicy: the default clock follows a wall clock step of
// -5 s and the rollback policy applies: Hold counts on from the last tick
// (increasing IDs, 5 s ahead of the clock less the time since that tick),
// Fail returns *idgen.ClockRollbackError carrying the 5 s less that time.
// The time since the tick is bounded by the test's own clock readings
// around the IDs, so a slow or descheduled test only widens the bound
// (it was "at least 4.9 s", which a loaded machine broke).
func TestClockBackStepPolicy(t *testing.T) {
	// within: d is 5 s less the time since start (read before the last
	// tick was issued), to the 1 ms tick.
	within := func(d time.Duration, start time.Time) bool {
		return d >= 5*time.Second-time.Since(start)-time.Millisecond && d <= 5*time.Second+time.Millisecond
	}
	t.Run("hold", func(t *testing.T) {
		w := &steppedWall{}
		g := stepGen(t, w, snowflake.Hold)
		start := time.Now()
		seen, last, before := issueThenStep(t, g, w, -5*time.Second)
		for range 1000 {
			id, at := nextTime(t, g)
			increasing(t, seen, &last, id)
			if at.Before(before) {
				t.Fatalf("ID time after a -5s step = %v; want at or after the last tick %v", at, before)
			}
		}
		st := g.Stats()
		if st.ClockStepsBack != 1 || st.ClockStepsForward != 0 || (st.ClockStepped+5*time.Second).Abs() > time.Millisecond {
			t.Fatalf("Stats() after a -5s step = %+v; want 1 step back of 5s", st)
		}
		if !within(st.Ahead, start) {
			t.Fatalf("Stats().Ahead after a -5s step under hold = %v, %v after the tick; want 5s less that", st.Ahead, time.Since(start))
		}
	})
	t.Run("fail", func(t *testing.T) {
		w := &steppedWall{}
		g := stepGen(t, w, snowflake.Fail)
		start := time.Now()
		issueThenStep(t, g, w, -5*time.Second)
		_, err := g.Next(context.Background())
		var rb *idgen.ClockRollbackError
		if !errors.As(err, &rb) || !within(rb.Drift, start) {
			t.Fatalf("Next() after a -5s step under fail = %v, %v after the tick; want *idgen.ClockRollbackError with a drift of 5s less that", err, time.Since(start))
		}
		if st := g.Stats(); st.ClockStepsBack != 1 || st.ClockRollbackFailures != 1 {
			t.Fatalf("Stats() = %+v; want 1 step back, 1 rollback failure", st)
		}
	})
}

// TestClockIgnoresJitter: wall clock differences below StepMin are not
// followed (they show as drift).
func TestClockIgnoresJitter(t *testing.T) {
	w := &steppedWall{}
	g := stepGen(t, w, snowflake.Fail)
	w.step(snowflake.StepMin / 2)
	time.Sleep(2 * snowflake.StepCheckEvery)
	nextTime(t, g)
	if st := g.Stats(); st.ClockStepsForward+st.ClockStepsBack != 0 || (st.Drift-snowflake.StepMin/2).Abs() > snowflake.StepMin/4 {
		t.Fatalf("Stats() after a %v step = %+v; want no step followed, a drift of %v", snowflake.StepMin/2, st, snowflake.StepMin/2)
	}
}

// TestClockStartDescheduled: a SystemClock descheduled around its first
// wall clock read (here the read takes 5 ms, as on a loaded machine) reads
// again, places the reading right, and follows no step: it used to start
// 5 ms ahead and count a step back at its first check.
func TestClockStartDescheduled(t *testing.T) {
	var reads atomic.Int64
	c := snowflake.SystemClockOver(func() time.Time {
		if reads.Add(1) == 1 {
			time.Sleep(5 * time.Millisecond)
		}
		return time.Now()
	})
	for end := time.Now().Add(20 * snowflake.StepCheckEvery); time.Now().Before(end); {
		c.Now() // checks the wall clock every StepCheckEvery
	}
	if fwd, back, sum := c.(snowflake.StepCounter).ClockSteps(); fwd+back != 0 {
		t.Fatalf("ClockSteps() = %d forward, %d back, %v in all; want none", fwd, back, sum)
	}
}
