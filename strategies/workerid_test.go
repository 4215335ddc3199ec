package strategies_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/strategies"
)

func workerOf(t *testing.T, g idgen.Generator) uint64 {
	t.Helper()
	id, err := g.Next(context.Background())
	if err != nil {
		t.Fatalf("Next() = %v", err)
	}
	p, err := g.(*strategies.LeasedSnowflake).Decompose(id)
	if err != nil {
		t.Fatalf("Decompose(%s) = %v", id, err)
	}
	w, _ := p.Node("worker")
	return w
}

func TestWorkerSourceStatic(t *testing.T) {
	t.Setenv(strategies.EnvWorkerID, "")
	g, err := strategies.New("snowflake?preset=twitter&datacenter=2&worker_source=static:17")
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	defer g.(io.Closer).Close()
	if w := workerOf(t, g); w != 17 {
		t.Fatalf("worker = %d; want 17", w)
	}
}

func TestWorkerSourceBad(t *testing.T) {
	t.Setenv(strategies.EnvWorkerID, "")
	tests := []struct {
		name, spec string
		want       error
	}{
		{"out of range", "snowflake?preset=twitter&worker_source=static:32", idgen.ErrOutOfRange},
		{"not a number", "snowflake?worker_source=static:x", strategies.ErrSpec},
		{"unknown", "snowflake?worker_source=zookeeper:1", strategies.ErrSpec},
		{"env unset", "snowflake?worker_source=env", nil},
		{"etcd no host", "snowflake?worker_source=etcd:", strategies.ErrSpec},
		{"etcd unknown key", "snowflake?worker_source=" + url.QueryEscape("etcd://127.0.0.1:1?foo=1"), strategies.ErrSpec},
		{"postgres ttl", "snowflake?worker_source=" + url.QueryEscape("postgres://127.0.0.1:1/x?ttl=1s"), strategies.ErrSpec},
		{"etcd unreachable", "snowflake?worker_source=" + url.QueryEscape("etcd://127.0.0.1:1,[::1]:1/ns?ttl=5s"), idgen.ErrUnavailable},
		{"etcd bad namespace", "snowflake?worker_source=" + url.QueryEscape("etcd://127.0.0.1:1/a/b"), strategies.ErrSpec},
		{"workers above the layout", "snowflake?preset=twitter&worker_source=" + url.QueryEscape("postgres://127.0.0.1:1/x?workers=33"), strategies.ErrSpec},
		{"postgres unreachable", "snowflake?worker_source=" + url.QueryEscape("postgres://postgres@127.0.0.1:1/x?sslmode=disable"), idgen.ErrUnavailable},
		{"layout without worker", "snowflake?layout=" + url.QueryEscape("time:41,sequence:22;tick=1ms") + "&worker_source=static:1", strategies.ErrSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := strategies.New(tt.spec)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("New(%q) = %v, %v; want error %v", tt.spec, g, err, tt.want)
			}
		})
	}
}

func TestWorkerSourcePostgres(t *testing.T) {
	t.Setenv(strategies.EnvWorkerID, "")
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
	spec := "snowflake?preset=twitter&datacenter=1&worker_source=" + url.QueryEscape(u.String())
	a, err := strategies.New(spec)
	if err != nil {
		t.Fatalf("New(%q) = %v", spec, err)
	}
	defer a.(io.Closer).Close()
	b, err := strategies.New(spec)
	if err != nil {
		t.Fatalf("New(%q) second = %v", spec, err)
	}
	if wa, wb := workerOf(t, a), workerOf(t, b); wa == wb {
		t.Fatalf("two leased generators share worker %d", wa)
	}
	idgentest.Run(t, b, idgentest.Options{})
	if err := b.(io.Closer).Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if _, err := b.Next(context.Background()); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("Next() after Close = %v; want ErrLeaseLost", err)
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

type testLease struct {
	p atomic.Pointer[idgen.Identity]
}

func (l *testLease) Identity() *idgen.Identity { return l.p.Load() }

func flakeWorker(id idgen.ID) uint64 {
	b := id.Bytes()
	return uint64(b[8])<<40 | uint64(b[9])<<32 | uint64(b[10])<<24 | uint64(b[11])<<16 | uint64(b[12])<<8 | uint64(b[13])
}

func TestFlake128Lease(t *testing.T) {
	lease := &testLease{}
	if _, err := strategies.NewFlake128(context.Background(), strategies.Flake128Config{Lease: lease}); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("NewFlake128() with no identity = %v; want ErrLeaseLost", err)
	}
	lease.p.Store(&idgen.Identity{WorkerID: 1 << 40, Generation: 1})
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
	lease.p.Store(nil)
	if _, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("Next() while lost = %v; want ErrLeaseLost", err)
	}
	if n, err := g.NextN(context.Background(), make([]idgen.ID, 4)); n != 0 || !errors.Is(err, idgen.ErrLeaseLost) {
		t.Fatalf("NextN() while lost = %d, %v; want 0, ErrLeaseLost", n, err)
	}
	lease.p.Store(&idgen.Identity{WorkerID: 9, Generation: 2})
	if w := flakeWorker(next()); w != 9 {
		t.Fatalf("worker after reacquire = %d; want 9", w)
	}
	lease.p.Store(&idgen.Identity{WorkerID: 1 << 48, Generation: 3})
	if _, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrOutOfRange) {
		t.Fatalf("Next() under worker 2^48 = %v; want ErrOutOfRange", err)
	}
}

func TestFlake128WorkerSource(t *testing.T) {
	t.Setenv(strategies.EnvWorkerID, "")
	g, err := strategies.New("flake128?worker_source=static:123456789")
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	defer g.(io.Closer).Close()
	id, err := g.Next(context.Background())
	if err != nil || flakeWorker(id) != 123456789 {
		t.Fatalf("Next() = %v, %v; want worker 123456789", id, err)
	}
	idgentest.Run(t, g, idgentest.Options{})
}
