package workerid_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

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

// TestZKDigestACL: a lease with digest credentials creates its nodes under
// the user's ACL alone, so that a client without the password can neither
// delete nor read a live worker's claim, nor claim an ID itself; a wrong
// password is refused (ErrUnavailable, "not authenticated"); an old tree
// that anyone may delete from is refused (ErrConfig).
func TestZKDigestACL(t *testing.T) {
	host := zktest.Shared(t)
	root := "/" + uniqueName(t)
	ctx := context.Background()
	open := func(user, pw, path string) (*workerid.ZK, error) {
		return workerid.OpenZK(ctx, workerid.ZKConfig{Servers: []string{host}, Path: path, User: user, Password: pw,
			LeaseConfig: workerid.LeaseConfig{TTL: 5 * time.Second, Space: workerid.Space{Workers: 4}}, DialTimeout: 10 * time.Second})
	}
	s, err := open("idgen", "s3cret-zk", root)
	if err != nil {
		t.Fatalf("OpenZK with digest auth: %v", err)
	}
	defer s.Close()
	claim := fmt.Sprintf("%s/workers/%d", root, s.Identity().WorkerID)

	other, _, err := zk.Connect([]string{host}, 5*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Delete(claim, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("an unauthenticated client deletes the live claim %s: %v; want %v", claim, err, zk.ErrNoAuth)
	}
	if _, _, err := other.Get(claim); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("an unauthenticated client reads the claim: %v; want %v", err, zk.ErrNoAuth)
	}
	if _, err := other.Create(root+"/workers/3", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("an unauthenticated client claims worker 3: %v; want %v", err, zk.ErrNoAuth)
	}
	other.AddAuth("digest", []byte("idgen:wrong"))
	if err := other.Delete(claim, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("a client with a wrong password deletes the live claim: %v; want %v", err, zk.ErrNoAuth)
	}
	if ok, _, err := other.Exists(claim); !ok || err != nil {
		t.Fatalf("the claim is gone: exists %v, %v", ok, err)
	}

	for _, c := range []struct{ user, pw string }{{"idgen", "wrong"}, {"", ""}, {"intruder", "intruder-pw"}} {
		s2, err := open(c.user, c.pw, root)
		if err == nil {
			s2.Close()
		}
		if !errors.Is(err, idgen.ErrUnavailable) || !strings.Contains(err.Error(), "not authenticated") || c.pw != "" && strings.Contains(err.Error(), c.pw) {
			t.Errorf("OpenZK as %q/%q on the protected tree = %v; want ErrUnavailable, not authenticated", c.user, c.pw, err)
		}
	}

	// A tree made without credentials lets anyone delete: refused.
	open2 := "/" + uniqueName(t)
	s3, err := open("", "", open2)
	if err != nil {
		t.Fatal(err)
	}
	s3.Close()
	if s4, err := open("idgen", "s3cret-zk", open2); !errors.Is(err, workerid.ErrConfig) || !strings.Contains(err.Error(), "world:anyone") {
		if s4 != nil {
			s4.Close()
		}
		t.Errorf("OpenZK with credentials on an open tree = %v; want ErrConfig naming world:anyone", err)
	}
	if _, err := open("idgen", "", root); !errors.Is(err, workerid.ErrConfig) {
		t.Errorf("OpenZK with a user and no password = %v; want ErrConfig", err)
	}
}
