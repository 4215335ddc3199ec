package certs_test

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/internal/testenv/certs"
)

func verify(s *certs.Set, p *certs.Pair, usage x509.ExtKeyUsage, name string) error {
	_, err := p.Cert.Verify(x509.VerifyOptions{Roots: s.Pool(), KeyUsages: []x509.ExtKeyUsage{usage}, DNSName: name})
	return err
}

func TestSet(t *testing.T) {
	s := certs.New(t)
	for _, c := range []struct {
		name  string
		p     *certs.Pair
		usage x509.ExtKeyUsage
		dns   string
		want  string // "" or part of the error
	}{
		{"server", s.Server, x509.ExtKeyUsageServerAuth, "localhost", ""},
		{"server ip", s.Server, x509.ExtKeyUsageServerAuth, "127.0.0.1", ""},
		{"server other name", s.Server, x509.ExtKeyUsageServerAuth, "example.com", "not example.com"},
		{"client", s.Client, x509.ExtKeyUsageClientAuth, "", ""},
		{"client as server", s.Client, x509.ExtKeyUsageServerAuth, "", "incompatible key usage"},
		{"expired", s.Expired, x509.ExtKeyUsageClientAuth, "", "expired"},
		{"wrong client", s.WrongClient, x509.ExtKeyUsageClientAuth, "", "unknown authority"},
		{"wrong server", s.WrongServer, x509.ExtKeyUsageServerAuth, "localhost", "unknown authority"},
	} {
		err := verify(s, c.p, c.usage, c.dns)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: verify = %v, want %q", c.name, err, c.want)
		}
	}
	for _, p := range []*certs.Pair{s.CA, s.Server, s.Client, s.Expired, s.WrongCA, s.WrongClient, s.WrongServer} {
		if _, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile); err != nil {
			t.Errorf("%s: %v", p.CertFile, err)
		}
	}
	again, err := s.Issue("server2", certs.ServerKind)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(s, again, x509.ExtKeyUsageServerAuth, "localhost"); err != nil || again.Cert.SerialNumber.Cmp(s.Server.Cert.SerialNumber) == 0 {
		t.Errorf("Issue: verify %v, serial %v (server's %v)", err, again.Cert.SerialNumber, s.Server.Cert.SerialNumber)
	}
}
