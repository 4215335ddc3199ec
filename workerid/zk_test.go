package workerid_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/testenv/zktest"
	"github.com/idgenkit/idgen/workerid"
)

func init() {
	backends = append(backends, struct {
		name  string
		setup func(t *testing.T) backend
	}{"zk", func(t *testing.T) backend {
		host := zktest.Shared(t)
		root := "/" + uniqueName(t)
		return backend{
			addr: host,
			open: func(ctx context.Context, addr string, cfg workerid.LeaseConfig) (leaseSource, error) {
				s, err := workerid.OpenZK(ctx, workerid.ZKConfig{LeaseConfig: cfg, Servers: []string{addr}, Path: root, DialTimeout: 10 * time.Second})
				if err != nil {
					return nil, err
				}
				return s, nil
			},
			via: func(t *testing.T) (string, *proxy) { p := newProxy(t, host); return p.Addr(), p },
		}
	}})
}

func TestZKUnreachableAndBadConfig(t *testing.T) {
	addr := "127.0.0.1:" + itoa(freePort(t))
	_, err := workerid.OpenZK(context.Background(), workerid.ZKConfig{Servers: []string{addr}, DialTimeout: 500 * time.Millisecond})
	if !errors.Is(err, idgen.ErrUnavailable) {
		t.Fatalf("OpenZK(%s) = %v; want ErrUnavailable", addr, err)
	}
	for _, cfg := range []workerid.ZKConfig{
		{},
		{Servers: []string{addr}, Path: "relative"},
		{Servers: []string{addr}, Path: "/a/../b"},
		{Servers: []string{addr}, Node: "a/b"},
	} {
		if _, err := workerid.OpenZK(context.Background(), cfg); !errors.Is(err, workerid.ErrConfig) {
			t.Fatalf("OpenZK(%+v) = %v; want ErrConfig", cfg, err)
		}
	}
	// A TTL above the server's maxSessionTimeout (1 min) is refused:
	// the session would end before the lease is reported lost.
	host := zktest.Shared(t)
	cfg := workerid.ZKConfig{LeaseConfig: workerid.LeaseConfig{TTL: 2 * time.Minute}, Servers: []string{host}, Path: "/" + uniqueName(t)}
	if s, err := workerid.OpenZK(context.Background(), cfg); !errors.Is(err, workerid.ErrConfig) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("OpenZK(TTL 2m, max session 1m) = %v; want ErrConfig", err)
	}
}
