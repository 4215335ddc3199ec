package tlsfiles_test

import (
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/internal/testenv/certs"
	"github.com/idgenkit/idgen/internal/tlsfiles"
)

// listen serves TLS handshakes on loopback with cfg, each connection
// answering one byte after its handshake.
func listen(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if c.(*tls.Conn).Handshake() == nil {
					c.Write([]byte{1})
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// dial handshakes with addr as cfg says and reads the server's byte: the
// server's verdict on the client certificate comes after the client's
// handshake returns, with TLS 1.3.
func dial(addr string, cfg *tls.Config) (*tls.ConnectionState, error) {
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := c.Read(make([]byte, 1)); err != nil {
		return nil, err
	}
	st := c.ConnectionState()
	return &st, nil
}

func TestMutualTLS(t *testing.T) {
	f := certs.New(t)
	s, err := tlsfiles.NewServer(f.Server.CertFile, f.Server.KeyFile, f.CA.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := listen(t, s.Config())
	client := func(cert, key string) *tls.Config {
		c, err := tlsfiles.Client{CAFile: f.CA.CertFile, CertFile: cert, KeyFile: key}.Config(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Certificates) > 0 { // send it even when the server names other CAs, as curl does
			cert := c.Certificates[0]
			c.Certificates = nil
			c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
		}
		return c
	}
	if st, err := dial(addr, client(f.Client.CertFile, f.Client.KeyFile)); err != nil || st.Version < tls.VersionTLS12 {
		t.Fatalf("handshake with the CA's client certificate = %v, %v; want TLS ≥ 1.2", st, err)
	}
	for _, tc := range []struct {
		name, cert, key, want string
	}{
		{"no certificate", "", "", "certificate required"},
		{"another CA", f.WrongClient.CertFile, f.WrongClient.KeyFile, "unknown certificate authority"},
		{"expired", f.Expired.CertFile, f.Expired.KeyFile, "expired certificate"},
	} {
		if _, err := dial(addr, client(tc.cert, tc.key)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: handshake = %v; want an error with %q", tc.name, err, tc.want)
		}
	}
	// TLS 1.1 is refused.
	old := client(f.Client.CertFile, f.Client.KeyFile)
	old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	if _, err := dial(addr, old); err == nil || !strings.Contains(err.Error(), "protocol version") {
		t.Errorf("TLS 1.1 handshake = %v; want a protocol version error", err)
	}
	// A client that does not trust the CA refuses the server.
	bare, _ := tlsfiles.Client{CertFile: f.Client.CertFile, KeyFile: f.Client.KeyFile, ServerName: "localhost"}.Config(nil)
	if _, err := dial(addr, bare); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("handshake without the CA among the roots = %v; want unknown authority", err)
	}
}

// Files replaced under a running listener take effect at the next
// handshake; a load that fails keeps the files in use; Reload loads at once.
func TestRotation(t *testing.T) {
	f := certs.New(t)
	var reloads []error
	s, err := tlsfiles.NewServer(f.Server.CertFile, f.Server.KeyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	s.OnReload = func(err error) { reloads = append(reloads, err) }
	addr := listen(t, s.Config())
	cc, _ := tlsfiles.Client{CAFile: f.CA.CertFile}.Config(nil)
	serial := func() string {
		t.Helper()
		st, err := dial(addr, cc)
		if err != nil {
			t.Fatal(err)
		}
		return st.PeerCertificates[0].SerialNumber.String()
	}
	first := serial()
	if got := s.Leaf().SerialNumber.String(); got != first {
		t.Fatalf("Leaf() serial %s; handshake's %s", got, first)
	}

	// A certificate without its key: refused, the old pair stays.
	p2, err := f.Issue("server2", certs.ServerKind)
	if err != nil {
		t.Fatal(err)
	}
	rename(t, p2.CertFile, f.Server.CertFile)
	if got := serial(); got != first {
		t.Errorf("serial after a certificate written without its key = %s; want the old %s", got, first)
	}
	if len(reloads) != 1 || !errors.Is(reloads[0], tlsfiles.ErrFiles) {
		t.Errorf("OnReload after a mismatched pair got %v; want one ErrFiles error", reloads)
	}
	if got := serial(); got != first || len(reloads) != 1 {
		t.Errorf("the next handshake with the same mismatched pair: serial %s, %d loads; want the old %s and no new load", got, len(reloads), first)
	}
	rename(t, p2.KeyFile, f.Server.KeyFile)
	second := serial()
	if second == first {
		t.Fatalf("serial after rotation = %s; want a new certificate", second)
	}
	if err := reloads[len(reloads)-1]; err != nil {
		t.Errorf("OnReload after a good pair got %v; want nil", err)
	}
	n := len(reloads)
	serial()
	if len(reloads) != n {
		t.Errorf("a handshake with unchanged files reloaded them (%d loads; want %d)", len(reloads), n)
	}
	if err := s.Reload(); err != nil || len(reloads) != n+1 {
		t.Errorf("Reload() = %v, %d loads; want nil, %d", err, len(reloads), n+1)
	}
}

func TestBadFiles(t *testing.T) {
	f := certs.New(t)
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	for _, tc := range []struct {
		name, cert, key, ca, want string
	}{
		{"missing cert", filepath.Join(f.Dir, "none.pem"), f.Server.KeyFile, "", "none.pem"},
		{"key of another", f.Server.CertFile, f.Client.KeyFile, "", "private key does not match"},
		{"CA not PEM", f.Server.CertFile, f.Server.KeyFile, notPEM, "ca.txt holds no PEM certificate"},
	} {
		_, err := tlsfiles.NewServer(tc.cert, tc.key, tc.ca)
		if !errors.Is(err, tlsfiles.ErrFiles) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewServer = %v; want ErrFiles with %q", tc.name, err, tc.want)
		}
	}
	if _, err := (tlsfiles.Client{CertFile: f.Client.CertFile}).Config(nil); !errors.Is(err, tlsfiles.ErrFiles) || !strings.Contains(err.Error(), "needs both files") {
		t.Errorf("Client{CertFile only}.Config = %v; want ErrFiles naming both files", err)
	}
	base := &tls.Config{MinVersion: tls.VersionTLS10, ServerName: "a"}
	c, err := tlsfiles.Client{ServerName: "b"}.Config(base)
	if err != nil || c.MinVersion != tls.VersionTLS12 || c.ServerName != "b" || base.ServerName != "a" {
		t.Errorf("Client{ServerName: b}.Config(base) = %v, %v; want a clone with TLS 1.2 and b", c, err)
	}
}

// rename moves src over dst, as a certificate manager replaces a file: a
// reader sees the old file or the new, never half of one.
func rename(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.Rename(src, dst); err != nil {
		t.Fatal(err)
	}
}
