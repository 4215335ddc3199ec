package workerid_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/workerid"
)

// TestStoreFreeze cuts the lease store under a generator whose high-water
// mark needs raising every 50 ms of issuing. Cut for less than LostAfter
// (the issue's 10 s of 15 s, scaled to 0.5 s of 1.5 s) it keeps issuing:
// the mark written ahead at each renewal covers it, with no store round
// trip on the request path. Cut for longer, it stops with ErrLeaseLost
// within LostAfter of its last renewal.
//
// The stores run at once (atBackends): the test mostly sleeps.
func TestStoreFreeze(t *testing.T) {
	atBackends(t, func(t *testing.T, setup func(t *testing.T) backend) {
		b := setup(t)
		addr, p := b.via(t)
		cfg := workerid.LeaseConfig{Space: workerid.Space{Workers: 1}, TTL: 3 * time.Second, RenewEvery: 200 * time.Millisecond, LostAfter: 1500 * time.Millisecond}
		s := mustOpen(t, b, addr, cfg)
		g, err := snowflake.New(context.Background(), snowflake.Config{Lease: s, HighWater: s, HighWaterAhead: 50 * time.Millisecond})
		if err != nil {
			t.Fatalf("snowflake.New() = %v", err)
		}
		seen := map[idgen.ID]bool{}
		issue := func(d time.Duration) (firstErr error, at time.Duration) {
			start := time.Now()
			for time.Since(start) < d {
				id, err := g.Next(context.Background())
				if err != nil {
					return err, time.Since(start)
				}
				if seen[id] {
					t.Fatalf("duplicate ID %s", id)
				}
				seen[id] = true
				time.Sleep(time.Millisecond)
			}
			return nil, d
		}
		if err, _ := issue(300 * time.Millisecond); err != nil {
			t.Fatalf("Next() with the store up = %v", err)
		}

		p.Cut()
		err, at := issue(500 * time.Millisecond)
		p.Restore()
		if err != nil {
			t.Fatalf("Next() %v into a 500ms store cut (LostAfter %v) = %v; want IDs", at, cfg.LostAfter, err)
		}

		// Renewed again (a gRPC client may take a second to reconnect;
		// unrenewed for LostAfter, the next issue would fail), then cut
		// for longer than LostAfter.
		time.Sleep(cfg.LostAfter)
		if err, _ := issue(100 * time.Millisecond); err != nil {
			t.Fatalf("Next() after the store came back = %v", err)
		}
		p.Cut()
		err, at = issue(3 * time.Second)
		if !errors.Is(err, idgen.ErrLeaseLost) {
			t.Fatalf("Next() %v into a 3s store cut = %v; want ErrLeaseLost", at, err)
		}
		if at > cfg.LostAfter+200*time.Millisecond {
			t.Errorf("issuing stopped %v into the cut; want within LostAfter (%v)", at, cfg.LostAfter)
		}
		if at < cfg.LostAfter-cfg.RenewEvery-100*time.Millisecond {
			t.Errorf("issuing stopped %v into the cut; want not before LostAfter (%v) after the last renewal", at, cfg.LostAfter)
		}
	})
}

// TestReleaseSettlesMark: Close replaces the mark written ahead (LostAfter
// + 1 s past the last renewal) with the highest mark the generator asked
// for, so the next holder of the worker ID need not wait the rest out.
func TestReleaseSettlesMark(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			cfg, clk := onClock(fast(1))
			s := mustOpen(t, b, b.addr, cfg)
			g, err := snowflake.New(context.Background(), snowflake.Config{Lease: s, HighWater: s, HighWaterAhead: 50 * time.Millisecond})
			if err != nil {
				t.Fatalf("snowflake.New() = %v", err)
			}
			markWrittenAhead(t, clk)
			var last idgen.ID
			for range 100 {
				if last, err = g.Next(context.Background()); err != nil {
					t.Fatalf("Next() = %v", err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close() = %v", err)
			}
			s2 := mustOpen(t, b, b.addr, cfg)
			mark, err := s2.Load(context.Background())
			if err != nil || !mark.After(last.Time()) || mark.After(last.Time().Add(100*time.Millisecond)) {
				t.Fatalf("Load() after the holder's Close = %v, %v; want after the last ID's time %v by at most the generator's 50ms ahead",
					mark, err, last.Time())
			}
		})
	}
}

// TestStoreCutBounded: a generator whose mark runs past the one written
// ahead stores it synchronously; with the store cut, Next (called with a
// background context) returns within LostAfter instead of waiting for the
// store to come back.
func TestStoreCutBounded(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			addr, p := b.via(t)
			cfg, clk := onClock(fast(1))
			s := mustOpen(t, b, addr, cfg)
			markWrittenAhead(t, clk)
			// A mark an hour ahead is past the one written ahead: Store
			// makes a round trip.
			g, err := snowflake.New(context.Background(), snowflake.Config{Lease: s, HighWater: s, HighWaterAhead: time.Hour})
			if err != nil {
				t.Fatalf("snowflake.New() = %v", err)
			}
			p.Cut()
			defer p.Restore()
			// Let the clients see the cut: an etcd client then waits for a
			// new connection rather than failing the call.
			time.Sleep(100 * time.Millisecond)
			done := make(chan error, 1)
			start := time.Now()
			go func() {
				_, err := g.Next(context.Background())
				done <- err
			}()
			bound := cfg.LostAfter + 500*time.Millisecond
			select {
			case err := <-done:
				if !errors.Is(err, idgen.ErrUnavailable) && !errors.Is(err, idgen.ErrLeaseLost) {
					t.Fatalf("Next() with the store cut = %v; want ErrUnavailable or ErrLeaseLost", err)
				}
				t.Logf("Next() = %v after %v", err, time.Since(start))
				if d := time.Since(start); d > bound {
					t.Errorf("Next() with the store cut returned after %v; want within %v", d, bound)
				}
			case <-time.After(10 * bound):
				t.Fatalf("Next() with the store cut still blocked after %v; want a return within %v", 10*bound, bound)
			}
		})
	}
}
