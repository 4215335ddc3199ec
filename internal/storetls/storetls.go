// Package storetls reads the TLS and credential options that store URLs
// share (etcd, Redis, MariaDB/MySQL), as query keys naming files, never
// inline secrets:
//
//	tls_ca=PATH           PEM CA certificates that verify the server
//	                      (default: the system's roots)
//	tls_cert=PATH         PEM client certificate (with tls_key)
//	tls_key=PATH          PEM key of tls_cert
//	tls_server_name=NAME  the name the server's certificate must carry
//	                      (default: the host dialled)
//	password_file=PATH    the password, the file's first line
//
// Options only parses and loads; each store decides how TLS is switched on
// (rediss://, etcd's tls keys, MySQL's tls_ keys). Errors name the key and
// the file, never the file's content.
package storetls

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/idgenkit/idgen/internal/tlsfiles"
)

// keys are the query keys Take removes.
var keys = []string{"tls_ca", "tls_cert", "tls_key", "tls_server_name", "password_file"}

// Options are the values of the keys.
type Options struct {
	CA, Cert, Key, ServerName string
	PasswordFile              string
}

// Take removes the keys from q and returns their values. A key given
// twice or with an empty value, or tls_cert without tls_key (or the
// reverse), is an error.
func Take(q url.Values) (Options, error) {
	var o Options
	dst := []*string{&o.CA, &o.Cert, &o.Key, &o.ServerName, &o.PasswordFile}
	for i, k := range keys {
		vs, ok := q[k]
		if !ok {
			continue
		}
		if len(vs) != 1 || vs[0] == "" {
			return o, fmt.Errorf("%s: want one non-empty value", k)
		}
		*dst[i] = vs[0]
		q.Del(k)
	}
	if (o.Cert == "") != (o.Key == "") {
		return o, errors.New("tls_cert and tls_key go together")
	}
	return o, nil
}

// TLS reports whether any TLS key was given.
func (o Options) TLS() bool { return o.CA != "" || o.Cert != "" || o.ServerName != "" }

// Config loads the files into a TLS client configuration (TLS 1.2 at
// least), with tlsfiles.Client (serve's client side too). A file that
// cannot be read, a CA file with no PEM certificate, or a certificate that
// does not match its key is an error naming the keys and the file.
func (o Options) Config() (*tls.Config, error) {
	// The CA and the pair are loaded apart so that each error names its
	// own keys (a certificate path may contain the CA's).
	c, err := tlsfiles.Client{CAFile: o.CA, ServerName: o.ServerName}.Config(nil)
	if err != nil {
		return nil, fmt.Errorf("tls_ca: %w", err)
	}
	if c, err = (tlsfiles.Client{CertFile: o.Cert, KeyFile: o.Key}).Config(c); err != nil {
		return nil, fmt.Errorf("tls_cert, tls_key: %w", err)
	}
	return c, nil
}

// Password reads PasswordFile's first line ("" and no error when none
// was given). An empty first line is an error.
func (o Options) Password() (string, error) {
	if o.PasswordFile == "" {
		return "", nil
	}
	f, err := os.Open(o.PasswordFile)
	if err != nil {
		return "", fmt.Errorf("password_file: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Scan()
	p := strings.TrimRight(s.Text(), "\r")
	if err := s.Err(); err != nil {
		return "", fmt.Errorf("password_file %s: %w", o.PasswordFile, err)
	}
	if p == "" {
		return "", fmt.Errorf("password_file %s: the first line is empty", o.PasswordFile)
	}
	return p, nil
}

// Probe dials addr (host:port) over TCP and TLS with c, within timeout, to
// tell why a client that only reports a timeout (gRPC's, etcd's) could not
// connect: it returns the handshake's error (an unknown authority, a
// name mismatch), or the alert the server sends right after it (its
// refusal of the client's certificate: "certificate required", "bad
// certificate", "expired certificate"), or nil when neither comes within
// timeout. c's ServerName defaults to addr's host. Its hints name the
// store URL keys (CertKeys); ProbeFor names the caller's.
func Probe(addr string, c *tls.Config, timeout time.Duration) error {
	return ProbeFor(addr, c, timeout, CertKeys)
}

// ProbeFor is Probe with the hint of ExplainFor: certKeys names the
// caller's options for the client certificate and key (a CLI's
// "--tls-cert, --tls-key").
func ProbeFor(addr string, c *tls.Config, timeout time.Duration, certKeys string) error {
	c = c.Clone()
	if c.ServerName == "" {
		c.ServerName, _, _ = net.SplitHostPort(addr)
	}
	d := &net.Dialer{Timeout: timeout}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	tc := tls.Client(conn, c)
	err = tc.Handshake()
	if err == nil {
		// Under TLS 1.3 the server checks the client's certificate after
		// the client's handshake ends: its refusal is the next thing read.
		conn.SetDeadline(time.Now().Add(min(timeout, 500*time.Millisecond)))
		_, err = tc.Read(make([]byte, 1))
		var ne net.Error
		if err == nil || errors.As(err, &ne) && ne.Timeout() || errors.Is(err, io.EOF) {
			return nil
		}
	}
	return ExplainFor(err, c, certKeys)
}

// Explain adds to err, an error of a first connection made with c, what
// c tells of the cause when the failure may be the server refusing this
// client: an expired client certificate (always said: it is known here);
// else, after a TLS alert from the server ("remote error: tls: ...") or a
// connection the server closed (reset, EOF: a server that closes at once
// after its alert races it), no client certificate, or one the server
// does not trust. The server's alert is terse (a server on TLS 1.2 says
// "bad certificate" for every refusal) and may not even arrive. Other
// errors, or a nil c, are returned as they are. Stores call it on their
// first connection only, not on later outages. The hint for a missing
// certificate names the store URL keys (CertKeys).
func Explain(err error, c *tls.Config) error { return ExplainFor(err, c, CertKeys) }

// CertKeys names the store URL keys of the client certificate, as
// Explain's hint says them.
const CertKeys = "tls_cert, tls_key"

// ExplainFor is Explain for a caller whose options for the client
// certificate and key are not the store URL keys: certKeys names them in
// the hint ("... may want a client certificate: " + certKeys).
func ExplainFor(err error, c *tls.Config, certKeys string) error {
	if err == nil || c == nil {
		return err
	}
	if len(c.Certificates) > 0 {
		if leaf := c.Certificates[0].Leaf; leaf != nil {
			if now := time.Now(); now.After(leaf.NotAfter) {
				return fmt.Errorf("%w (the client certificate expired at %s)", err, leaf.NotAfter.UTC().Format(time.RFC3339))
			} else if now.Before(leaf.NotBefore) {
				return fmt.Errorf("%w (the client certificate is valid from %s only)", err, leaf.NotBefore.UTC().Format(time.RFC3339))
			}
		}
	}
	msg := err.Error()
	closed := false
	for _, s := range []string{"remote error: tls:", "connection reset by peer", "broken pipe", "EOF", "bad connection", "invalid connection"} {
		closed = closed || strings.Contains(msg, s)
	}
	if !closed {
		return err
	}
	if len(c.Certificates) == 0 {
		return fmt.Errorf("%w (the server may want a client certificate: %s)", err, certKeys)
	}
	return fmt.Errorf("%w (did the server refuse the client certificate? is it signed by a CA the server trusts?)", err)
}
