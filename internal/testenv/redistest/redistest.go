// Package redistest runs a redis-server of its own for tests that need a
// configuration the shared one lacks: TLS with client certificates and an
// ACL user.
package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/testenv/certs"
)

// TLS is a running redis-server that listens only on a TLS port.
type TLS struct {
	// Addr is the TLS host:port.
	Addr string
	// User and Password are the ACL user's, allowed every command on the
	// keys idgen:* only; the default user is off.
	User, Password string
}

// StartTLS starts redis-server on a free loopback TLS port (no plaintext
// port), serving cs.Server, requiring client certificates signed by cs.CA
// (tls-auth-clients yes), with the default user disabled and an ACL user
// user/password. No persistence; its directory is a temporary one. It is
// killed at the end of the test. Without redis-server it fails under
// CI=true and skips otherwise.
func StartTLS(t testing.TB, cs *certs.Set, user, password string) *TLS {
	t.Helper()
	bin := testenv.Binary(t, "redis-server", "redis-server")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	conf := fmt.Sprintf("port 0\ntls-port %d\nbind 127.0.0.1\ndir %s\nsave \"\"\nappendonly no\n"+
		"tls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\ntls-auth-clients yes\n"+
		"user default off\nuser %s on >%s ~idgen:* +@all\n",
		port, dir, cs.Server.CertFile, cs.Server.KeyFile, cs.CA.CertFile, user, password)
	path := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, path)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s := &TLS{Addr: "127.0.0.1:" + strconv.Itoa(port), User: user, Password: password}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", s.Addr, time.Second)
		if err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			text, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server at %s not listening after 30s: %v\n%s", s.Addr, err, text)
		}
	}
}
