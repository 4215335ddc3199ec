package workerid_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/workerid"
)

// TestPinnedWorkerIDHeld: on every lease store, a second holder of a
// pinned worker ID that a live lease holds is refused with
// ErrWorkerIDHeld (also idgen.ErrNoWorkerIDs), naming the ID, although
// other IDs are free; once the first holder closes, it gets that ID.
func TestPinnedWorkerIDHeld(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			pin := int64(3)
			cfg := fast(8)
			cfg.Pin = &pin
			first := mustOpen(t, b, b.addr, cfg)
			if id := first.Identity(); id == nil || id.WorkerID != 3 {
				t.Fatalf("pinned Identity() = %+v; want worker 3", id)
			}
			st := first.(idgen.LeaseStatusReporter).LeaseStatus()
			if !st.Held || st.LostAfter != cfg.LostAfter || st.SinceRenewal < 0 || st.SinceRenewal > cfg.LostAfter {
				t.Errorf("LeaseStatus() = %+v; want held, LostAfter %v, SinceRenewal in [0, LostAfter]", st, cfg.LostAfter)
			}
			s, err := b.open(context.Background(), b.addr, cfg)
			if err == nil {
				s.Close()
				t.Fatalf("second open of pinned worker ID 3 while the first holds it: got worker %+v; want ErrWorkerIDHeld", s.Identity())
			}
			if !errors.Is(err, workerid.ErrWorkerIDHeld) || !errors.Is(err, idgen.ErrNoWorkerIDs) || !strings.Contains(err.Error(), "worker ID 3 ") {
				t.Fatalf("second open = %v; want ErrWorkerIDHeld (and ErrNoWorkerIDs) naming worker ID 3", err)
			}
			// An unpinned node still gets another free ID.
			other := mustOpen(t, b, b.addr, fast(8))
			if id := other.Identity(); id == nil || id.WorkerID == 3 {
				t.Fatalf("unpinned Identity() = %+v; want a worker other than 3", id)
			}
			if err := first.Close(); err != nil {
				t.Fatalf("Close() = %v", err)
			}
			if st := first.(idgen.LeaseStatusReporter).LeaseStatus(); st.Held {
				t.Errorf("LeaseStatus() after Close = %+v; want not held", st)
			}
			again := mustOpen(t, b, b.addr, cfg)
			if id := again.Identity(); id == nil || id.WorkerID != 3 {
				t.Fatalf("pinned Identity() after the holder released it = %+v; want worker 3", id)
			}
		})
	}
}

// TestPinURL: worker_id= in a lease URL pins the worker ID; outside the
// lease space it is refused as bad input.
func TestPinURL(t *testing.T) {
	dsn := postgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("table", pgTable(t, dsn))
	q.Set("workers", "8")
	q.Set("worker_id", "5")
	u.RawQuery = q.Encode()
	space := workerid.Space{Workers: 32}
	s, err := workerid.Open(context.Background(), u.String(), space)
	if err != nil {
		t.Fatalf("Open(worker_id=5) = %v", err)
	}
	defer s.Close()
	if id := s.Identity(); id == nil || id.WorkerID != 5 {
		t.Fatalf("Identity() = %+v; want worker 5", id)
	}
	if s2, err := workerid.Open(context.Background(), u.String(), space); !errors.Is(err, workerid.ErrWorkerIDHeld) {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("second Open(worker_id=5) = %v; want ErrWorkerIDHeld", err)
	}
	q.Set("worker_id", "8")
	u.RawQuery = q.Encode()
	_, err = workerid.Open(context.Background(), u.String(), space)
	if !errors.Is(err, workerid.ErrConfig) || !strings.Contains(err.Error(), `worker_id "8": want an integer in [0, 7]`) {
		t.Fatalf("Open(workers=8&worker_id=8) = %v; want ErrConfig naming the range [0, 7]", err)
	}
}

// TestLeaseStatusAge: a lease's status, on a test clock, while its store
// is cut: the renewal age grows with the clock and the lease stays held
// until the age reaches LostAfter; then it is lost, and the age goes on
// counting from the last good renewal.
func TestLeaseStatusAge(t *testing.T) {
	b := backends[0].setup(t) // postgres
	addr, p := b.via(t)
	cfg, clk := onClock(fast(4))
	s := mustOpen(t, b, addr, cfg)
	markWrittenAhead(t, clk)
	status := func() idgen.LeaseStatus { return s.(idgen.LeaseStatusReporter).LeaseStatus() }
	if st := status(); st != (idgen.LeaseStatus{Held: true, LostAfter: time.Second}) {
		t.Fatalf("LeaseStatus() after open = %+v; want held, 0s old, LostAfter 1s", st)
	}
	p.Cut()
	clk.Add(400 * time.Millisecond) // past a renewal, which fails
	if st := status(); st != (idgen.LeaseStatus{Held: true, SinceRenewal: 400 * time.Millisecond, LostAfter: time.Second}) {
		t.Errorf("LeaseStatus() 400ms after the last renewal = %+v; want held, 400ms old", st)
	}
	lost := s.Lost()
	clk.Add(700 * time.Millisecond)
	select {
	case <-lost:
	case <-time.After(10 * time.Second):
		t.Fatal("lease not lost 10 s after the test clock passed LostAfter")
	}
	if st := status(); st != (idgen.LeaseStatus{Held: false, SinceRenewal: 1100 * time.Millisecond, LostAfter: time.Second}) {
		t.Errorf("LeaseStatus() after LostAfter = %+v; want not held, 1.1s old", st)
	}
}
