package snowflake_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

func TestLease(t *testing.T) {
	lease := &idgentest.Lease{}
	lease.Set(&idgen.Identity{WorkerID: 7, DatacenterID: 2, Generation: 1})
	clk := idgentest.NewClock(t0)
	g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, Lease: lease, Nodes: map[string]int64{"worker": 1}})
	check := func(wantWorker, wantDC uint64) idgen.ID {
		t.Helper()
		id := next(t, g)
		p, _ := g.Decompose(id)
		w, _ := p.Node("worker")
		dc, _ := p.Node("datacenter")
		if w != wantWorker || dc != wantDC {
			t.Fatalf("ID %s: worker %d datacenter %d; want %d, %d", id, w, dc, wantWorker, wantDC)
		}
		return id
	}
	check(7, 2)
	lease.Set(nil) // lost
	if id, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("Next() under a lost lease = %v, %v; want ErrLeaseLost", id, err)
	}
	dst := make([]idgen.ID, 10)
	if n, err := g.NextN(context.Background(), dst); n != 0 || !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("NextN() under a lost lease = %d, %v; want 0, ErrLeaseLost", n, err)
	}
	lease.Set(&idgen.Identity{WorkerID: 9, DatacenterID: 2, Generation: 2}) // reacquired, another ID
	clk.Add(time.Millisecond)
	check(9, 2)
	lease.Set(&idgen.Identity{WorkerID: 32, Generation: 3})
	if _, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrOutOfRange) {
		t.Fatalf("Next() under worker 32 error = %v; want ErrOutOfRange", err)
	}
	lost := &idgentest.Lease{}
	if _, err := snowflake.New(context.Background(), snowflake.Config{Lease: lost}); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("New() with a lease holding nothing: %v; want ErrLeaseLost", err)
	}
}

// memMark is an in-memory HighWaterStore.
type memMark struct {
	mu   sync.Mutex
	mark time.Time
}

func (m *memMark) Load(context.Context) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mark, nil
}

func (m *memMark) Store(_ context.Context, t time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mark = t
	return nil
}

// TestLeaseReacquiredReadsMark: a worker ID reacquired after another node
// used it with a clock 2 s ahead is not issued under until the clock passes
// that node's mark.
func TestLeaseReacquiredReadsMark(t *testing.T) {
	lease := &idgentest.Lease{}
	lease.Set(&idgen.Identity{WorkerID: 1, Generation: 1})
	clk := idgentest.NewClock(t0)
	hw := &memMark{}
	g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, Lease: lease, HighWater: hw, Rollback: snowflake.Fail})
	first := next(t, g)
	// Meanwhile another node held worker 2 up to t0+2s and wrote its mark.
	hw.Store(context.Background(), t0.Add(2*time.Second))
	lease.Set(&idgen.Identity{WorkerID: 2, Generation: 7})
	_, err := g.Next(context.Background())
	var rb *idgen.ClockRollbackError
	if !errors.As(err, &rb) || rb.Drift < 1990*time.Millisecond {
		t.Fatalf("Next() under a worker whose mark is 2s ahead = %v; want a rollback of about 2s", err)
	}
	clk.Add(2 * time.Second)
	id := next(t, g)
	if id.Compare(first) <= 0 || id.Time().Before(t0.Add(2*time.Second)) {
		t.Fatalf("ID %s at %v after reacquiring; want at or after %v", id, id.Time(), t0.Add(2*time.Second))
	}
	if mark, _ := hw.Load(context.Background()); !mark.After(id.Time()) {
		t.Fatalf("mark %v not ahead of the ID issued at %v", mark, id.Time())
	}
}

// TestMarkAheadNamed: a leased worker ID whose previous holder's mark is
// ahead of the clock is refused with a *snowflake.HighWaterAheadError that
// names the worker ID and how far ahead the mark is, not a clock step; it
// still matches idgen.ErrClockRollback and carries the rollback for a
// Retry-After. A clock stepping back after issuing is a plain rollback.
func TestMarkAheadNamed(t *testing.T) {
	for _, policy := range []snowflake.Policy{snowflake.Fail, snowflake.WaitThenFail} {
		t.Run(policy.String(), func(t *testing.T) {
			lease := &idgentest.Lease{}
			lease.Set(&idgen.Identity{WorkerID: 2, Generation: 1})
			hw := &memMark{mark: t0.Add(889 * time.Millisecond)}
			clk := idgentest.NewClock(t0)
			g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, Lease: lease, HighWater: hw, Rollback: policy})
			want := "snowflake: worker ID 2: the previous holder's high-water mark is 889ms ahead of the clock; " +
				"no ID is issued under worker ID 2 before 2026-06-01T11:07:00.889Z"
			for name, call := range map[string]func() error{
				"Ready": func() error { return g.Ready(context.Background()) },
				"Next":  func() error { _, err := g.Next(context.Background()); return err },
			} {
				err := call()
				var ahead *snowflake.HighWaterAheadError
				if !errors.As(err, &ahead) || err.Error() != want {
					t.Fatalf("%s() under a mark 889ms ahead = %v; want %q", name, err, want)
				}
				if ahead.WorkerID != 2 || ahead.Ahead != 889*time.Millisecond || !ahead.Mark.Equal(t0.Add(889*time.Millisecond)) {
					t.Fatalf("%s(): %+v; want worker 2, 889ms ahead of a mark at %v", name, ahead, t0.Add(889*time.Millisecond))
				}
				var rb *idgen.ClockRollbackError
				if !errors.Is(err, idgen.ErrClockRollback) || !errors.As(err, &rb) || rb.Drift < 888*time.Millisecond {
					t.Fatalf("%s() = %v; want it to match ErrClockRollback with a drift of about 889ms", name, err)
				}
			}
			clk.Add(time.Second)
			next(t, g)
			clk.Add(-time.Second) // a real step back, after issuing
			_, err := g.Next(context.Background())
			var ahead *snowflake.HighWaterAheadError
			if !errors.Is(err, idgen.ErrClockRollback) || errors.As(err, &ahead) {
				t.Fatalf("Next() after the clock stepped back = %v; want a plain clock rollback", err)
			}
		})
	}
}
