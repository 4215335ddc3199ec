package strategies_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

func workerOf(t *testing.T, g idgen.Generator) uint64 {
	t.Helper()
	id, err := g.Next(context.Background())
	if err != nil {
		t.Fatalf("Next() = %v", err)
	}
	for _, f := range id.Scheme().Decompose(id) {
		if f.Name == "worker" || f.Name == "machine" {
			return f.Value
		}
	}
	t.Fatalf("%s ID %s has no worker or machine field", id.Scheme(), id)
	return 0
}

func TestWorkerSourceStatic(t *testing.T) {
	g, err := strategies.NewText(context.Background(), "snowflake?preset=twitter&datacenter=2&worker_source=static:17")
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	defer g.(io.Closer).Close()
	if w := workerOf(t, g); w != 17 {
		t.Fatalf("worker = %d; want 17", w)
	}
}

func TestWorkerSourceBad(t *testing.T) {
	t.Parallel() // "etcd unreachable" waits out 5 s per member (DialTimeout); the slow generator tests, parallel too, can run meanwhile
	tests := []struct {
		name, spec string
		want       error
	}{
		{"out of range", "snowflake?preset=twitter&worker_source=static:32", idgen.ErrOutOfRange},
		{"not a number", "snowflake?worker_source=static:x", strategies.ErrSpec},
		{"unknown", "snowflake?worker_source=zookeeper:1", strategies.ErrSpec},
		{"env unset", "snowflake?worker_source=env", nil},
		{"etcd no host", "snowflake?worker_source=etcd:", strategies.ErrSpec},
		{"etcd unknown key", withSource("snowflake", "etcd://127.0.0.1:1?foo=1"), strategies.ErrSpec},
		{"postgres ttl", withSource("snowflake", "postgres://127.0.0.1:1/x?ttl=1s"), strategies.ErrSpec},
		{"etcd unreachable", withSource("snowflake", "etcd://127.0.0.1:1,[::1]:1/ns?ttl=5s"), idgen.ErrUnavailable},
		{"etcd bad namespace", withSource("snowflake", "etcd://127.0.0.1:1/a/b"), strategies.ErrSpec},
		{"workers above the layout", withSource("snowflake?preset=twitter", "postgres://127.0.0.1:1/x?workers=33"), strategies.ErrSpec},
		{"postgres unreachable", withSource("snowflake", "postgres://postgres@127.0.0.1:1/x?sslmode=disable"), idgen.ErrUnavailable},
		{"layout without worker", strategies.MustParse("snowflake?worker_source=static:1").With("layout", "time:41,sequence:22;tick=1ms").String(), strategies.ErrSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := strategies.NewText(context.Background(), tt.spec)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("New(%q) = %v, %v; want error %v", tt.spec, g, err, tt.want)
			}
		})
	}
}

// TestWorkerIDConflicts checks the one precedence of worker IDs: a worker
// source and the spec's worker key (machine for sonyflake) are refused
// together, naming both, before any store is contacted; Options.WorkerID
// (IDGEN_WORKER_ID) overrides the worker key, is what worker_source=env
// reads, and is refused beside any other source. Before, the source won
// silently.
func TestWorkerIDConflicts(t *testing.T) {
	machineLayout := strategies.MustParse("snowflake?machine=3&worker_source=static:5").With("layout", "time:41,machine:10,sequence:12;tick=1ms").String()
	tests := []struct {
		name, spec, workerID string
		key, msg             string // the *SpecError's key and message; "" when the spec builds
		worker               uint64 // the worker ID issued when it builds
	}{
		{name: "worker and a static source", spec: "snowflake?worker=3&worker_source=static:5", key: "worker",
			msg: "strategies: invalid spec: snowflake: worker=3 and worker_source=static:5 both set the worker ID; give one"},
		{name: "worker and an unreachable lease", spec: withSource("snowflake?worker=3", "postgres://u:pw@127.0.0.1:1/x?sslmode=disable"), key: "worker",
			msg: "strategies: invalid spec: snowflake: worker=3 and worker_source=postgres://u:xxxxx@127.0.0.1:1/x?sslmode=disable both set the worker ID; give one"},
		{name: "machine field of a layout", spec: machineLayout, key: "machine",
			msg: "strategies: invalid spec: snowflake: machine=3 and worker_source=static:5 both set the worker ID; give one"},
		{name: "sonyflake machine", spec: "sonyflake?machine=3&worker_source=static:5", key: "machine",
			msg: "strategies: invalid spec: sonyflake: machine=3 and worker_source=static:5 both set the worker ID; give one"},
		{name: "flake128 worker", spec: "flake128?worker=3&worker_source=static:5", key: "worker",
			msg: "strategies: invalid spec: flake128: worker=3 and worker_source=static:5 both set the worker ID; give one"},
		{name: "IDGEN_WORKER_ID and a static source", spec: "snowflake?worker_source=static:5", workerID: "7", key: "worker_source",
			msg: "strategies: invalid spec: snowflake: IDGEN_WORKER_ID=7 and worker_source=static:5 both set the worker ID; give one (worker_source=env reads IDGEN_WORKER_ID)"},
		{name: "IDGEN_WORKER_ID and a sonyflake source", spec: "sonyflake?worker_source=static:5", workerID: "7", key: "worker_source",
			msg: "strategies: invalid spec: sonyflake: IDGEN_WORKER_ID=7 and worker_source=static:5 both set the worker ID; give one (worker_source=env reads IDGEN_WORKER_ID)"},
		{name: "IDGEN_WORKER_ID read by env", spec: "snowflake?worker_source=env", workerID: "7", worker: 7},
		{name: "IDGEN_WORKER_ID over the worker key", spec: "snowflake?worker=3", workerID: "7", worker: 7},
		{name: "datacenter beside a source", spec: "snowflake?datacenter=1&worker_source=static:5", worker: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := strategies.Options{WorkerID: tt.workerID}.NewText(context.Background(), tt.spec)
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("New(%q) with WorkerID %q = %v", tt.spec, tt.workerID, err)
				}
				defer closeGen(g)
				if w := workerOf(t, g); w != tt.worker {
					t.Fatalf("New(%q) with WorkerID %q: worker %d; want %d", tt.spec, tt.workerID, w, tt.worker)
				}
				return
			}
			se, ok := errors.AsType[*strategies.SpecError](err)
			wc, isConflict := errors.AsType[*strategies.WorkerConflictError](err)
			if !ok || se.Key != tt.key || err.Error() != tt.msg || !errors.Is(err, strategies.ErrSpec) || !isConflict || wc.Source == "" {
				t.Fatalf("New(%q) with WorkerID %q = %v, %v; want a *SpecError (key %s) and *WorkerConflictError: %s", tt.spec, tt.workerID, g, err, tt.key, tt.msg)
			}
		})
	}
}

func closeGen(g idgen.Generator) {
	if c, ok := g.(io.Closer); ok {
		c.Close()
	}
}

func TestWorkerSourcePostgres(t *testing.T) {
	t.Parallel() // a lease table of its own
	dsn := testenv.PostgresDSN(t)
	table := fmt.Sprintf("test_wid_strategies_%d", time.Now().UnixNano())
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			c.Exec(context.Background(), `DROP TABLE IF EXISTS `+table)
			c.Close(context.Background())
		}
	})
	u, _ := url.Parse(dsn)
	q := u.Query()
	q.Set("table", table)
	u.RawQuery = q.Encode()
	source := u.String()
	// Each strategy leases in a namespace of its own.
	var workers []uint64
	for _, spec := range []string{
		withSource("snowflake?preset=twitter&datacenter=1", source),
		withSource("sonyflake", source+"&namespace=sony"),
	} {
		a, err := strategies.NewText(context.Background(), spec)
		if err != nil {
			t.Fatalf("New(%q) = %v", spec, err)
		}
		defer a.(io.Closer).Close()
		b, err := strategies.NewText(context.Background(), spec)
		if err != nil {
			t.Fatalf("New(%q) second = %v", spec, err)
		}
		workers = append(workers, workerOf(t, a), workerOf(t, b))
		idgentest.Run(t, fromSpec(spec), idgentest.Options{PerGoroutine: 2000}) // sonyflake: 25,600 IDs/s
		if err := b.(io.Closer).Close(); err != nil {
			t.Fatalf("Close() = %v", err)
		}
		if _, err := b.Next(context.Background()); !errors.Is(err, idgen.ErrClosed) {
			t.Fatalf("%s Next() after Close = %v; want ErrClosed", spec, err)
		}
	}
	if workers[0] == workers[1] || workers[2] == workers[3] {
		t.Fatalf("leased workers %v: two live holders share an ID", workers)
	}
	// The lease row keeps the high-water mark.
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close(context.Background())
	var marks int
	if err := c.QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE high_water IS NOT NULL`).Scan(&marks); err != nil || marks < 2 {
		t.Fatalf("rows with a high-water mark = %d, %v; want 2", marks, err)
	}
}

func flakeWorker(id idgen.ID) uint64 {
	b := id.Bytes()
	return uint64(b[8])<<40 | uint64(b[9])<<32 | uint64(b[10])<<24 | uint64(b[11])<<16 | uint64(b[12])<<8 | uint64(b[13])
}

func TestFlake128Lease(t *testing.T) {
	lease := &idgentest.Lease{}
	if _, err := strategies.NewFlake128(context.Background(), strategies.Flake128Config{Lease: lease}); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("NewFlake128() with no identity = %v; want ErrLeaseLost", err)
	}
	lease.Set(&idgen.Identity{WorkerID: 1 << 40, Generation: 1})
	g, err := strategies.NewFlake128(context.Background(), strategies.Flake128Config{Lease: lease})
	if err != nil {
		t.Fatalf("NewFlake128() = %v", err)
	}
	next := func() idgen.ID {
		t.Helper()
		id, err := g.Next(context.Background())
		if err != nil {
			t.Fatalf("Next() = %v", err)
		}
		return id
	}
	if w := flakeWorker(next()); w != 1<<40 {
		t.Fatalf("worker = %d; want %d", w, uint64(1<<40))
	}
	lease.Set(nil)
	if _, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("Next() while lost = %v; want ErrLeaseLost", err)
	}
	if n, err := g.NextN(context.Background(), make([]idgen.ID, 4)); n != 0 || !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("NextN() while lost = %d, %v; want 0, ErrLeaseLost", n, err)
	}
	lease.Set(&idgen.Identity{WorkerID: 9, Generation: 2})
	if w := flakeWorker(next()); w != 9 {
		t.Fatalf("worker after reacquire = %d; want 9", w)
	}
	lease.Set(&idgen.Identity{WorkerID: 1 << 48, Generation: 3})
	if _, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrOutOfRange) {
		t.Fatalf("Next() under worker 2^48 = %v; want ErrOutOfRange", err)
	}
}

// reportedLease is a test lease that reports a status, as the store
// leases of package workerid do.
type reportedLease struct {
	idgentest.Lease
	st idgen.LeaseStatus
}

func (l *reportedLease) LeaseStatus() idgen.LeaseStatus { return l.st }

// TestFlake128Stats: a flake128 generator reports its Snowflake core's
// Stats, with the status of a lease that reports one.
func TestFlake128Stats(t *testing.T) {
	lease := &reportedLease{st: idgen.LeaseStatus{Held: true, SinceRenewal: 3 * time.Second, LostAfter: 15 * time.Second}}
	lease.Set(&idgen.Identity{WorkerID: 5, Generation: 1})
	g, err := strategies.NewFlake128(context.Background(), strategies.Flake128Config{Lease: lease})
	if err != nil {
		t.Fatalf("NewFlake128() = %v", err)
	}
	if _, err := g.NextN(context.Background(), make([]idgen.ID, 10)); err != nil {
		t.Fatal(err)
	}
	st, ok := idgen.StatsOf(g)
	end := time.UnixMilli(1 << 47).UTC()
	if !ok || st.Kinds != idgen.StatsClock|idgen.StatsLease || st.Lease != lease.st || !st.LayoutEnd.Equal(end) || st.ClockRollbackFailures != 0 {
		t.Errorf("StatsOf(flake128 under a lease) = %+v, %v; want the clock and lease groups, Lease %+v, LayoutEnd %v", st, ok, lease.st, end)
	}
}

func TestFlake128WorkerSource(t *testing.T) {
	t.Parallel() // beside TestWorkerSourceBad's wait
	const spec = "flake128?worker_source=static:123456789"
	g, err := strategies.NewText(context.Background(), spec)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	defer g.(io.Closer).Close()
	id, err := g.Next(context.Background())
	if err != nil || flakeWorker(id) != 123456789 {
		t.Fatalf("Next() = %v, %v; want worker 123456789", id, err)
	}
	idgentest.Run(t, fromSpec(spec), idgentest.Options{PerGoroutine: perGoroutine})
}

func sonyField(t *testing.T, id idgen.ID, name string) uint64 {
	t.Helper()
	for _, f := range id.Scheme().Decompose(id) {
		if f.Name == name {
			return f.Value
		}
	}
	t.Fatalf("%s has no field %q", id, name)
	return 0
}

func TestSonyflakeLease(t *testing.T) {
	ctx := context.Background()
	lease := &idgentest.Lease{}
	if _, err := strategies.NewSonyflake(strategies.SonyflakeSettings{Lease: lease}); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("NewSonyflake() with no identity = %v; want ErrLeaseLost", err)
	}
	lease.Set(&idgen.Identity{WorkerID: 300, Generation: 1})
	g, err := strategies.NewSonyflake(strategies.SonyflakeSettings{Lease: lease})
	if err != nil {
		t.Fatalf("NewSonyflake() = %v", err)
	}
	next := func() idgen.ID {
		t.Helper()
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatalf("Next() = %v", err)
		}
		return id
	}
	first := next()
	if first.Scheme().Name != "sonyflake" || sonyField(t, first, "machine") != 300 {
		t.Fatalf("Next() = %s %v; want a sonyflake ID of machine 300", first.Scheme().Name, first.Scheme().Decompose(first))
	}
	// Sonyflake's sequence counts from 0 in each tick, as the library's does.
	for prev, i := first, 0; i < 1000; i++ {
		id := next()
		if id.Compare(prev) <= 0 {
			t.Fatalf("Next() = %s after %s; want increasing", id, prev)
		}
		if sonyField(t, id, "time") > sonyField(t, prev, "time") && sonyField(t, id, "sequence") != 0 {
			t.Fatalf("first ID of a tick has sequence %d; want 0", sonyField(t, id, "sequence"))
		}
		prev = id
	}
	lease.Set(nil)
	if _, err := g.Next(ctx); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("Next() while lost = %v; want ErrLeaseLost", err)
	}
	if err := g.Ready(ctx); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("Ready() while lost = %v; want ErrLeaseLost", err)
	}
	lease.Set(&idgen.Identity{WorkerID: 65535, Generation: 2})
	if err := g.Ready(ctx); err != nil {
		t.Fatalf("Ready() after reacquire = %v", err)
	}
	if m := sonyField(t, next(), "machine"); m != 65535 {
		t.Fatalf("machine after reacquire = %d; want 65535", m)
	}
	lease.Set(&idgen.Identity{WorkerID: 65536, Generation: 3})
	if _, err := g.Next(ctx); !errors.Is(err, idgen.ErrOutOfRange) {
		t.Fatalf("Next() under machine 65536 = %v; want ErrOutOfRange", err)
	}
}

func TestSonyflakeLeaseBehindHighWater(t *testing.T) {
	hw := snowflake.FileHighWater{Path: filepath.Join(t.TempDir(), "mark")}
	if err := hw.Store(context.Background(), time.Now().Add(time.Second)); err != nil {
		t.Fatalf("Store() = %v", err)
	}
	lease := &idgentest.Lease{}
	lease.Set(&idgen.Identity{WorkerID: 1, Generation: 1})
	g, err := strategies.NewSonyflake(strategies.SonyflakeSettings{Lease: lease, HighWater: hw})
	if err != nil {
		t.Fatalf("NewSonyflake() = %v", err)
	}
	// 1 s behind the mark: wait-then-fail gives up after 10 ms.
	var rb *idgen.ClockRollbackError
	if id, err := g.Next(context.Background()); !errors.As(err, &rb) {
		t.Fatalf("Next() 1s behind the high-water mark = %s, %v; want *ClockRollbackError", id, err)
	}
}

func TestSonyflakeWorkerSource(t *testing.T) {
	t.Parallel() // beside TestWorkerSourceBad's wait
	const spec = "sonyflake?bits_machine=12&worker_source=static:4095"
	g, err := strategies.NewText(context.Background(), spec)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	defer g.(io.Closer).Close()
	id, err := g.Next(context.Background())
	if err != nil || sonyField(t, id, "machine") != 4095 {
		t.Fatalf("Next() = %v, %v; want machine 4095", id, err)
	}
	idgentest.Run(t, fromSpec(spec), idgentest.Options{PerGoroutine: 2000})
	for _, spec := range []string{
		"sonyflake?bits_machine=12&worker_source=static:4096",
		"sonyflake?high_water=/tmp/mark",
	} {
		if g, err := strategies.NewText(context.Background(), spec); err == nil {
			t.Fatalf("New(%q) = %v; want an error", spec, g)
		}
	}
}

// TestSonyflakeWorkerSourceStats: a sonyflake under a worker source issues
// from the Snowflake core, whose Stats idgen.StatsOf reads through the
// generator's Unwrap (the clock group, the layout's end); the sony library
// path keeps no counters.
func TestSonyflakeWorkerSourceStats(t *testing.T) {
	g, err := strategies.NewText(context.Background(), "sonyflake?bits_machine=12&worker_source=static:4095")
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	defer g.(io.Closer).Close()
	if _, err := g.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	l, _ := snowflake.LayoutOf(g.Scheme())
	st, ok := idgen.StatsOf(g)
	if !ok || st.Kinds != idgen.StatsClock || !st.LayoutEnd.Equal(l.End()) || st.ClockRollbackFailures != 0 {
		t.Errorf("StatsOf(sonyflake under a static worker source) = %+v, %v; want the clock group only, LayoutEnd %v", st, ok, l.End())
	}
	plain, err := strategies.NewText(context.Background(), "sonyflake?machine=1")
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := idgen.StatsOf(plain); ok {
		t.Errorf("StatsOf(sonyflake without a worker source) = %+v, true; want none", st)
	}
}

func TestReady(t *testing.T) {
	ctx := context.Background()
	lease := &idgentest.Lease{}
	lease.Set(&idgen.Identity{WorkerID: 5, Generation: 1})
	sf, err := snowflake.New(ctx, snowflake.Config{Layout: mustPreset(t, "twitter"), Lease: lease})
	if err != nil {
		t.Fatalf("snowflake.New() = %v", err)
	}
	fl, err := strategies.NewFlake128(ctx, strategies.Flake128Config{Lease: lease})
	if err != nil {
		t.Fatalf("NewFlake128() = %v", err)
	}
	for name, r := range map[string]interface{ Ready(context.Context) error }{"snowflake": sf, "flake128": fl} {
		lease.Set(&idgen.Identity{WorkerID: 5, Generation: 1})
		if err := r.Ready(ctx); err != nil {
			t.Fatalf("%s Ready() = %v", name, err)
		}
		lease.Set(nil)
		if err := r.Ready(ctx); !errors.Is(err, idgen.ErrLeaseLost) {
			t.Fatalf("%s Ready() while lost = %v; want ErrLeaseLost", name, err)
		}
	}
	ended, err := snowflake.New(ctx, snowflake.Config{Layout: mustPreset(t, "baidu")})
	if err != nil {
		t.Fatalf("snowflake.New(baidu) = %v", err)
	}
	if err := ended.Ready(ctx); !errors.Is(err, idgen.ErrLayoutExhausted) {
		t.Fatalf("baidu Ready() = %v; want ErrLayoutExhausted (its lifetime ended 2024-11-20)", err)
	}
}

func mustPreset(t *testing.T, name string) snowflake.Layout {
	t.Helper()
	l, err := snowflake.Preset(name)
	if err != nil {
		t.Fatalf("Preset(%q) = %v", name, err)
	}
	return l
}

// TestWorkerSourceKeepsHighWaterFile: with a lease store and a high_water
// file both, the later of their marks holds at start, and both are written.
func TestWorkerSourceKeepsHighWaterFile(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	table := fmt.Sprintf("test_wid_hwfile_%d", time.Now().UnixNano())
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close(context.Background())
	t.Cleanup(func() { c.Exec(context.Background(), `DROP TABLE IF EXISTS `+table) })
	u, _ := url.Parse(dsn)
	q := u.Query()
	q.Set("table", table)
	q.Set("workers", "1")
	u.RawQuery = q.Encode()
	file := snowflake.FileHighWater{Path: filepath.Join(t.TempDir(), "mark")}
	spec := withSource("snowflake?preset=twitter&rollback=hold&max_ahead=10s", u.String())
	spec = strategies.MustParse(spec).With("high_water", file.Path).String()
	first := func(want time.Time) {
		t.Helper()
		g, err := strategies.NewText(context.Background(), spec)
		if err != nil {
			t.Fatalf("New(%q) = %v", spec, err)
		}
		defer g.(io.Closer).Close()
		id, err := g.Next(context.Background())
		if err != nil {
			t.Fatalf("Next() = %v", err)
		}
		if id.Time().Before(want) {
			t.Fatalf("first ID's time %v; want at or after the later mark %v", id.Time(), want)
		}
		if m, err := file.Load(context.Background()); err != nil || !m.After(id.Time()) {
			t.Fatalf("file mark after Next() = %v, %v; want after the ID's time %v", m, err, id.Time())
		}
	}

	// The file's mark is the later one.
	ahead := time.Now().Add(3 * time.Second).UTC().Truncate(time.Millisecond)
	if err := file.Store(context.Background(), ahead); err != nil {
		t.Fatalf("Store() = %v", err)
	}
	first(ahead)

	// The lease row's mark is the later one.
	if err := file.Store(context.Background(), time.Now().Add(-time.Hour)); err != nil {
		t.Fatalf("Store() = %v", err)
	}
	ahead = time.Now().Add(5 * time.Second).UTC().Truncate(time.Millisecond)
	if _, err := c.Exec(context.Background(), `UPDATE `+table+` SET high_water = $1`, ahead); err != nil {
		t.Fatalf("setting the lease row's mark: %v", err)
	}
	first(ahead)
}

// withSource returns spec with worker_source set to source.
func withSource(spec, source string) string {
	return strategies.MustParse(spec).With("worker_source", source).String()
}
