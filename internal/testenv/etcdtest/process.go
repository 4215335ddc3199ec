package etcdtest

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/testenv/certs"
)

// A Process is an etcd server run as a child process (Debian's etcd-server
// package), so that a test can freeze it with SIGSTOP.
type Process struct {
	// Addr is the client host:port.
	Addr string
	cmd  *exec.Cmd
	log  string // the server's output
}

// StartProcess starts the etcd binary on free loopback ports, its data in
// a temporary directory, and waits until it serves (at most 30 s). Without
// an etcd binary on PATH the test fails under CI=true and skips otherwise.
// The process is killed at the end of the test (continued first if
// stopped).
func StartProcess(t testing.TB) *Process {
	t.Helper()
	return start(t, "http", nil, clientv3.Config{})
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
	p := start(t, "https", []string{"--client-cert-auth", "--trusted-ca-file", s.Certs.CA.CertFile,
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

// start runs etcd with the client URL's scheme and extra flags, and waits
// for a client of cfg (its endpoints and timeouts set here) to read.
func start(t testing.TB, scheme string, extra []string, cfg clientv3.Config) *Process {
	t.Helper()
	bin := testenv.Binary(t, "etcd", "etcd-server")
	cu := fmt.Sprintf("%s://127.0.0.1:%d", scheme, FreePort(t))
	pu := fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	dir := t.TempDir()
	p := &Process{Addr: cu[len(scheme+"://"):], log: filepath.Join(dir, "etcd.log")}
	out, err := os.Create(p.log)
	if err != nil {
		t.Fatalf("etcd log: %v", err)
	}
	defer out.Close()
	args := append([]string{"--name", "idgen-test", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", "idgen-test=" + pu, "--logger", "zap", "--log-level", "error"}, extra...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(p.kill)
	cfg.Endpoints, cfg.DialTimeout, cfg.Logger = []string{p.Addr}, 5*time.Second, zap.NewNop()
	c, err := clientv3.New(cfg)
	if err != nil {
		t.Fatalf("etcd client of %s: %v", p.Addr, err)
	}
	defer c.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Get(ctx, "/")
		cancel()
		if err == nil {
			return p
		}
		if time.Now().After(deadline) {
			text, _ := os.ReadFile(p.log)
			t.Fatalf("etcd process at %s not serving after 30s: %v\n%s", p.Addr, err, text)
		}
	}
}

// Pid returns the server's process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Freeze stops the server with SIGSTOP: its sockets stay open, nothing
// answers.
func (p *Process) Freeze() error { return p.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw continues a frozen server with SIGCONT.
func (p *Process) Thaw() error { return p.cmd.Process.Signal(syscall.SIGCONT) }

func (p *Process) kill() {
	p.Thaw()
	p.cmd.Process.Kill()
	p.cmd.Wait()
}
