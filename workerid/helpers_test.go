package workerid_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/idgenkit/idgen/internal/testenv"
)

var (
	etcdOnce sync.Once
	etcdSrv  *embed.Etcd
	etcdURL  string
	etcdErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if etcdSrv != nil {
		etcdSrv.Close()
		os.RemoveAll(etcdSrv.Config().Dir)
	}
	os.Exit(code)
}

// freePort returns a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startEtcd starts an embedded single-member etcd on loopback with free
// ports, in dir. The caller closes it.
func startEtcd(t testing.TB, dir string) (*embed.Etcd, string, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Name = "idgen-test"
	cfg.LogLevel = "fatal"
	cfg.LogOutputs = []string{"stderr"}
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, "", fmt.Errorf("embedded etcd not ready after 30s")
	}
	return e, cu.Host, nil
}

// sharedEtcd returns host:port of the package's embedded etcd, started on
// first use and stopped by TestMain.
func sharedEtcd(t testing.TB) string {
	t.Helper()
	etcdOnce.Do(func() {
		dir, err := os.MkdirTemp("", "idgen-workerid-etcd")
		if err != nil {
			etcdErr = err
			return
		}
		etcdSrv, etcdURL, etcdErr = startEtcd(t, dir)
	})
	if etcdErr != nil {
		t.Fatalf("embedded etcd: %v", etcdErr)
	}
	return etcdURL
}

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
