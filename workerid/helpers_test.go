package workerid_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/testenv/etcdtest"
	"github.com/idgenkit/idgen/internal/testenv/zktest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	etcdtest.Stop()
	zktest.Stop()
	os.Exit(code)
}

var (
	freePort   = etcdtest.FreePort
	startEtcd  = etcdtest.Start
	sharedEtcd = etcdtest.Shared
)

var nameSeq atomic.Int64

var nonWord = regexp.MustCompile(`[^a-z0-9_]+`)

// uniqueName returns a table name or namespace no other test uses.
func uniqueName(t testing.TB) string {
	name := nonWord.ReplaceAllString(strings.ToLower(t.Name()), "_")
	if len(name) > 30 {
		name = name[len(name)-30:]
	}
	return fmt.Sprintf("test_wid_%s_%d_%d", name, time.Now().UnixNano()%1e9, nameSeq.Add(1))
}

// pgTable returns a unique table name, dropped at the end of the test.
func pgTable(t testing.TB, dsn string) string {
	t.Helper()
	table := uniqueName(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("cleanup of table %s: %v", table, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, `DROP TABLE IF EXISTS `+table); err != nil {
			t.Logf("cleanup of table %s: %v", table, err)
		}
	})
	return table
}

func postgresDSN(t testing.TB) string { return testenv.PostgresDSN(t) }

// proxy is the test's cuttable TCP proxy (internal/testenv).
type proxy = testenv.Proxy

func newProxy(t testing.TB, target string) *proxy { return testenv.NewProxy(t, target) }

func viaProxy(t testing.TB, dsn string) (string, *proxy) { return testenv.ViaProxy(t, dsn) }
