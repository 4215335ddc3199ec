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
// (increasing IDs, about 5 s ahead of the clock), Fail returns
// *idgen.ClockRollbackError carrying the 5 s.
func TestClockBackStepPolicy(t *testing.T) {
	t.Run("hold", func(t *testing.T) {
		w := &steppedWall{}
		g := stepGen(t, w, snowflake.Hold)
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
		if st.Ahead < 4900*time.Millisecond || st.Ahead > 5*time.Second {
			t.Fatalf("Stats().Ahead after a -5s step under hold = %v; want about 5s", st.Ahead)
		}
	})
	t.Run("fail", func(t *testing.T) {
		w := &steppedWall{}
		g := stepGen(t, w, snowflake.Fail)
		issueThenStep(t, g, w, -5*time.Second)
		_, err := g.Next(context.Background())
		var rb *idgen.ClockRollbackError
		if !errors.As(err, &rb) || rb.Drift < 4900*time.Millisecond || rb.Drift > 5*time.Second {
			t.Fatalf("Next() after a -5s step under fail = %v; want *idgen.ClockRollbackError with a drift of about 5s", err)
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
