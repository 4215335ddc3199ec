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

type testLease struct {
	p atomic.Pointer[idgen.Identity]
}

func (l *testLease) Identity() *idgen.Identity { return l.p.Load() }

func TestLease(t *testing.T) {
	lease := &testLease{}
	lease.p.Store(&idgen.Identity{WorkerID: 7, DatacenterID: 2, Generation: 1})
	clk := newFakeClock(t0)
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
	lease.p.Store(nil) // lost
	if id, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("Next() under a lost lease = %v, %v; want ErrLeaseLost", id, err)
	}
	dst := make([]idgen.ID, 10)
	if n, err := g.NextN(context.Background(), dst); n != 0 || !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("NextN() under a lost lease = %d, %v; want 0, ErrLeaseLost", n, err)
	}
	lease.p.Store(&idgen.Identity{WorkerID: 9, DatacenterID: 2, Generation: 2}) // reacquired, another ID
	clk.Add(time.Millisecond)
	check(9, 2)
	lease.p.Store(&idgen.Identity{WorkerID: 32, Generation: 3})
	if _, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrOutOfRange) {
		t.Fatalf("Next() under worker 32 error = %v; want ErrOutOfRange", err)
	}
	lost := &testLease{}
	if _, err := snowflake.New(context.Background(), snowflake.Config{Lease: lost}); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("New() with a lease holding nothing: %v; want ErrLeaseLost", err)
	}
}
