package workerid_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/testenv/etcdtest"
	"github.com/idgenkit/idgen/internal/throwaway"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/workerid"
)

// issued is what one node's issuing loop saw.
type issued struct {
	ok, failed, other int       // Next calls that succeeded, failed, failed with other than ErrLeaseLost
	lastOK            time.Time // when the last Next that succeeded before the first failure was called
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
		asked := time.Now()
		_, err := g.Next(context.Background())
		now := time.Now()
		switch {
		case err == nil:
			r.ok++
			if r.firstFail.IsZero() {
				r.lastOK = asked
			}
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

// A freezable is a lease store run as separate processes for the test.
type freezable struct {
	open         func(cfg workerid.LeaseConfig) (leaseSource, error)
	freeze, thaw func() error
}

var freezables = []struct {
	name  string
	start func(t *testing.T) freezable
}{
	{"etcd", func(t *testing.T) freezable {
		e := etcdtest.StartProcess(t)
		return freezable{
			open: func(cfg workerid.LeaseConfig) (leaseSource, error) {
				return workerid.OpenEtcd(context.Background(), workerid.EtcdConfig{LeaseConfig: cfg, Endpoints: []string{e.Addr}})
			},
			freeze: e.Freeze, thaw: e.Thaw,
		}
	}},
	{"postgres", func(t *testing.T) freezable {
		c, err := throwaway.StartPostgres(context.Background(), throwaway.PostgresConfig{SharedBuffers: "16MB"})
		if err != nil {
			if testenv.CI() {
				t.Fatalf("throwaway PostgreSQL cluster under CI=true: %v", err)
			}
			t.Skipf("throwaway PostgreSQL cluster: %v", err)
		}
		var pids []int
		t.Cleanup(func() {
			signalAll(pids, syscall.SIGCONT)
			if err := c.Stop(); err != nil {
				t.Errorf("stop the throwaway cluster: %v", err)
			}
		})
		return freezable{
			open: func(cfg workerid.LeaseConfig) (leaseSource, error) {
				return workerid.OpenPostgres(context.Background(), c.DSN(), workerid.PostgresConfig{LeaseConfig: cfg})
			},
			// Every process of the cluster: the postmaster (which would
			// fork a backend for a new connection) and its children.
			freeze: func() error {
				if pids, err = clusterPids(c.DataDir()); err != nil {
					return err
				}
				return signalAll(pids, syscall.SIGSTOP)
			},
			thaw: func() error { return signalAll(pids, syscall.SIGCONT) },
		}
	}},
}

// clusterPids returns the PostgreSQL postmaster of dataDir and its children.
func clusterPids(dataDir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return nil, err
	}
	pm, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		return nil, fmt.Errorf("postmaster.pid: %v", err)
	}
	pids := []int{pm}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so after ')'.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pm) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// signalAll sends sig to every process in pids.
func signalAll(pids []int, sig syscall.Signal) error {
	var first error
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil && first == nil {
			first = fmt.Errorf("signal %v to %d: %w", sig, pid, err)
		}
	}
	return first
}

// TestProcessFreeze freezes a real lease store, run as separate processes
// (etcd; a throwaway PostgreSQL cluster, every process of it), with SIGSTOP
// and then SIGCONT, under three nodes issuing about 1,000 IDs a second
// each, on the default lease timing scaled to a TTL of 10 s (renewal every
// 1 s, lost after 5 s, a renewal round trip given up after 2 s, as in the
// fault campaign's CI size; at the defaults, TTL 30 s, the case took 23 s),
// just before a renewal (the worst time). Frozen for 2 s, no Next fails
// (the last good renewal is at most 1 s old at the freeze, so a renewal
// has 2 s after the thaw before LostAfter, as at the defaults a 10 s
// freeze left 2 s). Frozen for 7 s, every node stops (Next and Ready fail
// with ErrLeaseLost): no Next called past LostAfter after the freeze
// issues (but for the lag of the lease's timer, AheadSlack / 2), none fails
// before LostAfter - RenewEvery, and each issues again after the thaw. The four cases run at
// once, each on its own server: they mostly sleep, so they run in
// goroutines of their own rather than as parallel subtests, which
// -parallel (the cores, 2 in CI) would run two at a time.
func TestProcessFreeze(t *testing.T) {
	t.Parallel() // servers of its own; it sleeps, beside TestEtcdMemberThatHangs
	var wg sync.WaitGroup
	for _, store := range freezables {
		for _, tc := range []struct {
			freeze time.Duration
			stops  bool
		}{{2 * time.Second, false}, {7 * time.Second, true}} {
			wg.Go(func() {
				t.Run(store.name+"/"+tc.freeze.String(), func(t *testing.T) {
					testFreeze(t, store.start(t), tc.freeze, tc.stops)
				})
			})
		}
	}
	wg.Wait()
}

// testFreeze runs one case of TestProcessFreeze.
func testFreeze(t *testing.T, e freezable, freeze time.Duration, stops bool) {
	const ttl = 10 * time.Second
	cfg := workerid.LeaseConfig{Space: workerid.Space{Workers: 16}, Namespace: uniqueName(t), TTL: ttl}
	const lostAfter, renewEvery = ttl / 2, ttl / 10 // the defaults' shares of the TTL
	const maxLate = workerid.AheadSlack / 2
	var gens []*snowflake.Generator
	opened := time.Now() // the start of node 0's lease, its first renewal RenewEvery later
	for range 3 {
		s, err := e.open(cfg)
		if err != nil {
			t.Fatalf("open() = %v", err)
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
	if err := e.freeze(); err != nil {
		t.Fatalf("SIGSTOP: %v", err)
	}
	if stops {
		time.Sleep(lostAfter + 500*time.Millisecond)
		for i, g := range gens {
			if err := g.Ready(context.Background()); !errors.Is(err, idgen.ErrLeaseLost) {
				t.Errorf("node %d: Ready() %v after the freeze = %v; want ErrLeaseLost", i, time.Since(frozen), err)
			}
		}
	}
	time.Sleep(time.Until(frozen.Add(freeze)))
	if err := e.thaw(); err != nil {
		t.Fatalf("SIGCONT: %v", err)
	}
	thawed := time.Now()
	// Issue on for 2 s; after a stop, until every node issues
	// again (at most 20 s).
	time.Sleep(2 * time.Second)
	for _, g := range gens {
		for deadline := time.Now().Add(20 * time.Second); stops && g.Ready(context.Background()) != nil; time.Sleep(50 * time.Millisecond) {
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
			t.Logf("%s, node %d: %d Next ok, 0 failed", t.Name(), i, r.ok)
		} else {
			t.Logf("%s, node %d: %d Next ok, %d failed; first failure %v after the freeze, last %v after the thaw",
				t.Name(), i, r.ok, r.failed, r.firstFail.Sub(frozen).Round(time.Millisecond), r.lastFail.Sub(thawed).Round(time.Millisecond))
		}
		switch {
		case r.other > 0:
			t.Errorf("node %d: %d Next failed with other than ErrLeaseLost, first %v", i, r.other, r.otherErr)
		case !stops && r.failed > 0:
			t.Errorf("node %d: %d Next failed over a %v freeze (first %v after it); want none", i, r.failed, freeze, r.firstFail.Sub(frozen))
		case stops && r.failed == 0:
			t.Errorf("node %d: no Next failed over a %v freeze; want a stop by LostAfter (%v)", i, freeze, lostAfter)
		case stops && r.firstFail.Sub(frozen) < lostAfter-renewEvery-100*time.Millisecond:
			t.Errorf("node %d: stopped %v after the freeze; want not before %v (LostAfter - RenewEvery)", i, r.firstFail.Sub(frozen), lostAfter-renewEvery)
		case stops && r.lastOK.Sub(frozen) > lostAfter+maxLate:
			// The last good renewal started before the freeze: no Next
			// called past LostAfter after it issues, but for the lag of
			// the lease's timer at the deadline (maxLate, as in
			// TestCutStopsEveryHolder). When the first failure came is
			// this test's own goroutine's lag too: it was 405 ms past
			// LostAfter beside two busy loops, so it bounds nothing.
			t.Errorf("node %d: a Next called %v after the freeze issued; want none past LostAfter (%v) + %v", i, r.lastOK.Sub(frozen), lostAfter, maxLate)
		case stops && r.lastFail.After(time.Now().Add(-100*time.Millisecond)):
			t.Errorf("node %d: still failing at the end of the test", i)
		}
	}
}
