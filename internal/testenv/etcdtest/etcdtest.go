// Package etcdtest runs an embedded single-member etcd on loopback for
// tests, so that etcd tests need no server on the machine. It is a package
// of its own so that only the tests that use etcd link its server.
package etcdtest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// FreePort returns a loopback port nothing listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Start starts an embedded etcd with free ports and its data in dir, and
// returns it with its client host:port once it is ready (at most 30 s).
// The caller closes it.
func Start(t testing.TB, dir string) (*embed.Etcd, string, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Name = "idgen-test"
	cfg.LogLevel = "fatal"
	cfg.LogOutputs = []string{"stderr"}
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", FreePort(t)))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", FreePort(t)))
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

var (
	once   sync.Once
	shared *embed.Etcd
	host   string
	err    error
)

// Shared returns host:port of the test binary's embedded etcd, started on
// first use; a test binary that calls it calls Stop from TestMain. Tests
// sharing it keep apart by namespace.
func Shared(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		dir, derr := os.MkdirTemp("", "idgen-etcd")
		if derr != nil {
			err = derr
			return
		}
		shared, host, err = Start(t, dir)
	})
	if err != nil {
		t.Fatalf("embedded etcd: %v", err)
	}
	return host
}

// Stop stops the shared etcd, if it was started, and removes its data.
func Stop() {
	if shared != nil {
		shared.Close()
		os.RemoveAll(shared.Config().Dir)
	}
}
