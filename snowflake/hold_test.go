package snowflake_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

// increasing fails the test unless id is above last and unseen; it records id.
func increasing(t *testing.T, seen map[idgen.ID]bool, last *idgen.ID, id idgen.ID) {
	t.Helper()
	if seen[id] {
		t.Fatalf("duplicate ID %s", id)
	}
	if last.Scheme() != nil && id.Compare(*last) <= 0 {
		t.Fatalf("ID %s not above the last %s", id, *last)
	}
	seen[id], *last = true, id
}

// TestHold steps the clock back and keeps it there: hold goes on issuing at
// the last tick, then at the ticks after it, ahead of the clock, with no
// wait and no failure; IDs stay unique and increasing, and Stats tells how
// far ahead they run.
func TestHold(t *testing.T) {
	for _, step := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 50 * time.Millisecond, 5 * time.Second} {
		t.Run(step.String(), func(t *testing.T) {
			clk := idgentest.NewClock(t0)
			g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, Rollback: snowflake.Hold})
			seen := map[idgen.ID]bool{}
			var last idgen.ID
			for range 100 {
				increasing(t, seen, &last, next(t, g))
			}
			clk.Add(-step)
			// 100 + 10,000 IDs: the rest of tick t0, then two more ticks.
			for range 10_000 {
				increasing(t, seen, &last, next(t, g))
			}
			p, _ := g.Decompose(last)
			if want := t0.Add(2 * time.Millisecond); !p.Time.Equal(want) {
				t.Errorf("last ID's time = %v; want %v (two ticks past the last before the step)", p.Time, want)
			}
			st := g.Stats()
			if want := step + 2*time.Millisecond; st.Ahead != want {
				t.Errorf("Stats().Ahead = %v; want %v", st.Ahead, want)
			}
			if st.ClockRollbackFailures != 0 || st.ClockRollbackWaits != 0 || clk.Slept() != 0 {
				t.Errorf("Stats() = %+v, slept %v; want no rollback failure, no wait", st, clk.Slept())
			}
			// The clock catching up ends the hold.
			clk.Add(step + 3*time.Millisecond)
			increasing(t, seen, &last, next(t, g))
			if got := g.Stats().Ahead; got != 0 {
				t.Errorf("Stats().Ahead after the clock caught up = %v; want 0", got)
			}
		})
	}
}

// TestHoldMaxAhead: hold never issues at a tick starting more than MaxAhead
// after the clock; beyond, Next and Ready return *idgen.ClockRollbackError.
func TestHoldMaxAhead(t *testing.T) {
	clk := idgentest.NewClock(t0)
	g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, Rollback: snowflake.Hold, MaxAhead: 2 * time.Millisecond})
	next(t, g)
	clk.Add(-time.Millisecond)
	// The rest of tick t0 (4,095) and tick t0+1 ms (4,096), which starts
	// 2 ms after the clock; t0+2 ms would start 3 ms after it.
	for i := range 4095 + 4096 {
		if _, err := g.Next(context.Background()); err != nil {
			t.Fatalf("Next() #%d within MaxAhead: %v", i, err)
		}
	}
	for name, call := range map[string]func() error{
		"Next":  func() error { _, err := g.Next(context.Background()); return err },
		"Ready": func() error { return g.Ready(context.Background()) },
	} {
		err := call()
		var rb *idgen.ClockRollbackError
		if !errors.As(err, &rb) || rb.Drift != 2*time.Millisecond {
			t.Fatalf("%s() past MaxAhead = %v; want *idgen.ClockRollbackError with Drift 2ms", name, err)
		}
	}
	if got := g.ClockRollbackFailures(); got != 1 {
		t.Errorf("ClockRollbackFailures() = %d; want 1", got)
	}

	// A step back beyond MaxAhead fails at once.
	clk2 := idgentest.NewClock(t0)
	g2 := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk2, Rollback: snowflake.Hold})
	next(t, g2)
	clk2.Add(-11 * time.Second)
	_, err := g2.Next(context.Background())
	var rb *idgen.ClockRollbackError
	if !errors.As(err, &rb) || rb.Drift != 11*time.Second || clk2.Slept() != 0 {
		t.Fatalf("Next() 11s behind under hold (MaxAhead 10s) = %v, slept %v; want *idgen.ClockRollbackError with Drift 11s, no wait", err, clk2.Slept())
	}
}

// TestHoldRestartBehindMark restarts behind the high-water mark: hold issues
// at once, from the mark on, while fail names the drift.
func TestHoldRestartBehindMark(t *testing.T) {
	for _, policy := range []snowflake.Policy{snowflake.Hold, snowflake.Fail} {
		t.Run(policy.String(), func(t *testing.T) {
			hw := snowflake.FileHighWater{Path: filepath.Join(t.TempDir(), "hw")}
			mark := t0.Add(5 * time.Second)
			if err := hw.Store(context.Background(), mark); err != nil {
				t.Fatal(err)
			}
			clk := idgentest.NewClock(t0)
			g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, Rollback: policy, HighWater: hw})
			if policy == snowflake.Fail {
				_, err := g.Next(context.Background())
				var rb *idgen.ClockRollbackError
				if !errors.As(err, &rb) || rb.Drift != 4999*time.Millisecond {
					t.Fatalf("Next() 5s behind the mark under fail = %v; want *idgen.ClockRollbackError with Drift 4.999s (behind the tick before the mark)", err)
				}
				return
			}
			seen := map[idgen.ID]bool{}
			var last idgen.ID
			for range 5000 {
				id := next(t, g)
				increasing(t, seen, &last, id)
				if p, _ := g.Decompose(id); p.Time.Before(mark) {
					t.Fatalf("ID %s at %v; want at or after the mark %v", id, p.Time, mark)
				}
			}
			if got, want := g.Stats().Ahead, 5*time.Second+time.Millisecond; got != want {
				t.Errorf("Stats().Ahead = %v; want %v", got, want)
			}
			// The mark moved ahead of the ticks issued.
			if m, err := hw.Load(context.Background()); err != nil || !m.After(last.Time()) {
				t.Errorf("mark %v, %v; want after the last ID's time %v", m, err, last.Time())
			}
		})
	}
}

// TestHoldLeasedMarkAhead: a leased worker ID whose previous holder's mark
// is ahead of the clock is no error under hold: IDs count on from the mark.
func TestHoldLeasedMarkAhead(t *testing.T) {
	lease := &idgentest.Lease{}
	lease.Set(&idgen.Identity{WorkerID: 2, Generation: 1})
	mark := t0.Add(889 * time.Millisecond)
	hw := &memMark{mark: mark}
	clk := idgentest.NewClock(t0)
	g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, Lease: lease, HighWater: hw, Rollback: snowflake.Hold})
	if err := g.Ready(context.Background()); err != nil {
		t.Fatalf("Ready() under a mark 889ms ahead = %v; want nil", err)
	}
	id := next(t, g)
	p, _ := g.Decompose(id)
	if w, _ := p.Node("worker"); !p.Time.Equal(mark) || w != 2 {
		t.Fatalf("first ID %s: time %v, worker %d; want %v, 2", id, p.Time, w, mark)
	}
}

func TestParsePolicy(t *testing.T) {
	for _, p := range []snowflake.Policy{snowflake.WaitThenFail, snowflake.Fail, snowflake.Wait, snowflake.Hold, snowflake.Bump} {
		got, err := snowflake.ParsePolicy(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v; want %v", p.String(), got, err, p)
		}
	}
	_, err := snowflake.ParsePolicy("never")
	if want := `snowflake: unknown rollback policy "never"; allowed fail, wait, wait-then-fail, hold, bump`; err == nil || err.Error() != want {
		t.Errorf("ParsePolicy(%q) = %v; want %q", "never", err, want)
	}
	_, err = snowflake.New(context.Background(), snowflake.Config{Rollback: snowflake.Hold, MaxAhead: -time.Second})
	if want := "snowflake: max ahead -1s must not be negative"; err == nil || err.Error() != want {
		t.Errorf("New(MaxAhead -1s) = %v; want %q", err, want)
	}
}

// TestClockDrift: the generator reports a wall clock step that the default
// clock has not followed yet as drift.
func TestClockDrift(t *testing.T) {
	for _, step := range []time.Duration{5 * time.Second, -3 * time.Second} {
		g := mustNew(t, snowflake.Config{Clock: snowflake.SystemClockWithStep(step)})
		if d := g.Stats().Drift; (d - step).Abs() > 50*time.Millisecond {
			t.Errorf("Stats().Drift after a %v wall clock step = %v; want %v", step, d, step)
		}
	}
	if d := mustNew(t, snowflake.Config{}).ClockDrift(); d.Abs() > 50*time.Millisecond {
		t.Errorf("ClockDrift() of a fresh SystemClock = %v; want about 0", d)
	}
	if d := mustNew(t, snowflake.Config{Clock: idgentest.NewClock(t0)}).ClockDrift(); d != 0 {
		t.Errorf("ClockDrift() of a clock that does not tell = %v; want 0", d)
	}
}
