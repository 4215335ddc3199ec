// Package etcdtest runs Debian's etcd binary (the etcd-server package) as
// a child process on loopback for tests, as package zktest runs ZooKeeper,
// so that no etcd server is linked into the module. Without an etcd binary
// on PATH a test fails under CI=true and skips otherwise.
package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/idgenkit/idgen/internal/testenv"
)

// FreePort returns a loopback port nothing listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	return port
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// A Process is an etcd server run as a child process, which a test can
// freeze with SIGSTOP or stop with Close.
type Process struct {
	// Addr is the client host:port.
	Addr string
	dir  string // the data directory
	cmd  *exec.Cmd
	log  string // the server's output
	once sync.Once
}

// binary returns the etcd binary's path, failing the test under CI=true
// and skipping it otherwise when there is none.
func binary(t testing.TB) string {
	t.Helper()
	return testenv.Binary(t, "etcd", "etcd-server")
}

// start runs bin on free loopback ports, its data and log in dir, the
// client URL of scheme (http, https) and extra flags, and waits until a
// client of cfg (its endpoints and timeouts set here) reads (at most 30 s).
func start(bin, dir, scheme string, extra []string, cfg clientv3.Config) (*Process, error) {
	cport, err := freePort()
	if err != nil {
		return nil, err
	}
	pport, err := freePort()
	if err != nil {
		return nil, err
	}
	cu := fmt.Sprintf("%s://127.0.0.1:%d", scheme, cport)
	pu := fmt.Sprintf("http://127.0.0.1:%d", pport)
	p := &Process{Addr: cu[len(scheme+"://"):], dir: dir, log: filepath.Join(dir, "etcd.log")}
	out, err := os.Create(p.log)
	if err != nil {
		return nil, fmt.Errorf("etcd log: %w", err)
	}
	defer out.Close()
	args := append([]string{"--name", "idgen-test", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", "idgen-test=" + pu, "--logger", "zap", "--log-level", "error"}, extra...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	cfg.Endpoints, cfg.DialTimeout, cfg.Logger = []string{p.Addr}, 5*time.Second, zap.NewNop()
	c, err := clientv3.New(cfg)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("etcd client of %s: %w", p.Addr, err)
	}
	defer c.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Get(ctx, "/")
		cancel()
		if err == nil {
			return p, nil
		}
		if time.Now().After(deadline) {
			text, _ := os.ReadFile(p.log)
			p.Close()
			return nil, fmt.Errorf("etcd process at %s not serving after 30s: %w\n%s", p.Addr, err, text)
		}
	}
}

// Start starts an etcd process with its data in dir, and returns it with
// its client host:port once it serves (at most 30 s). The caller closes
// it.
func Start(t testing.TB, dir string) (*Process, string, error) {
	t.Helper()
	p, err := start(binary(t), dir, "http", nil, clientv3.Config{})
	if err != nil {
		return nil, "", err
	}
	return p, p.Addr, nil
}

// Pid returns the server's process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Freeze stops the server with SIGSTOP: its sockets stay open, nothing
// answers.
func (p *Process) Freeze() error { return p.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw continues a frozen server with SIGCONT.
func (p *Process) Thaw() error { return p.cmd.Process.Signal(syscall.SIGCONT) }

// Close kills the server (continued first if frozen) and waits for it to
// exit; later calls do nothing.
func (p *Process) Close() {
	p.once.Do(func() {
		p.Thaw()
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
}

var (
	once   sync.Once
	shared *Process
	err    error
)

// Shared returns host:port of the test binary's etcd process, started on
// first use; a test binary that calls it calls Stop from TestMain. Tests
// sharing it keep apart by namespace.
func Shared(t testing.TB) string {
	t.Helper()
	bin := binary(t)
	once.Do(func() {
		dir, derr := os.MkdirTemp("", "idgen-etcd")
		if derr != nil {
			err = derr
			return
		}
		if shared, err = start(bin, dir, "http", nil, clientv3.Config{}); err != nil {
			err = errors.Join(err, os.RemoveAll(dir))
		}
	})
	if err != nil {
		t.Fatalf("etcd process: %v", err)
	}
	return shared.Addr
}

// Stop stops the shared etcd, if it was started, and removes its data.
func Stop() {
	if shared != nil {
		shared.Close()
		os.RemoveAll(shared.dir)
	}
}
