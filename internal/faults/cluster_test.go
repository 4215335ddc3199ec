package faults

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/testenv/etcdtest"
)

var freePort = etcdtest.FreePort

// A proc is a child process this test started, with its output in a file.
type proc struct {
	name   string
	bin    string
	args   []string
	env    []string
	log    string
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	status error // of the last exit
}

func (p *proc) start(t testing.TB) {
	t.Helper()
	out, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("%s log: %v", p.name, err)
	}
	defer out.Close()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	exited := make(chan struct{})
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.status = err
		p.mu.Unlock()
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
}

func (p *proc) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return fmt.Errorf("%s not started", p.name)
	}
	return p.cmd.Process.Signal(sig)
}

// kill sends SIGKILL (continuing a stopped process is not needed for it)
// and waits for the exit.
func (p *proc) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-exited
}

// term sends SIGTERM and waits up to 20 s, then kills.
func (p *proc) term() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
}

// tail returns the last lines of the process's output and its last exit.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.exited:
		lines = append(lines, fmt.Sprintf("(exited: %v)", p.status))
	default:
	}
	return strings.Join(lines[max(0, len(lines)-6):], "\n")
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// idgenBinary builds cmd/idgen once per test binary, as internal/cli's
// tests do (same flags: the build cache serves both).
func idgenBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "idgen-faults-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "idgen")
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		out, err := exec.Command(goBin, "build", "-o", builtBin, "../../cmd/idgen").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// An etcdCluster is three etcd members, each a process of Debian's etcd.
type etcdCluster struct {
	members []*proc
	clients []string // host:port of each member
	c       *clientv3.Client
}

// startEtcd starts n members; heartbeat and election (ms), when not 0, set
// --heartbeat-interval and --election-timeout.
func startEtcd(t testing.TB, n, heartbeat, election int) *etcdCluster {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		if testenv.CI() {
			t.Fatalf("etcd binary missing under CI=true (apt-get install etcd-server): %v", err)
		}
		t.Skipf("etcd binary missing (apt-get install etcd-server): %v", err)
	}
	dir := t.TempDir()
	var peers []string
	var cl, pl []string
	for i := range n {
		cl = append(cl, fmt.Sprintf("127.0.0.1:%d", freePort(t)))
		pl = append(pl, fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
		peers = append(peers, fmt.Sprintf("m%d=%s", i, pl[i]))
	}
	e := &etcdCluster{clients: cl}
	for i := range n {
		p := &proc{name: fmt.Sprintf("etcd m%d", i), bin: bin, log: filepath.Join(dir, fmt.Sprintf("m%d.log", i)),
			args: []string{"--name", fmt.Sprintf("m%d", i), "--data-dir", filepath.Join(dir, fmt.Sprintf("m%d", i)),
				"--listen-client-urls", "http://" + cl[i], "--advertise-client-urls", "http://" + cl[i],
				"--listen-peer-urls", pl[i], "--initial-advertise-peer-urls", pl[i],
				"--initial-cluster", strings.Join(peers, ","), "--initial-cluster-state", "new",
				"--initial-cluster-token", "idgen-faults", "--logger", "zap", "--log-level", "error"}}
		if heartbeat > 0 {
			p.args = append(p.args, "--heartbeat-interval", fmt.Sprint(heartbeat), "--election-timeout", fmt.Sprint(election))
		}
		p.start(t)
		e.members = append(e.members, p)
	}
	t.Cleanup(func() {
		for _, m := range e.members {
			m.signal(syscall.SIGCONT)
			m.kill()
		}
	})
	c, err := clientv3.New(clientv3.Config{Endpoints: cl, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	e.c = c
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := c.Put(ctx, "/faults/ready", "1")
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd cluster not ready in 60 s: %v\n%s", err, e.members[0].tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return e
}

// leader returns the index of the member that leads now.
func (e *etcdCluster) leader(t testing.TB) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for i, ep := range e.clients {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			st, err := e.c.Status(ctx, ep)
			cancel()
			if err == nil && st.Leader != 0 && st.Header.MemberId == st.Leader {
				return i
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no etcd leader in 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitWhole waits, at most within, until every member answers, all follow
// one leader, and every member has applied the entries the members held
// when they first all answered; it returns how long it waited. A fault
// injected before then (a member thawed but still catching up) could leave
// the cluster without a quorum.
func (e *etcdCluster) waitWhole(within time.Duration) time.Duration {
	start := time.Now()
	var target uint64
	for time.Since(start) < within {
		var leader, least, most uint64
		ok := true
		for i, ep := range e.clients {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			st, err := e.c.Status(ctx, ep)
			cancel()
			if err != nil || st.Leader == 0 || (i > 0 && st.Leader != leader) {
				ok = false
				break
			}
			leader, most = st.Leader, max(most, st.RaftIndex)
			if i == 0 || st.RaftAppliedIndex < least {
				least = st.RaftAppliedIndex
			}
		}
		if ok {
			if target == 0 {
				target = most
			}
			if least >= target {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// A node is one `idgen serve` process and the proxies its store traffic
// goes through.
type node struct {
	proc
	i       int
	grpc    string          // host:port of its gRPC service
	proxies []*testenv.Link // to each store endpoint
	state   string          // its worker-ID state file (topology A)
	mark    string          // its high-water mark file (topology A)
}

// waitServing waits until the node's gRPC port accepts a connection (serve
// listens only once its generator is built), or its process exits.
func (n *node) waitServing(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", n.grpc, time.Second)
		if err == nil {
			c.Close()
			return
		}
		n.mu.Lock()
		exited := n.exited
		n.mu.Unlock()
		select {
		case <-exited:
			t.Fatalf("node %d exited while starting:\n%s", n.i, n.tail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d not serving in 60 s:\n%s", n.i, n.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (n *node) setCut(cut bool) {
	for _, p := range n.proxies {
		p.Hold(cut)
	}
}

func (n *node) setDelay(d time.Duration) {
	for _, p := range n.proxies {
		p.SetDelay(d)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}
