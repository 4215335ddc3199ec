package etcdtest

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/idgenkit/idgen/internal/testenv/certs"
)

// StartProcess starts the etcd binary on free loopback ports, its data in
// a temporary directory, and waits until it serves (at most 30 s). Without
// an etcd binary on PATH the test fails under CI=true and skips otherwise.
// The process is killed at the end of the test (continued first if
// stopped).
func StartProcess(t testing.TB) *Process {
	t.Helper()
	return startT(t, "http", nil, clientv3.Config{})
}

// Secure describes the etcd of StartSecure: TLS with client certificates
// required (--client-cert-auth, --trusted-ca-file) and RBAC enabled.
type Secure struct {
	// Certs holds the CA (--trusted-ca-file), the server's certificate,
	// and the client certificates.
	Certs *certs.Set
	// User and Password have the role Role: read and write on
	// /idgen/<Namespace>/ only.
	User, Password, Role, Namespace string
	// RootPassword is the root user's.
	RootPassword string
}

// StartSecure starts the etcd binary as StartProcess does, serving TLS
// with s.Certs.Server, requiring client certificates signed by s.Certs.CA,
// and with authentication enabled: a root user, and s.User with the least
// role idgen needs (s.Role: readwrite on the prefix /idgen/<s.Namespace>/).
func StartSecure(t testing.TB, s Secure) *Process {
	t.Helper()
	tc := &tls.Config{RootCAs: s.Certs.Pool(), Certificates: []tls.Certificate{s.Certs.Client.TLS()}}
	p := startT(t, "https", []string{"--client-cert-auth", "--trusted-ca-file", s.Certs.CA.CertFile,
		"--cert-file", s.Certs.Server.CertFile, "--key-file", s.Certs.Server.KeyFile}, clientv3.Config{TLS: tc})
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{p.Addr}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(), TLS: tc})
	if err != nil {
		t.Fatalf("etcd client of %s: %v", p.Addr, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := "/idgen/" + s.Namespace + "/"
	steps := []func() error{
		func() error { _, err := c.UserAdd(ctx, "root", s.RootPassword); return err },
		func() error { _, err := c.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := c.RoleAdd(ctx, s.Role); return err },
		func() error {
			_, err := c.RoleGrantPermission(ctx, s.Role, prefix, clientv3.GetPrefixRangeEnd(prefix), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := c.UserAdd(ctx, s.User, s.Password); return err },
		func() error { _, err := c.UserGrantRole(ctx, s.User, s.Role); return err },
		func() error { _, err := c.AuthEnable(ctx); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("etcd auth setup step %d: %v", i, err)
		}
	}
	return p
}

// startT starts etcd for one test (its data in the test's temporary
// directory, killed at its end) with the client URL's scheme and extra
// flags, and waits for a client of cfg to read.
func startT(t testing.TB, scheme string, extra []string, cfg clientv3.Config) *Process {
	t.Helper()
	p, err := start(binary(t), t.TempDir(), scheme, extra, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}
