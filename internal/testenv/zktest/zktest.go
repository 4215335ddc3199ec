// Package zktest runs a standalone ZooKeeper server on loopback for tests,
// from Debian's zookeeper package (its jars under /usr/share/java), with its
// own temporary data directory. A test that cannot start it fails when
// CI=true and skips otherwise.
package zktest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/testenv"
)

// JavaDir holds the jars of Debian's zookeeper package.
const JavaDir = "/usr/share/java"

// TickTime is the server's tick: sessions may last from 2 ticks (200 ms),
// so that tests can use short TTLs, to MaxSession.
const (
	TickTime   = 100 * time.Millisecond
	MaxSession = time.Minute
)

// StartTimeout bounds a server's start, until it answers srvr. The JVM's
// start is CPU-bound: 7 to 15 s beside two busy loops on a shared 2-core
// machine (load average 15), and over 30 s, the bound before, in a
// CI_LOAD=2 run of the race tests, where two test binaries start at once.
// A server that exits fails at once, with its output.
const StartTimeout = 2 * time.Minute

// Server is a running ZooKeeper.
type Server struct {
	cmd    *exec.Cmd
	dir    string
	exited chan struct{} // closed when the process has exited
	Addr   string        // host:port
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Start starts a ZooKeeper server on a free loopback port and waits until
// it answers (at most StartTimeout). The caller calls Stop.
func Start() (*Server, error) {
	jars := []string{"zookeeper.jar", "zookeeper-jute.jar", "slf4j-api.jar", "slf4j-nop.jar", "commons-cli.jar", "metrics-core.jar"}
	for i, j := range jars {
		jars[i] = filepath.Join(JavaDir, j)
		if _, err := os.Stat(jars[i]); err != nil {
			return nil, fmt.Errorf("ZooKeeper jars missing (apt-get install zookeeper): %v", err)
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("java missing (apt-get install zookeeper): %v", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "idgen-zk")
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "zoo.cfg")
	text := fmt.Sprintf("tickTime=%d\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"+
		"minSessionTimeout=%d\nmaxSessionTimeout=%d\nadmin.enableServer=false\n4lw.commands.whitelist=srvr\n",
		TickTime.Milliseconds(), dir, port, 2*TickTime.Milliseconds(), MaxSession.Milliseconds())
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	logPath := filepath.Join(dir, "zookeeper.log")
	out, err := os.Create(logPath)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(java, "-Xmx128m", "-cp", strings.Join(jars, ":"), "org.apache.zookeeper.server.ZooKeeperServerMain", conf)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{cmd: cmd, dir: dir, exited: make(chan struct{}), Addr: "127.0.0.1:" + strconv.Itoa(port)}
	go func() { cmd.Wait(); close(s.exited) }()
	start := time.Now()
	for {
		if s.ok() {
			return s, nil
		}
		select {
		case <-s.exited:
			text, _ := os.ReadFile(logPath)
			s.Stop()
			return nil, fmt.Errorf("ZooKeeper at %s exited after %v: %s\n%s", s.Addr, time.Since(start).Round(time.Millisecond), cmd.ProcessState, text)
		default:
		}
		if time.Since(start) > StartTimeout {
			s.Stop()
			return nil, fmt.Errorf("ZooKeeper at %s not serving after %v", s.Addr, StartTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// StartT starts a server of the test's own, stopped at its end, and
// returns its host:port. It fails the test under CI=true when the server
// cannot start, and skips it otherwise.
func StartT(t testing.TB) string {
	t.Helper()
	s, err := Start()
	if err != nil {
		if testenv.CI() {
			t.Fatalf("ZooKeeper under CI=true: %v", err)
		}
		t.Skipf("ZooKeeper: %v", err)
	}
	t.Cleanup(s.Stop)
	return s.Addr
}

// ok sends the srvr four-letter word and reports whether the server serves.
func (s *Server) ok() bool {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	c.Write([]byte("srvr"))
	buf := make([]byte, 512)
	n, _ := c.Read(buf)
	return strings.Contains(string(buf[:n]), "Mode: standalone")
}

// Stop kills the server and removes its data.
func (s *Server) Stop() {
	s.cmd.Process.Kill()
	<-s.exited
	os.RemoveAll(s.dir)
}

var (
	once   sync.Once
	shared *Server
	err    error
)

// Shared returns host:port of the test binary's ZooKeeper, started on first
// use; a test binary that calls it calls Stop from TestMain. Tests sharing
// it keep apart by path. It fails the test under CI=true when the server
// cannot start, and skips it otherwise.
func Shared(t testing.TB) string {
	t.Helper()
	once.Do(func() { shared, err = Start() })
	if err != nil {
		if testenv.CI() {
			t.Fatalf("ZooKeeper under CI=true: %v", err)
		}
		t.Skipf("ZooKeeper: %v", err)
	}
	return shared.Addr
}

// Stop stops the shared server, if it was started.
func Stop() {
	if shared != nil {
		shared.Stop()
	}
}
