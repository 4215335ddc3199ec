package workerid_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

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
