package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/throwaway"
	"github.com/idgenkit/idgen/migrate"
)

// standby starts a throwaway primary (initdb; the shared server does not
// accept replication connections) and a streaming standby of it
// (pg_basebackup -R, a second postmaster on a loopback port), both stopped
// when the test ends. It returns connections to both.
func standby(t *testing.T) (primary, replica *pgx.Conn) {
	t.Helper()
	fail := t.Skipf
	if testenv.CI() {
		fail = t.Fatalf
	}
	// The newest server with pg_basebackup beside it (the npm registry's
	// PostgreSQL 18 that FindPostgres may prefer ships none).
	bin, newest := "", -1
	for _, d := range throwaway.PostgresDirs() {
		if _, err := os.Stat(filepath.Join(d, "pg_basebackup")); err != nil || throwaway.CheckPostgres(d) != nil {
			continue
		}
		if v := throwaway.PostgresVersion(d); v > newest {
			bin, newest = d, v
		}
	}
	if bin == "" {
		fail("no PostgreSQL binaries with pg_basebackup in %v", throwaway.PostgresDirs())
	}
	ctx := context.Background()
	c, err := throwaway.StartPostgres(ctx, throwaway.PostgresConfig{BinDir: bin, SharedBuffers: "32MB"})
	if err != nil {
		fail("start a throwaway primary: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop the throwaway primary: %v", err)
		}
	})
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := osexec.Command(filepath.Join(bin, name), args...)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
		}
	}
	data := filepath.Join(c.Dir(), "standby")
	run("pg_basebackup", "-h", c.Dir(), "-p", "5432", "-U", "postgres", "-D", data, "-R", "-X", "stream", "--no-sync")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	run("pg_ctl", "-D", data, "-l", filepath.Join(c.Dir(), "standby.log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories=''", port), "start")
	t.Cleanup(func() { run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop") })

	primary = connect(t, c.DSN(), "")
	replica = connect(t, fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", port), "")
	deadline := time.Now().Add(30 * time.Second)
	for {
		var streaming bool
		if err := primary.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_replication WHERE state = 'streaming')").Scan(&streaming); err != nil {
			t.Fatal(err)
		}
		if streaming {
			return primary, replica
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby does not stream after 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestThrottle runs a backfill against a primary with a streaming standby:
// pausing the standby's replay holds the backfill, resuming replay lets it
// go on; so do a pause through Set and active backends over MaxActive.
//
// Once replay runs again, the standby may fall behind by more than MaxLag
// whenever the machine is busy (a lag of 767 ms, over 300 ms, came before
// the pause beside two busy loops), and the run holds for that too, as it
// must: a hold for lag, and the release after it, are not what the later
// steps assert, so they wait past them for the event they assert (await)
// and fail on any other. Each step starts from a state the test set and
// saw: the backends over MaxActive are active while the run is paused, so
// the backfill cannot finish before they are, however fast it runs.
func TestThrottle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two PostgreSQL servers")
	}
	primary, replica := standby(t)
	ctx := context.Background()
	exec(t, primary,
		"CREATE TABLE tree (id bigserial PRIMARY KEY, name text)",
		"INSERT INTO tree (name) SELECT 'n' || i FROM generate_series(1, 60000) i",
		"ANALYZE tree")

	events := make(chan migrate.Throttle, 100)
	var batches, last, delta atomic.Int64
	opt := migrate.Options{Table: "tree", To: "snowflake", Batch: 500, MaxLag: 300 * time.Millisecond, MaxActive: 3,
		OnThrottle: func(th migrate.Throttle) { events <- th },
		OnBatch: func(done, total int64) {
			delta.Store(done - last.Swap(done))
			batches.Add(1)
			time.Sleep(10 * time.Millisecond)
		}}
	runConn := connect(t, primary.Config().ConnString(), "")
	done := make(chan error, 1)
	exec(t, replica, "SELECT pg_wal_replay_pause()")
	runCtx, stopRun := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		_, err := migrate.Run(runCtx, runConn, opt)
		done <- err
	}()
	// A step that fails ends the test while Run goes on: stop it before
	// runConn closes (cleanups run last registered first). Before, the
	// race detector reported the Close racing with Run's queries on
	// runConn after such a failure: a defect of the test, not of migrate.
	t.Cleanup(func() {
		stopRun()
		<-finished
	})
	next := func(what string) migrate.Throttle {
		t.Helper()
		select {
		case th := <-events:
			return th
		case err := <-done:
			t.Fatalf("Run returned %v while waiting for %s", err, what)
		case <-time.After(30 * time.Second):
			t.Fatalf("no throttle event for %s after 30s", what)
		}
		return migrate.Throttle{}
	}
	// await returns the next event want accepts, past holds for lag over
	// MaxLag and the release that ends one; any other event fails.
	lagging := false
	await := func(what string, want func(migrate.Throttle) bool, wantText string) migrate.Throttle {
		t.Helper()
		for {
			th := next(what)
			switch {
			case want(th):
				lagging = false
				return th
			case th.Hold && th.Field == "Options.MaxLag" && th.Lag > opt.MaxLag:
				lagging = true
				t.Logf("%s: the run holds for lag first: OnThrottle(%+v)", what, th)
			case !th.Hold && lagging:
				lagging = false
				t.Logf("%s: the run goes on after the lag: OnThrottle(%+v)", what, th)
			default:
				t.Fatalf("%s: OnThrottle(%+v); want %s", what, th, wantText)
			}
		}
	}
	// held: no batch while it holds
	held := func(what, reason string) migrate.Throttle {
		t.Helper()
		th := await(what, func(th migrate.Throttle) bool { return th.Hold && strings.Contains(th.Reason, reason) },
			fmt.Sprintf("a hold for %q", reason))
		n := batches.Load()
		time.Sleep(700 * time.Millisecond)
		if got := batches.Load(); got != n {
			t.Fatalf("%s: %d batches ran during the hold; want 0", what, got-n)
		}
		return th
	}
	released := func(what string) {
		t.Helper()
		th := await(what, func(th migrate.Throttle) bool { return !th.Hold }, "the run to go on")
		if th.Waited <= 0 {
			t.Fatalf("%s: OnThrottle(%+v); want the run to go on after a wait", what, th)
		}
		n := batches.Load()
		deadline := time.Now().Add(10 * time.Second)
		for batches.Load() == n {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no batch ran in 10s after the release", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// The first hold comes before any other: replay is paused from the start.
	if th := held("standby replay paused", "replication lag"); th.Lag <= opt.MaxLag || th.Field != "Options.MaxLag" {
		t.Errorf("OnThrottle(%+v) holds with a lag at most --max-lag %v, or not on Options.MaxLag", th, opt.MaxLag)
	}
	exec(t, replica, "SELECT pg_wal_replay_resume()")
	released("standby replay resumed")

	statusConn := connect(t, primary.Config().ConnString(), "")
	if err := migrate.Set(ctx, statusConn, "tree", migrate.Setting{Pause: true}); err != nil {
		t.Fatalf("Set(pause) = %v", err)
	}
	if th := held("paused by Set", "paused"); th.Field != "" || !th.Paused {
		t.Errorf("OnThrottle(%+v) holds for a pause naming a field, or not paused", th)
	}
	st, err := migrate.GetStatus(ctx, statusConn, "tree")
	if err != nil {
		t.Fatalf("GetStatus = %v", err)
	}
	if !st.Paused || !st.Running || st.Phase != "backfill" || st.RowsTotal != 60000 || st.RowsDone <= 0 || st.RowsDone >= 60000 {
		t.Errorf("GetStatus of a paused run = %+v; want paused, running, backfill, 0 < done < total = 60000", st)
	}
	var out bytes.Buffer
	st.Write(&out)
	if !strings.Contains(out.String(), "paused   yes") || !strings.Contains(out.String(), "of 60000") {
		t.Errorf("Status.Write = %q; want paused yes and the rows", out.String())
	}
	if err := migrate.Set(ctx, statusConn, "tree", migrate.Setting{Resume: true, Batch: 2000}); err != nil {
		t.Fatalf("Set(resume) = %v", err)
	}
	released("resumed by Set")
	if got := delta.Load(); got != 2000 {
		t.Errorf("a batch after Set(Batch: 2000) has %d rows; want 2000", got)
	}

	// Four backends sleeping, over MaxActive 3, started while the run is
	// paused: resumed, it holds for them.
	if err := migrate.Set(ctx, statusConn, "tree", migrate.Setting{Pause: true}); err != nil {
		t.Fatalf("Set(pause) = %v", err)
	}
	held("paused by Set again", "paused")
	sleepCtx, stopSleep := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 4 {
		c := connect(t, primary.Config().ConnString(), "")
		wg.Go(func() { c.Exec(sleepCtx, "SELECT pg_sleep(60)") })
	}
	t.Cleanup(func() { // before the sleepers' connections close
		stopSleep()
		wg.Wait()
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		var n int
		if err := statusConn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = 'SELECT pg_sleep(60)'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 4 backends sleep after 30s", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := migrate.Set(ctx, statusConn, "tree", migrate.Setting{Resume: true}); err != nil {
		t.Fatalf("Set(resume) = %v", err)
	}
	if th := held("4 active backends", "active backends over Options.MaxActive 3"); th.Field != "Options.MaxActive" {
		t.Errorf("OnThrottle(%+v) holds for the active backends; want it on Options.MaxActive", th)
	}
	stopSleep()
	wg.Wait()
	released("backends idle")

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("Run did not finish in 2 minutes")
	}
	r, err := migrate.Verify(ctx, primary, "tree")
	if err != nil || !r.OK() || r.Rows != 60000 {
		t.Fatalf("Verify = %+v, %v; want 60000 rows, ok", r, err)
	}
	st, err = migrate.GetStatus(ctx, statusConn, "tree")
	if err != nil || st.Running || st.Phase != "done" || st.Batch != 2000 {
		t.Errorf("GetStatus after the run = %+v, %v; want done, not running, batch 2000 as set", st, err)
	}
}

func TestSetBadInput(t *testing.T) {
	conn, _ := schema(t)
	exec(t, conn, "CREATE TABLE plain (id bigserial PRIMARY KEY)")
	for _, tc := range []struct {
		name  string
		table string
		s     migrate.Setting
		want  string
	}{
		{"no migration", "plain", migrate.Setting{Pause: true}, "no migration recorded"},
		{"no table", "nosuch", migrate.Setting{Pause: true}, `table "nosuch" not found`},
		{"negative batch", "plain", migrate.Setting{Batch: -1}, "Setting.Batch -1: want at least 1"},
		{"negative chunk time", "plain", migrate.Setting{ChunkTime: -time.Second}, "Setting.ChunkTime -1s: want at least 1ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := migrate.Set(context.Background(), conn, tc.table, tc.s)
			if !errors.Is(err, migrate.ErrInput) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Set(%q, %+v) = %v; want ErrInput with %q", tc.table, tc.s, err, tc.want)
			}
		})
	}
}

// TestChunkTime sizes batches by time: a long --chunk-time grows them
// towards 10×Batch, a short one shrinks them towards Batch/10.
//
// How far they grow depends on how fast the machine runs the batches, so
// the long case bounds each size from below by the rates the test itself
// sees: a batch runs between two OnBatch calls, so it took at most their
// gap, its rate was at least its rows over the gap, and the run's sizer
// (a moving average of the rates, times the chunk time, within Batch/10
// and 10×Batch) sized the next batch at least as that bound says. On a
// quiet machine the bound is 10×Batch; on a loaded one it is lower, never
// a guess. The short case needs each batch of 200 rows or more to take
// over 0.1 ms (a rate under 2 million rows a second) to shrink: one
// batch is two round trips and an UPDATE, 20 times that or more.
func TestChunkTime(t *testing.T) {
	conn, _ := schema(t)
	for i, tc := range []struct {
		name      string
		batch     int
		chunk     time.Duration
		hi        int64 // of the batches after the first, but the last
		firstSize int64
	}{
		{"long chunk time", 100, time.Second, 1000, 100},
		{"short chunk time", 2000, time.Millisecond, 1999, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := fmt.Sprint("chunky", i)
			exec(t, conn, "CREATE TABLE "+table+" (id bigserial PRIMARY KEY)", "INSERT INTO "+table+" SELECT FROM generate_series(1, 10000)")
			var sizes []int64
			var gaps []time.Duration
			var last int64
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			prev := time.Now()
			_, err := migrate.Run(ctx, conn, migrate.Options{Table: table, To: "snowflake", Batch: tc.batch, ChunkTime: tc.chunk,
				OnBatch: func(done, total int64) {
					sizes = append(sizes, done-last)
					gaps = append(gaps, time.Since(prev))
					last, prev = done, time.Now()
					if done == total {
						cancel() // stop before the index phase
					}
				}})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run = %v; want it canceled after the backfill", err)
			}
			if len(sizes) < 3 || sizes[0] != tc.firstSize {
				t.Fatalf("batch sizes %v; want at least 3, the first %d", sizes, tc.firstSize)
			}
			var rate float64 // a lower bound of the sizer's moving average
			for k, n := range sizes[:len(sizes)-1] {
				if r := float64(n) / gaps[k].Seconds(); k == 0 {
					rate = r
				} else {
					rate = 0.25*rate + 0.75*r
				}
				lo := min(max(int64(rate*tc.chunk.Seconds()), int64(tc.batch/10)), int64(tc.batch*10))
				if next := sizes[k+1]; k+1 < len(sizes)-1 && (next < lo || next > tc.hi) {
					t.Fatalf("batch sizes %v with --batch %d --chunk-time %v, batches %v apart; want batch %d in [%d, %d]",
						sizes, tc.batch, tc.chunk, gaps, k+1, lo, tc.hi)
				}
			}
		})
	}
}
