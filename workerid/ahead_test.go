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
// LostAfter after the start of its last renewal, not before.
//
// Every bound counts from the lease's own last renewal (LeaseStatus), not
// from the cut, and each cut starts once a renewal's mark written ahead
// has landed (MarkAhead), waited for, not slept for. Before, the bounds
// counted from the cut, which assumed a renewal at most RenewEvery + 100
// ms before it: beside two busy loops the last renewal before a cut
// started up to 660 ms before it (a renewal comes RenewEvery after the
// last one's two round trips), and 3 runs in 20 stopped issuing 1.12-1.18
// s into the cut, under the 1.2 s allowed. Waiting for the mark, not the
// renewal alone: a ZooKeeper mark landed up to 1.1 s after its renewal
// beside two busy loops, and a cut before that cost a request (Store made
// a round trip). Left to the machine: the short cut's margin (below) and
// how long the lease's expiry timer and goroutine lag behind the deadline
// while Next still issues (maxLate).
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
		// renewal returns the start of the last good renewal (or acquire)
		// and whether the lease is held. LeaseStatus reads the wall clock,
		// the lease's timers the monotonic one: they may part by NTP's
		// slew, under a millisecond over LostAfter (clockSlack).
		const clockSlack = 5 * time.Millisecond
		renewal := func() (time.Time, bool) {
			st := s.(idgen.LeaseStatusReporter).LeaseStatus()
			return time.Now().Add(-st.SinceRenewal), st.Held
		}
		ahead := s.(interface{ MarkAhead() time.Time }).MarkAhead
		// landedAfter waits until a renewal that started after t0 has
		// succeeded and the mark it writes ahead (its start + LostAfter +
		// AheadSlack) has landed, and returns the renewal's start.
		landedAfter := func(t0 time.Time, why string) time.Time {
			deadline := time.Now().Add(10 * time.Second)
			for {
				r, held := renewal()
				if held && r.After(t0.Add(clockSlack)) && !ahead().Before(r.Add(cfg.LostAfter+workerid.AheadSlack-clockSlack)) {
					return r
				}
				if time.Now().After(deadline) {
					t.Fatalf("no renewal with its mark written ahead %s within 10s (last renewal %v ago, held %v; mark ahead %v)", why, time.Since(r), held, ahead())
				}
				time.Sleep(time.Millisecond)
			}
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

		// A short cut: the lease lasts LostAfter from the renewal's start,
		// the cut takes 500 ms of it. The cut starts at most half of the
		// 1 s left after a renewal whose mark landed (a ZooKeeper mark
		// took up to 1.1 s to land beside two busy loops): the renewal
		// goroutine writes it, then waits RenewEvery, then renews.
		r := landedAfter(time.Now(), "with the store up")
		for time.Since(r) > (cfg.LostAfter-500*time.Millisecond)/2 {
			r = landedAfter(r, "with the store up")
		}
		p.Cut()
		late := time.Since(r)
		err, at := issue(500 * time.Millisecond)
		p.Restore()
		restored := time.Now()
		if err != nil {
			t.Fatalf("Next() %v into a 500ms store cut that began %v after the last renewal's start (LostAfter %v) = %v; want IDs", at, late, cfg.LostAfter, err)
		}

		// Renewed again (a gRPC client may take a second to reconnect, a
		// ZooKeeper client longer to write the mark), then cut for longer
		// than LostAfter.
		landedAfter(restored, "after the store came back")
		if err, _ := issue(100 * time.Millisecond); err != nil {
			t.Fatalf("Next() after the store came back and the lease renewed = %v", err)
		}
		landedAfter(time.Now(), "before the long cut")
		p.Cut()
		cut := time.Now()
		var lastIssued, failed time.Time // the start of the last Next that issued; the end of the first that failed
		for {
			called := time.Now()
			id, err := g.Next(context.Background())
			if err != nil {
				failed = time.Now()
				if !errors.Is(err, idgen.ErrLeaseLost) {
					t.Fatalf("Next() %v into a store cut = %v; want ErrLeaseLost", failed.Sub(cut), err)
				}
				break
			}
			if called.Sub(cut) > 2*cfg.LostAfter {
				t.Fatalf("Next() still issues %v into a store cut; want ErrLeaseLost LostAfter (%v) after the last renewal", called.Sub(cut), cfg.LostAfter)
			}
			if seen[id] {
				t.Fatalf("duplicate ID %s", id)
			}
			seen[id] = true
			lastIssued = called
			time.Sleep(time.Millisecond)
		}
		last, held := renewal()
		lost := last.Add(cfg.LostAfter)
		t.Logf("short cut %v after its renewal's start; long cut %v after the last renewal's start; ErrLeaseLost %v after LostAfter; last ID asked for %v after it", late, cut.Sub(last), failed.Sub(lost), lastIssued.Sub(lost))
		if held {
			t.Errorf("LeaseStatus() after ErrLeaseLost: held; want not held")
		}
		if failed.Before(lost.Add(-clockSlack)) {
			t.Errorf("Next() failed %v after the last renewal's start; want not before LostAfter (%v)", failed.Sub(last), cfg.LostAfter)
		}
		// The identity goes when the lease's timer at the deadline has
		// fired and its goroutine run: a Next started in between still
		// issues, under the mark written ahead, which reaches AheadSlack
		// (1 s) past the deadline. Beside two busy loops (load about 20)
		// that lag was under 1 ms in half of 500 runs, 77 ms at most;
		// maxLate is half of AheadSlack.
		const maxLate = workerid.AheadSlack / 2
		if lastIssued.After(lost.Add(maxLate)) {
			t.Errorf("Next() issued an ID when asked %v after the last renewal's start; want none past LostAfter (%v) + %v", lastIssued.Sub(last), cfg.LostAfter, maxLate)
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
