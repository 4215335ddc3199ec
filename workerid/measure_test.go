package workerid_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/workerid"
)

// TestCutStopsEveryHolder cuts the store under four holders and measures
// how long each keeps issuing: every one must fail with ErrLeaseLost
// LostAfter after the start of its last good renewal, which started
// before the cut, not before that and not much after.
//
// The bounds count from each lease's last renewal (LeaseStatus after
// ErrLeaseLost), not from the cut, and bound the time a Next was asked
// for, not the time the test saw it fail. Before, the test wanted the last
// holder to see ErrLeaseLost within LostAfter + 100 ms of the cut: that
// counted the lag of the lease's expiry timer and goroutine and of the
// four holder goroutines' own wake-ups (5 ms sleeps, -race, four leases'
// renewal goroutines). Beside two busy loops the zk case saw it 1.13 s
// after the cut in 1 run of 10 (1.16 s in an earlier report). No renewal
// can succeed after the cut (each is a store round trip through the cut
// proxy), so the identity's deadline is at most LostAfter after it; the
// lag past the deadline is the machine's, bounded by maxLate below.
func TestCutStopsEveryHolder(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			addr, p := b.via(t)
			cfg := fast(32)
			const holders = 4
			leases := make([]leaseSource, holders)
			gens := make([]*snowflake.Generator, holders)
			for i := range gens {
				s := mustOpen(t, b, addr, cfg)
				// No HighWater store: its writes would go through the cut
				// proxy; the lease alone decides.
				g, err := snowflake.New(context.Background(), snowflake.Config{Lease: s})
				if err != nil {
					t.Fatalf("snowflake.New() = %v", err)
				}
				leases[i], gens[i] = s, g
			}
			p.Cut()
			cut := time.Now() // every connection through the proxy is closed
			// LeaseStatus reads the wall clock, the lease's timers the
			// monotonic one: they may part by NTP's slew, under a
			// millisecond over LostAfter (clockSlack). A Next asked for
			// after the deadline may still issue until the lease's timer
			// at the deadline has fired and its goroutine run (the mark
			// written ahead reaches AheadSlack past the deadline): beside
			// two busy loops, under -race, that lag was 77 ms at most in
			// about 500 runs of TestStoreFreeze and 110 ms at most in 99
			// runs of this test (five stores), median 0; maxLate is half
			// of AheadSlack. The test saw ErrLeaseLost up to 295 ms after
			// a deadline in those runs: its own goroutines' lag, not
			// bounded here.
			const (
				clockSlack = 5 * time.Millisecond
				maxLate    = workerid.AheadSlack / 2
			)
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				worst    time.Duration    // the last failure after the cut
				seen     time.Duration    // the latest failure after its deadline
				lateness = -cfg.LostAfter // the latest Next that issued, after its deadline
			)
			for i, g := range gens {
				wg.Go(func() {
					var lastIssued, failed time.Time // the start of the last Next that issued; the end of the first that failed
					for {
						called := time.Now()
						_, err := g.Next(context.Background())
						if errors.Is(err, idgen.ErrLeaseLost) {
							failed = time.Now()
							break
						}
						if err != nil {
							t.Errorf("holder %d: Next() = %v; want an ID or ErrLeaseLost", i, err)
							return
						}
						if called.Sub(cut) > cfg.TTL {
							t.Errorf("holder %d: Next() asked for %v after the cut issued (LostAfter %v, TTL %v)", i, called.Sub(cut), cfg.LostAfter, cfg.TTL)
							return
						}
						lastIssued = called
						time.Sleep(5 * time.Millisecond)
					}
					st := leases[i].(idgen.LeaseStatusReporter).LeaseStatus()
					last := time.Now().Add(-st.SinceRenewal)
					lost := last.Add(cfg.LostAfter)
					if st.Held {
						t.Errorf("holder %d: LeaseStatus() after ErrLeaseLost: held; want not held", i)
					}
					if last.After(cut.Add(clockSlack)) {
						t.Errorf("holder %d: last good renewal started %v after the store was cut; want before it", i, last.Sub(cut))
					}
					if failed.Before(lost.Add(-clockSlack)) {
						t.Errorf("holder %d: ErrLeaseLost %v after the last renewal's start; want not before LostAfter (%v)", i, failed.Sub(last), cfg.LostAfter)
					}
					if lastIssued.After(lost.Add(maxLate)) {
						t.Errorf("holder %d: Next() issued an ID when asked %v after the last renewal's start; want none past LostAfter (%v) + %v", i, lastIssued.Sub(last), cfg.LostAfter, maxLate)
					}
					mu.Lock()
					worst = max(worst, failed.Sub(cut))
					seen = max(seen, failed.Sub(lost))
					if !lastIssued.IsZero() {
						lateness = max(lateness, lastIssued.Sub(lost))
					}
					mu.Unlock()
				})
			}
			wg.Wait()
			t.Logf("%s: %d holders saw ErrLeaseLost within %v of the cut, %v after their deadlines; the latest Next that issued was asked %v after its deadline (LostAfter %v, TTL %v)",
				bk.name, holders, worst.Round(time.Millisecond), seen.Round(time.Millisecond), lateness.Round(time.Millisecond), cfg.LostAfter, cfg.TTL)
		})
	}
}

// TestNoDuplicatesAcrossRestarts restarts nodes on one worker ID, one after
// the other, each issuing a burst: no ID repeats.
func TestNoDuplicatesAcrossRestarts(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			// The default timings (LostAfter 15 s): fast()'s LostAfter of
			// 1 s lost the lease mid-burst beside two busy loops (etcd,
			// MariaDB: "Next() = ... worker ID lease lost" at restart 0, a
			// renewal that did not come back within 700 ms). Nothing here
			// waits for the TTL: Close releases the ID for the next node.
			cfg := workerid.LeaseConfig{Space: workerid.Space{Workers: 1}}
			// The generators' clock: the next node waits out the mark the
			// last one left on it at once.
			clk := idgentest.NewClock(time.Now())
			seen := map[idgen.ID]bool{}
			for restart := range 5 {
				s := mustOpen(t, b, b.addr, cfg)
				g, err := snowflake.New(context.Background(), snowflake.Config{Lease: s, HighWater: s, Rollback: snowflake.Wait, Clock: clk})
				if err != nil {
					t.Fatalf("snowflake.New() = %v", err)
				}
				for range 2000 {
					id, err := g.Next(context.Background())
					if err != nil {
						t.Fatalf("restart %d: Next() = %v", restart, err)
					}
					if seen[id] {
						t.Fatalf("restart %d: ID %v issued twice", restart, id)
					}
					seen[id] = true
				}
				if err := s.Close(); err != nil {
					t.Fatalf("Close() = %v", err)
				}
			}
		})
	}
}
