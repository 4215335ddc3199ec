// Package certs generates the certificates that TLS tests need, with the
// standard library only (crypto/x509, ECDSA P-256): a CA, server and client
// certificates signed by it, an expired client certificate, and a second,
// unrelated CA with a client certificate of its own. Each file is written
// to a test's temporary directory in PEM, keys unencrypted (PKCS #8), so
// that real servers (etcd, redis-server, ZooKeeper, PostgreSQL, MariaDB,
// idgen serve) can read them.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A Pair is a certificate and its key, in memory and in files.
type Pair struct {
	Cert     *x509.Certificate
	Key      *ecdsa.PrivateKey
	CertFile string // PEM "CERTIFICATE"
	KeyFile  string // PEM "PRIVATE KEY" (PKCS #8)
}

// TLS returns the pair as a tls.Certificate.
func (p *Pair) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{p.Cert.Raw}, PrivateKey: p.Key, Leaf: p.Cert}
}

// A Set is the certificates of one test. Every file is in Dir.
type Set struct {
	Dir string
	// CA signs Server, Client and Expired.
	CA *Pair
	// Server is valid for localhost, 127.0.0.1 and ::1 (server and
	// client auth, so servers that also dial peers can use it).
	Server *Pair
	// Client has common name "idgen" (client auth).
	Client *Pair
	// Expired is a client certificate of CA, common name "idgen", that
	// expired an hour ago.
	Expired *Pair
	// WrongCA is a CA unrelated to CA; WrongClient and WrongServer are
	// signed by it with the same names as Client and Server.
	WrongCA     *Pair
	WrongClient *Pair
	WrongServer *Pair
}

// New generates a Set in a new temporary directory of t. It fails the
// test on any error. Files are mode 0600 (PostgreSQL refuses a key that
// others can read).
func New(t testing.TB) *Set {
	t.Helper()
	s, err := Generate(t.TempDir())
	if err != nil {
		t.Fatalf("certs: %v", err)
	}
	return s
}

// Generate writes a Set to dir (which must exist).
func Generate(dir string) (*Set, error) {
	s := &Set{Dir: dir}
	now := time.Now()
	valid := [2]time.Time{now.Add(-time.Hour), now.Add(24 * time.Hour)}
	steps := []struct {
		dst    **Pair
		name   string
		parent **Pair
		kind   Kind
		when   [2]time.Time
	}{
		{&s.CA, "ca", nil, CAKind, valid},
		{&s.Server, "server", &s.CA, ServerKind, valid},
		{&s.Client, "client", &s.CA, ClientKind, valid},
		{&s.Expired, "expired", &s.CA, ClientKind, [2]time.Time{now.Add(-48 * time.Hour), now.Add(-time.Hour)}},
		{&s.WrongCA, "wrong-ca", nil, CAKind, valid},
		{&s.WrongClient, "wrong-client", &s.WrongCA, ClientKind, valid},
		{&s.WrongServer, "wrong-server", &s.WrongCA, ServerKind, valid},
	}
	for i, st := range steps {
		var parent *Pair
		if st.parent != nil {
			parent = *st.parent
		}
		p, err := issue(dir, st.name, int64(i+1), parent, st.kind, st.when)
		if err != nil {
			return nil, err
		}
		*st.dst = p
	}
	return s, nil
}

// Pool returns a pool holding the CA's certificate.
func (s *Set) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(s.CA.Cert)
	return p
}

// Kind is what a certificate of Issue is for.
type Kind int

// Kinds of certificates.
const (
	CAKind Kind = iota
	ServerKind
	ClientKind
)

// Issue writes a new certificate of kind k named name (name.crt and
// name.key in s.Dir), signed by the set's CA and valid from an hour ago
// for a day: for example a second server certificate, for a rotation
// test.
func (s *Set) Issue(name string, k Kind) (*Pair, error) {
	now := time.Now()
	return issue(s.Dir, name, now.UnixNano(), s.CA, k, [2]time.Time{now.Add(-time.Hour), now.Add(24 * time.Hour)})
}

func issue(dir, name string, serial int64, parent *Pair, k Kind, when [2]time.Time) (*Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "idgen", Organization: []string{"idgen test " + name}},
		NotBefore:    when[0],
		NotAfter:     when[1],
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	switch k {
	case CAKind:
		tmpl.Subject.CommonName = "idgen test " + name
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	case ServerKind:
		tmpl.Subject.CommonName = "localhost"
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	case ClientKind:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	p := &Pair{Cert: cert, Key: key,
		CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	if err := os.WriteFile(p.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}
