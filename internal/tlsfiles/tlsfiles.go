// Package tlsfiles builds crypto/tls configurations from PEM files: a
// server's certificate and key, reloaded when the files change or when
// asked (SIGHUP), with an optional client CA for mutual TLS; and a client's
// CA, certificate, key and server name.
//
// Every configuration asks for TLS 1.2 at least and leaves the rest to
// crypto/tls's defaults (cipher suites, curves).
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/idgenkit/idgen/internal/errclass"
)

// MinVersion is the lowest TLS version every configuration accepts.
const MinVersion = tls.VersionTLS12

// ErrFiles reports certificate, key or CA files that cannot be used: not
// readable, not PEM, a key that does not match its certificate, a CA file
// without a certificate. The wrapping error names the file.
var ErrFiles = errclass.Invalid("tls: unusable certificate files")

// Server holds a server's certificate and key, and the CA its clients'
// certificates must chain to when ClientCA is set. Config returns a
// tls.Config whose GetConfigForClient checks, at each handshake, whether
// the files changed (by size, modification time and inode) and loads them
// again when they did: new handshakes then use the new certificate and CA,
// and connections already open keep theirs. Reload does the same at once,
// for SIGHUP. A reload that fails (a certificate written before its key)
// keeps the files in use, and is tried again once the files change again.
type Server struct {
	CertFile, KeyFile, ClientCA string
	// OnReload, when set, is called after each load after the first with the
	// error, nil for a load that took effect. It must not block.
	OnReload func(error)

	mu     sync.Mutex                    // serialises loads
	cur    atomic.Pointer[serverFiles]   // what handshakes use
	failed atomic.Pointer[[]os.FileInfo] // the stats of the files whose load failed last, until one succeeds
}

// serverFiles is one load of the files: what was read and the stat of each
// file when it was.
type serverFiles struct {
	cert  *tls.Certificate
	pool  *x509.CertPool // nil without ClientCA
	stats []os.FileInfo  // CertFile, KeyFile, ClientCA (when set)
	leaf  *x509.Certificate
}

// NewServer loads the files once: errors wrap ErrFiles and name the file.
func NewServer(certFile, keyFile, clientCA string) (*Server, error) {
	s := &Server{CertFile: certFile, KeyFile: keyFile, ClientCA: clientCA}
	f, err := s.load()
	if err != nil {
		return nil, err
	}
	s.cur.Store(f)
	return s, nil
}

func (s *Server) paths() []string {
	p := []string{s.CertFile, s.KeyFile}
	if s.ClientCA != "" {
		p = append(p, s.ClientCA)
	}
	return p
}

// stat returns the files' stats, nil for a file that is not there.
func (s *Server) stat() []os.FileInfo {
	var stats []os.FileInfo
	for _, p := range s.paths() {
		fi, _ := os.Stat(p)
		stats = append(stats, fi)
	}
	return stats
}

// load reads the files, their stats first so that a change during the read
// is seen again at the next check.
func (s *Server) load() (*serverFiles, error) {
	f := &serverFiles{stats: s.stat()}
	for i, p := range s.paths() {
		if f.stats[i] == nil {
			_, err := os.Stat(p)
			return nil, fmt.Errorf("%w: %w", ErrFiles, err)
		}
	}
	cert, err := loadPair(s.CertFile, s.KeyFile)
	if err != nil {
		return nil, err
	}
	f.cert, f.leaf = &cert, cert.Leaf
	if s.ClientCA != "" {
		if f.pool, err = LoadPool(s.ClientCA); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// same reports whether two sets of stats describe the same files: same
// inode, size and modification time, or both absent.
func same(a, b []os.FileInfo) bool {
	for i := range a {
		x, y := a[i], b[i]
		if x == nil || y == nil {
			if x != y {
				return false
			}
			continue
		}
		if !os.SameFile(x, y) || !x.ModTime().Equal(y.ModTime()) || x.Size() != y.Size() {
			return false
		}
	}
	return true
}

// Reload loads the files now, whether or not they changed. On error the
// files in use stay.
func (s *Server) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reloadLocked()
}

func (s *Server) reloadLocked() error {
	stats := s.stat()
	f, err := s.load()
	if err == nil {
		s.cur.Store(f)
		s.failed.Store(nil)
	} else {
		s.failed.Store(&stats)
	}
	if s.OnReload != nil {
		s.OnReload(err)
	}
	return err
}

// current returns the files to use for a handshake, loading them again
// first when they changed.
func (s *Server) current() *serverFiles {
	f := s.cur.Load()
	now := s.stat()
	if same(now, f.stats) {
		return f
	}
	if failed := s.failed.Load(); failed != nil && same(now, *failed) {
		return f // tried already: the same files fail the same way
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f2 := s.cur.Load(); f2 != f { // another handshake reloaded
		return f2
	}
	if failed := s.failed.Load(); failed != nil && same(now, *failed) {
		return f
	}
	s.reloadLocked()
	return s.cur.Load()
}

// Leaf returns the certificate in use.
func (s *Server) Leaf() *x509.Certificate { return s.cur.Load().leaf }

// Config returns a server configuration that offers nextProtos (ALPN, for
// example "h2", "http/1.1") and takes its certificate and client CA from
// the files at each handshake. With ClientCA set, clients must present a
// certificate that chains to it (tls.RequireAndVerifyClientCert).
func (s *Server) Config(nextProtos ...string) *tls.Config {
	return &tls.Config{
		MinVersion: MinVersion,
		NextProtos: nextProtos,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			f := s.current()
			c := &tls.Config{MinVersion: MinVersion, NextProtos: nextProtos, Certificates: []tls.Certificate{*f.cert}}
			if f.pool != nil {
				c.ClientCAs, c.ClientAuth = f.pool, tls.RequireAndVerifyClientCert
			}
			return c, nil
		},
	}
}

// LoadPool reads the PEM certificates of file into a pool; errors wrap
// ErrFiles and name the file.
func LoadPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFiles, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrFiles, file)
	}
	return pool, nil
}

// loadPair loads a PEM certificate (with its chain) and its key; errors
// wrap ErrFiles and name both files.
func loadPair(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return cert, fmt.Errorf("%w: certificate %s, key %s: %w", ErrFiles, certFile, keyFile, err)
	}
	return cert, nil
}

// Client are a client's TLS files and options. CAFile empty means the
// system's roots; CertFile and KeyFile are given together or not at all;
// ServerName empty means the host dialled.
type Client struct {
	CAFile, CertFile, KeyFile, ServerName string
}

// IsZero reports whether no option is set.
func (c Client) IsZero() bool { return c == Client{} }

// Config returns base (or a new configuration when base is nil), cloned,
// with the files loaded into it: RootCAs from CAFile, the client
// certificate from CertFile and KeyFile, ServerName. MinVersion is raised
// to TLS 1.2 when lower. Errors wrap ErrFiles and name the file.
func (c Client) Config(base *tls.Config) (*tls.Config, error) {
	cfg := &tls.Config{}
	if base != nil {
		cfg = base.Clone()
	}
	cfg.MinVersion = max(cfg.MinVersion, MinVersion)
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, fmt.Errorf("%w: a client certificate needs both files; got certificate %q, key %q", ErrFiles, c.CertFile, c.KeyFile)
	}
	if c.CAFile != "" {
		pool, err := LoadPool(c.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if c.CertFile != "" {
		cert, err := loadPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if c.ServerName != "" {
		cfg.ServerName = c.ServerName
	}
	return cfg, nil
}
