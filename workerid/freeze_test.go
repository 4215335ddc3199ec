package workerid_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/testenv/etcdtest"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/workerid"
)

// issued is what one node's issuing loop saw.
type issued struct {
	ok, failed, other int       // Next calls that succeeded, failed, failed with other than ErrLeaseLost
	firstFail         time.Time // the first failed Next
	lastFail          time.Time // the last failed Next
	otherErr          error     // the first error other than ErrLeaseLost
}

// issue calls g.Next about every millisecond until stop is closed.
func issue(g *snowflake.Generator, stop <-chan struct{}) issued {
	var r issued
	for {
		select {
		case <-stop:
			return r
		default:
		}
		_, err := g.Next(context.Background())
		now := time.Now()
		switch {
		case err == nil:
			r.ok++
		default:
			r.failed++
			if r.firstFail.IsZero() {
				r.firstFail = now
			}
			r.lastFail = now
			if !errors.Is(err, idgen.ErrLeaseLost) {
				r.other++
				if r.otherErr == nil {
					r.otherErr = err
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// TestEtcdProcessFreeze freezes a real etcd server (a separate process, SIGSTOP,
// then SIGCONT) under three nodes issuing about 1,000 IDs a second each, on
// the default lease timing (TTL 30 s, renewal every 3 s, lost after 15 s),
// just before a renewal (the worst time): frozen for 10 s, no Next fails
// (with renewals every 10 s, they would stop 5 s into it); frozen for 20 s, every node stops (Next
// and Ready fail with ErrLeaseLost) by LostAfter after the freeze, not
// before LostAfter - RenewEvery, and issues again after the thaw. The two
// cases run in parallel, each on its own server (about 30 s in all).
func TestEtcdProcessFreeze(t *testing.T) {
	for _, tc := range []struct {
		freeze time.Duration
		stops  bool
	}{{10 * time.Second, false}, {20 * time.Second, true}} {
		t.Run(tc.freeze.String(), func(t *testing.T) {
			t.Parallel()
			e := etcdtest.StartProcess(t)
			cfg := workerid.LeaseConfig{Space: workerid.Space{Workers: 16}, Namespace: uniqueName(t)}
			const lostAfter, renewEvery = 15 * time.Second, 3 * time.Second // the defaults
			var gens []*snowflake.Generator
			opened := time.Now() // the start of node 0's lease, its first renewal RenewEvery later
			for range 3 {
				s, err := workerid.OpenEtcd(context.Background(), workerid.EtcdConfig{LeaseConfig: cfg, Endpoints: []string{e.Addr}})
				if err != nil {
					t.Fatalf("OpenEtcd() = %v", err)
				}
				t.Cleanup(func() { s.Close() })
				g, err := snowflake.New(context.Background(), snowflake.Config{Lease: s, HighWater: s})
				if err != nil {
					t.Fatalf("snowflake.New() = %v", err)
				}
				gens = append(gens, g)
			}
			stop := make(chan struct{})
			res := make([]issued, len(gens))
			var wg sync.WaitGroup
			for i, g := range gens {
				wg.Go(func() { res[i] = issue(g, stop) })
			}
			// The worst time to freeze: just before the first renewal,
			// RenewEvery after the last good one (the acquire).
			time.Sleep(time.Until(opened.Add(renewEvery - 200*time.Millisecond)))
			frozen := time.Now()
			if err := e.Freeze(); err != nil {
				t.Fatalf("SIGSTOP etcd: %v", err)
			}
			if tc.stops {
				time.Sleep(lostAfter + 500*time.Millisecond)
				for i, g := range gens {
					if err := g.Ready(context.Background()); !errors.Is(err, idgen.ErrLeaseLost) {
						t.Errorf("node %d: Ready() %v after the freeze = %v; want ErrLeaseLost", i, time.Since(frozen), err)
					}
				}
			}
			time.Sleep(time.Until(frozen.Add(tc.freeze)))
			if err := e.Thaw(); err != nil {
				t.Fatalf("SIGCONT etcd: %v", err)
			}
			thawed := time.Now()
			// Issue on for 2 s; after a stop, until every node issues
			// again (at most 20 s).
			time.Sleep(2 * time.Second)
			for _, g := range gens {
				for deadline := time.Now().Add(20 * time.Second); tc.stops && g.Ready(context.Background()) != nil; time.Sleep(50 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("a node not ready 20s after the thaw: %v", g.Ready(context.Background()))
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
			close(stop)
			wg.Wait()
			for i, r := range res {
				if r.failed == 0 {
					t.Logf("freeze %v, node %d: %d Next ok, 0 failed", tc.freeze, i, r.ok)
				} else {
					t.Logf("freeze %v, node %d: %d Next ok, %d failed; first failure %v after the freeze, last %v after the thaw",
						tc.freeze, i, r.ok, r.failed, r.firstFail.Sub(frozen).Round(time.Millisecond), r.lastFail.Sub(thawed).Round(time.Millisecond))
				}
				switch {
				case r.other > 0:
					t.Errorf("node %d: %d Next failed with other than ErrLeaseLost, first %v", i, r.other, r.otherErr)
				case !tc.stops && r.failed > 0:
					t.Errorf("node %d: %d Next failed over a %v freeze (first %v after it); want none", i, r.failed, tc.freeze, r.firstFail.Sub(frozen))
				case tc.stops && r.failed == 0:
					t.Errorf("node %d: no Next failed over a %v freeze; want a stop by LostAfter (%v)", i, tc.freeze, lostAfter)
				case tc.stops && (r.firstFail.Sub(frozen) > lostAfter+100*time.Millisecond || r.firstFail.Sub(frozen) < lostAfter-renewEvery-100*time.Millisecond):
					t.Errorf("node %d: stopped %v after the freeze; want %v to %v (LostAfter - RenewEvery to LostAfter)", i, r.firstFail.Sub(frozen), lostAfter-renewEvery, lostAfter)
				case tc.stops && r.lastFail.After(time.Now().Add(-100*time.Millisecond)):
					t.Errorf("node %d: still failing at the end of the test", i)
				}
			}
		})
	}
}
