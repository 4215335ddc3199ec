package workerid_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idgenkit/idgen"
	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/workerid"
)

func init() {
	backends = append(backends, struct {
		name  string
		setup func(t *testing.T) backend
	}{"mysql", func(t *testing.T) backend {
		dsn := testenv.MySQLDSN(t)
		table := myTable(t, dsn)
		return backend{
			addr: dsn,
			open: func(ctx context.Context, addr string, cfg workerid.LeaseConfig) (leaseSource, error) {
				s, err := workerid.OpenMySQL(ctx, addr, workerid.MySQLConfig{LeaseConfig: cfg, Table: table})
				if err != nil {
					return nil, err
				}
				return s, nil
			},
			via: func(t *testing.T) (string, *proxy) { return viaProxy(t, dsn) },
		}
	}})
}

// myTable returns a unique MariaDB table name, dropped at the end of the
// test.
func myTable(t testing.TB, dsn string) string {
	t.Helper()
	table := uniqueName(t)
	t.Cleanup(func() {
		cfg, err := storedsn.MySQL(dsn)
		if err != nil {
			t.Logf("cleanup of table %s: %v", table, err)
			return
		}
		conn, _ := mysql.NewConnector(cfg)
		db := sql.OpenDB(conn)
		defer db.Close()
		if _, err := db.Exec(`DROP TABLE IF EXISTS ` + table); err != nil {
			t.Logf("cleanup of table %s: %v", table, err)
		}
	})
	return table
}

// A server slow to greet (1 s, as a loaded machine can be) while the
// lease opens: the handshake waits up to OpenTimeout, not a read timeout
// derived from the renewal timing (350 ms with fast(): OpenMySQL failed
// with "i/o timeout" before, on every connection database/sql tried).
// Connections made after the open are not delayed: Close gives its
// release RenewEvery (300 ms), which a new connection greeted 1 s late
// would not fit in.
func TestMySQLOpenSlowHandshake(t *testing.T) {
	dsn := testenv.MySQLDSN(t)
	table := myTable(t, dsn)
	mc, err := storedsn.MySQL(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	const delay = time.Second
	var opening atomic.Bool
	opening.Store(true)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(slow bool) {
				defer c.Close()
				if slow {
					time.Sleep(delay) // the server's greeting comes this late
				}
				s, err := net.Dial("tcp", mc.Addr)
				if err != nil {
					return
				}
				defer s.Close()
				go io.Copy(s, c)
				io.Copy(c, s)
			}(opening.Load())
		}
	}()
	slow := strings.Replace(dsn, mc.Addr, ln.Addr().String(), 1)
	if slow == dsn {
		t.Fatalf("DSN %q does not name %s", dsn, mc.Addr)
	}
	start := time.Now()
	s, err := workerid.OpenMySQL(context.Background(), slow, workerid.MySQLConfig{LeaseConfig: fast(4), Table: table})
	if err != nil {
		t.Fatalf("OpenMySQL through a server that greets %v late = %v; want a lease (OpenTimeout %v)", delay, err, workerid.DefaultMySQLOpenTimeout)
	}
	opening.Store(false)
	t.Logf("opened in %v", time.Since(start))
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
}

func TestMySQLUnreachableAndBadConfig(t *testing.T) {
	addr := "127.0.0.1:" + itoa(freePort(t))
	_, err := workerid.OpenMySQL(context.Background(), "mysql://root@"+addr+"/test?timeout=2s", workerid.MySQLConfig{})
	if !errors.Is(err, idgen.ErrUnavailable) {
		t.Fatalf("OpenMySQL(%s) = %v; want ErrUnavailable", addr, err)
	}
	for _, cfg := range []workerid.MySQLConfig{
		{Table: "Bad-Table"},
		{LeaseConfig: workerid.LeaseConfig{TTL: 2e9, LostAfter: 2e9}},
	} {
		if _, err := workerid.OpenMySQL(context.Background(), "mysql://root@"+addr+"/test", cfg); !errors.Is(err, workerid.ErrConfig) {
			t.Fatalf("OpenMySQL(%+v) = %v; want ErrConfig", cfg, err)
		}
	}
}
