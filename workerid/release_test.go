package workerid

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/testenv/etcdtest"
)

// cutMarkLandsLate is a backend whose first mark write is cut short by
// its context, as Close cuts the mark the renewal goroutine writes ahead
// right after open, and which the store applies later anyway: a server
// runs a request whose client gave up (an etcd Txn already proposed, an SQL
// UPDATE already sent). It lands just before the release and once more
// just after it, the two orders a store may apply it in.
type cutMarkLandsLate struct {
	backend
	mu   sync.Mutex
	cut  bool
	late func() // the cut write, applied when called
}

func (b *cutMarkLandsLate) storeMark(ctx context.Context, id, gen int64, mark time.Time) error {
	b.mu.Lock()
	if b.cut {
		b.mu.Unlock()
		return b.backend.storeMark(ctx, id, gen, mark)
	}
	b.cut = true
	b.late = func() { b.backend.storeMark(context.Background(), id, gen, mark) }
	b.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

func (b *cutMarkLandsLate) release(ctx context.Context, id, gen int64, settle *time.Time) error {
	b.mu.Lock()
	late := b.late
	b.mu.Unlock()
	if late != nil {
		late()
	}
	err := b.backend.release(ctx, id, gen, settle)
	if late != nil {
		late()
	}
	return err
}

// A mark written ahead at open and cut short by Close lands in the store
// anyway, before or after the release: the restart still takes the worker
// ID its state file names, its mark not left ahead. Before the mark was
// set in one step with the release, the cut write landed after it in 6
// runs of TestStateFile/etcd in 100 beside two busy loops (the restart took
// worker 1, a mark LostAfter + AheadSlack ahead on 0).
func TestCutMarkWriteLandsLate(t *testing.T) {
	// Each returns a dialer of the store: the same table or namespace at
	// every call.
	store := map[string]func(t *testing.T) func(cfg LeaseConfig) (backend, LeaseConfig){
		"postgres": func(t *testing.T) func(cfg LeaseConfig) (backend, LeaseConfig) {
			dsn := testenv.PostgresDSN(t)
			table := internalTable(t, func(ctx context.Context, drop string) error {
				c, err := pgx.Connect(ctx, dsn)
				if err != nil {
					return err
				}
				defer c.Close(ctx)
				_, err = c.Exec(ctx, drop)
				return err
			})
			return func(cfg LeaseConfig) (backend, LeaseConfig) {
				b, lc, err := dialPostgres(context.Background(), dsn, PostgresConfig{LeaseConfig: cfg, Table: table})
				if err != nil {
					t.Fatal(err)
				}
				return b, lc
			}
		},
		"mysql": func(t *testing.T) func(cfg LeaseConfig) (backend, LeaseConfig) {
			dsn := testenv.MySQLDSN(t)
			table := internalTable(t, func(ctx context.Context, drop string) error {
				mc, err := storedsn.MySQL(dsn)
				if err != nil {
					return err
				}
				conn, err := mysql.NewConnector(mc)
				if err != nil {
					return err
				}
				db := sql.OpenDB(conn)
				defer db.Close()
				_, err = db.ExecContext(ctx, drop)
				return err
			})
			return func(cfg LeaseConfig) (backend, LeaseConfig) {
				b, lc, err := dialMySQL(context.Background(), dsn, MySQLConfig{LeaseConfig: cfg, Table: table})
				if err != nil {
					t.Fatal(err)
				}
				return b, lc
			}
		},
		"etcd": func(t *testing.T) func(cfg LeaseConfig) (backend, LeaseConfig) {
			host, ns := etcdtest.Shared(t), internalName(t)
			return func(cfg LeaseConfig) (backend, LeaseConfig) {
				cfg.Namespace = ns
				b, lc, err := dialEtcd(context.Background(), EtcdConfig{LeaseConfig: cfg, Endpoints: []string{host}, DialTimeout: 10 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				return b, lc
			}
		},
		"redis": func(t *testing.T) func(cfg LeaseConfig) (backend, LeaseConfig) {
			url, ns := testenv.RedisURL(t), internalName(t)
			return func(cfg LeaseConfig) (backend, LeaseConfig) {
				cfg.Namespace = ns
				b, lc, err := dialRedis(context.Background(), url, RedisConfig{LeaseConfig: cfg})
				if err != nil {
					t.Fatal(err)
				}
				return b, lc
			}
		},
	}
	for _, name := range []string{"postgres", "mysql", "etcd", "redis"} {
		t.Run(name, func(t *testing.T) {
			// The default timings: the write ahead waits for Close, not
			// for its attempt's (LostAfter - RenewEvery) / 2 = 6 s.
			cfg := LeaseConfig{Space: Space{Workers: 2}, StateFile: filepath.Join(t.TempDir(), "worker-id")}
			dial := store[name](t)
			b, lc := dial(cfg)
			late := &cutMarkLandsLate{backend: b}
			l, err := open(context.Background(), late, lc)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			id := l.Identity().WorkerID
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
				late.mu.Lock()
				cut := late.cut
				late.mu.Unlock()
				if cut {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no mark written ahead within 10 s of open")
				}
			}
			if err := l.Close(); err != nil {
				t.Fatalf("Close() = %v", err)
			}
			if late.late == nil {
				t.Fatalf("the cut mark write was not kept to land late")
			}
			b, lc = dial(cfg)
			again, err := open(context.Background(), b, lc)
			if err != nil {
				t.Fatalf("open again: %v", err)
			}
			defer again.Close()
			if got := again.Identity().WorkerID; got != id {
				t.Fatalf("worker ID on restart with state file naming %d, released, its mark written ahead cut short = %d; want %d", id, got, id)
			}
			if mark, _ := again.Load(context.Background()); !mark.IsZero() {
				t.Fatalf("Load() on restart = %v; want the zero time, the mark asked for before the release (none)", mark)
			}
		})
	}
}

// internalName returns a namespace or table name no other test uses.
func internalName(t *testing.T) string {
	return fmt.Sprintf("test_wid_internal_%d_%d", time.Now().UnixNano()%1e12, internalSeq.Add(1))
}

var internalSeq atomic.Int64

// internalTable returns a table name, dropped at the end of the test with
// drop.
func internalTable(t *testing.T, drop func(ctx context.Context, stmt string) error) string {
	table := internalName(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := drop(ctx, `DROP TABLE IF EXISTS `+table); err != nil {
			t.Logf("cleanup of table %s: %v", table, err)
		}
	})
	return table
}
