package etcdtest

import (
	"context"
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
	bin, err := exec.LookPath("etcd")
	if err != nil {
		if testenv.CI() {
			t.Fatalf("etcd binary missing under CI=true (apt-get install etcd-server): %v", err)
		}
		t.Skipf("etcd binary missing (apt-get install etcd-server): %v", err)
	}
	cu := fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	pu := fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	dir := t.TempDir()
	p := &Process{Addr: cu[len("http://"):], log: filepath.Join(dir, "etcd.log")}
	out, err := os.Create(p.log)
	if err != nil {
		t.Fatalf("etcd log: %v", err)
	}
	defer out.Close()
	p.cmd = exec.Command(bin, "--name", "idgen-test", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", "idgen-test="+pu, "--logger", "zap", "--log-level", "error")
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(p.kill)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{p.Addr}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
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
