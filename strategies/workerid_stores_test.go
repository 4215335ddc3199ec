package strategies_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/strategies"
)

// TestWorkerSourceMySQLRedis leases through the worker_source spec key:
// two live generators on one store hold different worker IDs.
func TestWorkerSourceMySQLRedis(t *testing.T) {
	ns := fmt.Sprintf("test_wid_strategies_%d", time.Now().UnixNano())
	t.Cleanup(func() {
		cfg, err := segment.MySQLConfig(testenv.MySQLDSN(t))
		if err != nil {
			return
		}
		conn, _ := mysql.NewConnector(cfg)
		db := sql.OpenDB(conn)
		defer db.Close()
		db.Exec(`DROP TABLE IF EXISTS ` + ns)
	})
	for _, source := range []string{
		testenv.MySQLDSN(t) + "?table=" + ns,
		testenv.RedisURL(t) + "?namespace=" + ns,
	} {
		spec := withSource("snowflake?preset=twitter&datacenter=1", source)
		a, err := strategies.NewText(context.Background(), spec)
		if err != nil {
			t.Fatalf("New(%q) = %v", spec, err)
		}
		b, err := strategies.NewText(context.Background(), spec)
		if err != nil {
			t.Fatalf("New(%q) second = %v", spec, err)
		}
		wa, wb := workerOf(t, a), workerOf(t, b)
		a.(io.Closer).Close()
		b.(io.Closer).Close()
		if wa == wb {
			t.Fatalf("%s: two live generators hold worker %d", source, wa)
		}
	}
}
