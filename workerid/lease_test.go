package workerid_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/workerid"
)

// leaseSource is what both leases are: a Source and a HighWaterStore.
type leaseSource interface {
	workerid.Source
	snowflake.HighWaterStore
}

// backend is one coordination store under test.
type backend struct {
	addr string // DSN or etcd host:port, direct
	open func(ctx context.Context, addr string, cfg workerid.LeaseConfig) (leaseSource, error)
	// via returns an address reaching the store through a cuttable proxy.
	via func(t *testing.T) (string, *proxy)
}

var backends = []struct {
	name  string
	setup func(t *testing.T) backend
}{
	{"postgres", func(t *testing.T) backend {
		dsn := postgresDSN(t)
		table := pgTable(t, dsn)
		return backend{
			addr: dsn,
			open: func(ctx context.Context, addr string, cfg workerid.LeaseConfig) (leaseSource, error) {
				s, err := workerid.OpenPostgres(ctx, addr, workerid.PostgresConfig{LeaseConfig: cfg, Table: table})
				if err != nil {
					return nil, err
				}
				return s, nil
			},
			via: func(t *testing.T) (string, *proxy) { return viaProxy(t, dsn) },
		}
	}},
	{"etcd", func(t *testing.T) backend {
		host := sharedEtcd(t)
		ns := uniqueName(t)
		return backend{
			addr: host,
			open: func(ctx context.Context, addr string, cfg workerid.LeaseConfig) (leaseSource, error) {
				cfg.Namespace = ns
				// 10 s: 64 clients dialling at once under -race on a loaded
				// machine take more than 2 s.
				s, err := workerid.OpenEtcd(ctx, workerid.EtcdConfig{LeaseConfig: cfg, Endpoints: []string{addr}, DialTimeout: 10 * time.Second})
				if err != nil {
					return nil, err
				}
				return s, nil
			},
			via: func(t *testing.T) (string, *proxy) { p := newProxy(t, host); return p.Addr(), p },
		}
	}},
}

// fast is a lease configuration that renews and expires quickly.
func fast(workers int64) workerid.LeaseConfig {
	return workerid.LeaseConfig{Space: workerid.Space{Workers: workers}, TTL: 2 * time.Second, RenewEvery: 300 * time.Millisecond, LostAfter: time.Second}
}

// onClock returns cfg on a test clock that stands still until the test
// moves it: the lease renews, and counts LostAfter, only when told to.
func onClock(cfg workerid.LeaseConfig) (workerid.LeaseConfig, *idgentest.Clock) {
	clk := idgentest.NewClock(time.Now())
	cfg.Clock = clk
	return cfg, clk
}

// markWrittenAhead waits until a lease on clk, just opened, has written its
// first high-water mark ahead: its renewal goroutine arms the renewal timer
// (beside the LostAfter timer armed at open) right after that write.
func markWrittenAhead(t *testing.T, clk *idgentest.Clock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for clk.Pending() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the lease armed %d timers in 10s; want its LostAfter and renewal timers", clk.Pending())
		}
		time.Sleep(time.Millisecond)
	}
}

func mustOpen(t *testing.T, b backend, addr string, cfg workerid.LeaseConfig) leaseSource {
	t.Helper()
	s, err := b.open(context.Background(), addr, cfg)
	if err != nil {
		t.Fatalf("open(%q) = %v", addr, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConcurrentAcquire(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			const n = 64
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				sources []leaseSource
				errs    []error
			)
			// 5 bits; a long TTL (ZooKeeper grants sessions of at most 1 min
			// here), so that on a loaded machine no holder counts
			// itself lost while the 64 acquirers are still opening.
			cfg := workerid.LeaseConfig{Space: workerid.Space{Workers: 32}, TTL: time.Minute}
			for range n {
				wg.Go(func() {
					s, err := b.open(context.Background(), b.addr, cfg)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						errs = append(errs, err)
						return
					}
					sources = append(sources, s)
				})
			}
			wg.Wait()
			defer func() {
				for _, s := range sources {
					s.Close()
				}
			}()
			seen := map[int64]bool{}
			for _, s := range sources {
				ident := s.Identity()
				if ident == nil {
					t.Fatalf("Identity() of an opened source = nil")
				}
				if seen[ident.WorkerID] || ident.WorkerID < 0 || ident.WorkerID > 31 {
					t.Fatalf("worker ID %d held twice or outside [0, 31]", ident.WorkerID)
				}
				seen[ident.WorkerID] = true
			}
			if len(sources) != 32 {
				t.Fatalf("%d of %d acquirers succeeded; want 32 (errors: %v)", len(sources), n, errs)
			}
			for _, err := range errs {
				if !errors.Is(err, idgen.ErrNoWorkerIDs) {
					t.Fatalf("acquire error = %v; want ErrNoWorkerIDs", err)
				}
			}
			// Close releases: the next acquirer gets the ID at once.
			freed := sources[0].Identity().WorkerID
			if err := sources[0].Close(); err != nil {
				t.Fatalf("Close() = %v", err)
			}
			if got := sources[0].Identity(); got != nil {
				t.Fatalf("Identity() after Close = %+v; want nil", got)
			}
			s := mustOpen(t, b, b.addr, cfg)
			if got := s.Identity().WorkerID; got != freed {
				t.Fatalf("worker ID after a Close released %d = %d; want %d", freed, got, freed)
			}
		})
	}
}

// TestLeaseLostAndReacquired: the stores run at once (atBackends), as the
// test mostly waits for their TTL.
func TestLeaseLostAndReacquired(t *testing.T) {
	atBackends(t, func(t *testing.T, setup func(t *testing.T) backend) {
		b := setup(t)
		addr, p := b.via(t)
		cfg, clk := onClock(fast(1)) // one worker ID: the successor must get the same
		holder := mustOpen(t, b, addr, cfg)
		first := holder.Identity()
		if first == nil || first.WorkerID != 0 {
			t.Fatalf("Identity() = %+v; want worker 0", first)
		}
		g, err := snowflake.New(context.Background(), snowflake.Config{Lease: holder, HighWater: holder})
		if err != nil {
			t.Fatalf("snowflake.New() = %v", err)
		}
		if _, err := g.Next(context.Background()); err != nil {
			t.Fatalf("Next() under the lease = %v", err)
		}
		lost := holder.Lost()
		select {
		case <-lost:
			t.Fatalf("Lost() closed while the lease is renewed")
		default:
		}
		cut := time.Now()
		p.Cut()
		// While the holder's lease is alive on the server nobody else
		// may take the ID.
		if s, err := b.open(context.Background(), b.addr, cfg); !errors.Is(err, idgen.ErrNoWorkerIDs) {
			if s != nil {
				s.Close()
			}
			t.Fatalf("open() while the holder's lease is alive = %v; want ErrNoWorkerIDs", err)
		}
		// The holder reports lost before its lease can expire: within
		// LostAfter of its last renewal (at open: its clock stood still
		// since), so before cut + TTL.
		clk.Add(cfg.LostAfter)
		select {
		case <-lost:
		case <-time.After(time.Until(cut.Add(cfg.TTL))):
			t.Fatalf("lease not reported lost %v after its store was cut (TTL %v)", time.Since(cut), cfg.TTL)
		}
		if got := holder.Identity(); got != nil {
			t.Fatalf("Identity() after lost = %+v; want nil", got)
		}
		if id, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrLeaseLost) {
			t.Fatalf("Next() after lost = %v, %v; want ErrLeaseLost", id, err)
		}
		dst := make([]idgen.ID, 8)
		if n, err := g.NextN(context.Background(), dst); n != 0 || !errors.Is(err, idgen.ErrLeaseLost) {
			t.Fatalf("NextN() after lost = %d, %v; want 0, ErrLeaseLost", n, err)
		}
		// After the TTL another node takes the ID, with a higher
		// generation.
		var next leaseSource
		deadline := time.Now().Add(3 * cfg.TTL)
		for {
			s, err := b.open(context.Background(), b.addr, cfg)
			if err == nil {
				next = s
				t.Cleanup(func() { s.Close() })
				break
			}
			if !errors.Is(err, idgen.ErrNoWorkerIDs) || time.Now().After(deadline) {
				t.Fatalf("open() after the TTL = %v; want the ID", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if since := time.Since(cut); since < cfg.LostAfter {
			t.Fatalf("successor acquired %v after the cut, before the holder's LostAfter %v", since, cfg.LostAfter)
		}
		got := next.Identity()
		if got.WorkerID != first.WorkerID || got.Generation <= first.Generation {
			t.Fatalf("successor identity %+v; want worker %d, generation above %d", got, first.WorkerID, first.Generation)
		}
		if id := holder.Identity(); id != nil {
			t.Fatalf("cut holder's Identity() = %+v while the successor holds the ID; want nil", id)
		}
	})
}

// atBackends runs f as a subtest per backend, all at once, each in a
// goroutine of its own: for tests that mostly sleep through lease timing,
// which -parallel (the cores, 2 in CI) would run two at a time, the others
// waiting.
func atBackends(t *testing.T, f func(t *testing.T, setup func(t *testing.T) backend)) {
	var wg sync.WaitGroup
	for _, bk := range backends {
		wg.Go(func() { t.Run(bk.name, func(t *testing.T) { f(t, bk.setup) }) })
	}
	wg.Wait()
}

func TestHighWaterRestart(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			cfg := fast(1)
			now := time.Now().Truncate(time.Millisecond)
			a := mustOpen(t, b, b.addr, cfg)
			ga, err := snowflake.New(context.Background(), snowflake.Config{Lease: a, HighWater: a, Clock: idgentest.NewClock(now)})
			if err != nil {
				t.Fatalf("snowflake.New() = %v", err)
			}
			last, err := ga.Next(context.Background())
			if err != nil {
				t.Fatalf("Next() = %v", err)
			}
			a.Close()
			for _, tc := range []struct {
				name   string
				policy snowflake.Policy
			}{{"fail", snowflake.Fail}, {"wait", snowflake.Wait}} {
				t.Run(tc.name, func(t *testing.T) {
					s := mustOpen(t, b, b.addr, cfg)
					mark, err := s.Load(context.Background())
					if err != nil || mark.Before(now) {
						t.Fatalf("Load() = %v, %v; want a mark at or after %v", mark, err, now)
					}
					clk := idgentest.NewClock(now.Add(-5 * time.Second)) // behind the mark
					g, err := snowflake.New(context.Background(), snowflake.Config{Lease: s, HighWater: s, Clock: clk, Rollback: tc.policy})
					if err != nil {
						t.Fatalf("snowflake.New() = %v", err)
					}
					id, err := g.Next(context.Background())
					if tc.policy == snowflake.Fail {
						var rb *idgen.ClockRollbackError
						if !errors.As(err, &rb) || rb.Drift < 5*time.Second {
							t.Fatalf("Next() behind the mark = %v, %v; want ClockRollbackError of 5s or more", id, err)
						}
						s.Close()
						return
					}
					if err != nil || id.Compare(last) <= 0 || clk.Slept() < 5*time.Second {
						t.Fatalf("Next() behind the mark under wait = %v, %v (slept %v); want an ID after %v, having waited >= 5s", id, err, clk.Slept(), last)
					}
					s.Close()
				})
			}
		})
	}
}

// A worker ID released a moment ago carries a high-water mark ahead of the
// clock; the next node takes a free ID whose mark has passed instead, and
// the one ahead only when no other is free.
func TestAcquirePrefersPassedMarks(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			cfg := fast(3)
			worker := func(s leaseSource) int64 {
				t.Helper()
				id := s.Identity()
				if id == nil {
					t.Fatal("Identity() = nil after open")
				}
				return id.WorkerID
			}
			a := mustOpen(t, b, b.addr, cfg)
			if w := worker(a); w != 0 {
				t.Fatalf("first worker = %d; want 0", w)
			}
			if err := a.Store(context.Background(), time.Now().Add(time.Minute)); err != nil {
				t.Fatalf("Store() = %v", err)
			}
			a.Close()
			bs := mustOpen(t, b, b.addr, cfg)
			defer bs.Close()
			if w := worker(bs); w != 1 {
				t.Fatalf("worker after 0 was released with a mark 1 min ahead = %d; want 1", w)
			}
			c := mustOpen(t, b, b.addr, cfg)
			defer c.Close()
			if w := worker(c); w != 2 {
				t.Fatalf("third worker = %d; want 2", w)
			}
			d := mustOpen(t, b, b.addr, cfg)
			defer d.Close()
			if w := worker(d); w != 0 {
				t.Fatalf("fourth worker = %d; want 0, the only one free", w)
			}
		})
	}
}

// A restart inside the high-water window: the state file names the worker
// ID this node held a moment ago, whose mark is still ahead. The node takes a
// free ID whose mark has passed instead; when every free ID's mark is ahead,
// the one with the earliest mark.
func TestStateFileYieldsToPassedMarks(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			cfg := fast(3)
			cfg.StateFile = filepath.Join(t.TempDir(), "worker-id")
			now := time.Now().Truncate(time.Millisecond) // PostgreSQL keeps µs
			hold := func(want int64, mark time.Time) {
				t.Helper()
				s := mustOpen(t, b, b.addr, cfg)
				if got := s.Identity().WorkerID; got != want {
					t.Fatalf("worker ID = %d; want %d", got, want)
				}
				if err := s.Store(context.Background(), mark); err != nil {
					t.Fatalf("Store(%v) = %v", mark, err)
				}
				if err := s.Close(); err != nil {
					t.Fatalf("Close() = %v", err)
				}
			}
			hold(0, now.Add(time.Minute)) // released with its mark 1 min ahead
			s := mustOpen(t, b, b.addr, cfg)
			if got := s.Identity().WorkerID; got != 1 {
				t.Fatalf("worker ID on restart, state file naming 0 whose mark is 1 min ahead = %d; want 1, free and without a mark", got)
			}
			if err := s.Store(context.Background(), now.Add(2*time.Minute)); err != nil {
				t.Fatalf("Store() = %v", err)
			}
			other := mustOpen(t, b, b.addr, workerid.LeaseConfig{Space: cfg.Space, TTL: cfg.TTL, RenewEvery: cfg.RenewEvery, LostAfter: cfg.LostAfter})
			if got := other.Identity().WorkerID; got != 2 {
				t.Fatalf("third node's worker ID = %d; want 2", got)
			}
			if err := other.Store(context.Background(), now.Add(3*time.Minute)); err != nil {
				t.Fatalf("Store() = %v", err)
			}
			s.Close()
			other.Close()
			// Every ID's mark is ahead; the state file names 1 (2 min), the
			// earliest is 0's (1 min).
			s = mustOpen(t, b, b.addr, cfg)
			if got := s.Identity().WorkerID; got != 0 {
				t.Fatalf("worker ID when every mark is ahead = %d; want 0, the earliest mark", got)
			}
			if mark, err := s.Load(context.Background()); err != nil || !mark.Equal(now.Add(time.Minute)) {
				t.Fatalf("Load() = %v, %v; want %v", mark, err, now.Add(time.Minute))
			}
		})
	}
}

func TestStateFile(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			state := filepath.Join(t.TempDir(), "worker-id")
			cfg := workerid.LeaseConfig{Space: workerid.Space{Workers: 8}}
			other := mustOpen(t, b, b.addr, cfg) // takes 0
			withState := cfg
			withState.StateFile = state
			a := mustOpen(t, b, b.addr, withState)
			want := a.Identity().WorkerID
			if want == 0 {
				t.Fatalf("second acquirer got worker 0, held by the first")
			}
			data, err := os.ReadFile(state)
			if err != nil {
				t.Fatalf("state file: %v", err)
			}
			if err := a.Close(); err != nil {
				t.Fatalf("Close() of worker %d = %v", want, err)
			}
			if err := other.Close(); err != nil { // 0 is free again; the state file should win
				t.Fatalf("Close() of worker 0 = %v", err)
			}
			again := mustOpen(t, b, b.addr, withState)
			if got := again.Identity().WorkerID; got != want {
				t.Fatalf("worker ID on restart with state file %q = %d; want %d", data, got, want)
			}
		})
	}
}

func TestUnreachableAtStartup(t *testing.T) {
	ln := freePort(t) // nothing listens here
	addr := "127.0.0.1:" + itoa(ln)
	cfg := workerid.LeaseConfig{}
	_, err := workerid.OpenPostgres(context.Background(), "postgres://postgres@"+addr+"/postgres?sslmode=disable&connect_timeout=2", workerid.PostgresConfig{LeaseConfig: cfg})
	if !errors.Is(err, idgen.ErrUnavailable) {
		t.Fatalf("OpenPostgres(%s) = %v; want ErrUnavailable", addr, err)
	}
	_, err = workerid.OpenEtcd(context.Background(), workerid.EtcdConfig{LeaseConfig: cfg, Endpoints: []string{addr}, DialTimeout: 500 * time.Millisecond})
	if !errors.Is(err, idgen.ErrUnavailable) {
		t.Fatalf("OpenEtcd(%s) = %v; want ErrUnavailable", addr, err)
	}
}

func TestBadLeaseConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  workerid.LeaseConfig
	}{
		{"lost after TTL", workerid.LeaseConfig{TTL: 2 * time.Second, LostAfter: 2 * time.Second}},
		{"renew after lost", workerid.LeaseConfig{TTL: 3 * time.Second, RenewEvery: 2 * time.Second, LostAfter: time.Second}},
		{"negative max", workerid.LeaseConfig{Space: workerid.Space{Workers: -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := workerid.OpenPostgres(context.Background(), "postgres://127.0.0.1:1/x", workerid.PostgresConfig{LeaseConfig: tt.cfg})
			if !errors.Is(err, workerid.ErrConfig) {
				t.Fatalf("OpenPostgres(%+v) = %v; want ErrConfig", tt.cfg, err)
			}
			_, err = workerid.OpenEtcd(context.Background(), workerid.EtcdConfig{LeaseConfig: tt.cfg, Endpoints: []string{"127.0.0.1:1"}})
			if !errors.Is(err, workerid.ErrConfig) {
				t.Fatalf("OpenEtcd(%+v) = %v; want ErrConfig", tt.cfg, err)
			}
		})
	}
}

// TestEtcdServerStopped stops the (private) etcd process under a holder.
func TestEtcdServerStopped(t *testing.T) {
	e, host, err := startEtcd(t, t.TempDir())
	if err != nil {
		t.Fatalf("etcd process: %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			e.Close()
		}
	}()
	cfg := fast(4)
	s, err := workerid.OpenEtcd(context.Background(), workerid.EtcdConfig{LeaseConfig: cfg, Endpoints: []string{host}})
	if err != nil {
		t.Fatalf("OpenEtcd() = %v", err)
	}
	defer s.Close()
	g, err := snowflake.New(context.Background(), snowflake.Config{Lease: s})
	if err != nil {
		t.Fatalf("snowflake.New() = %v", err)
	}
	if _, err := g.Next(context.Background()); err != nil {
		t.Fatalf("Next() = %v", err)
	}
	lost := s.Lost()
	stop := time.Now()
	e.Close()
	stopped = true
	select {
	case <-lost:
	case <-time.After(cfg.TTL):
		t.Fatalf("lease not reported lost %v after etcd stopped (TTL %v)", time.Since(stop), cfg.TTL)
	}
	if _, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("Next() after etcd stopped = %v; want ErrLeaseLost", err)
	}
}

// TestReacquireAfterRestore cuts a holder's store and restores it: the
// holder reports lost, then acquires the ID again under a higher
// generation, and its generator issues again. The stores run at once
// (atBackends): each mostly waits, for its client to reconnect and its
// store to let the ID go (0.3-2.5 s a store), and the bounds are the
// TTL and 4 TTLs of real time, the lease's own time a test clock.
func TestReacquireAfterRestore(t *testing.T) {
	atBackends(t, func(t *testing.T, setup func(t *testing.T) backend) {
		b := setup(t)
		addr, p := b.via(t)
		cfg, clk := onClock(fast(1))
		holder := mustOpen(t, b, addr, cfg)
		first := holder.Identity()
		// Hold: the mark the cut holder wrote ahead at its last renewal
		// may still be ahead of the clock when it takes its ID back; the
		// generator counts on from it instead of failing for up to a
		// second (which made this test depend on the machine's load).
		g, err := snowflake.New(context.Background(), snowflake.Config{Lease: holder, HighWater: holder, Rollback: snowflake.Hold})
		if err != nil {
			t.Fatalf("snowflake.New() = %v", err)
		}
		before, err := g.Next(context.Background())
		if err != nil {
			t.Fatalf("Next() = %v", err)
		}
		lost := holder.Lost()
		p.Cut()
		clk.Add(cfg.LostAfter) // past the deadline of the renewal at open
		select {
		case <-lost:
		case <-time.After(cfg.TTL):
			t.Fatalf("lease not reported lost within the TTL %v", cfg.TTL)
		}
		if _, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrLeaseLost) {
			t.Fatalf("Next() while lost = %v; want ErrLeaseLost", err)
		}
		p.Restore()
		deadline := time.Now().Add(4 * cfg.TTL)
		for holder.Identity() == nil {
			if time.Now().After(deadline) {
				t.Fatalf("holder did not reacquire within %v of the restore", 4*cfg.TTL)
			}
			clk.Add(cfg.RenewEvery / 4) // the retry interval: acquire again
			time.Sleep(50 * time.Millisecond)
		}
		again := holder.Identity()
		if again == first || again.WorkerID != first.WorkerID || again.Generation <= first.Generation {
			t.Fatalf("reacquired identity %+v after %+v; want a new identity of worker %d with a higher generation", again, first, first.WorkerID)
		}
		select {
		case <-holder.Lost():
			t.Fatalf("Lost() of the reacquired identity is closed")
		default:
		}
		after, err := g.Next(context.Background())
		if err != nil || after.Compare(before) <= 0 {
			t.Fatalf("Next() after reacquire = %v, %v; want an ID after %v", after, err, before)
		}
	})
}
