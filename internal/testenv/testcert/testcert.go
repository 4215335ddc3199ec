// Package testcert makes the certificates TLS tests need with crypto/x509:
// a CA, server and client certificates it signs, an expired client
// certificate, and a client certificate of another CA. Keys are ECDSA P-256;
// server certificates name localhost, 127.0.0.1 and ::1.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
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

// A CA signs certificates.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	PEM  []byte
}

// NewCA makes a self-signed CA valid from an hour ago for a day.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Kind is what a certificate is for.
type Kind int

const (
	Server Kind = iota // ExtKeyUsageServerAuth, for localhost, 127.0.0.1 and ::1
	Client             // ExtKeyUsageClientAuth
)

// Issue signs a certificate named cn of kind, valid from notBefore to
// notAfter, and returns it and its key as PEM.
func (ca *CA) Issue(t testing.TB, cn string, kind Kind, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if kind == Server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// Valid issues a certificate valid from an hour ago for a day.
func (ca *CA) Valid(t testing.TB, cn string, kind Kind) (certPEM, keyPEM []byte) {
	return ca.Issue(t, cn, kind, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
}

// Files are the paths of a set of PEM files written by New.
type Files struct {
	Dir                     string
	CA                      *CA
	CAFile                  string // the CA's certificate
	ServerCert, ServerKey   string // CN "server", for localhost, 127.0.0.1 and ::1
	ClientCert, ClientKey   string // CN "client"
	ExpiredCert, ExpiredKey string // a client certificate of CA that expired an hour ago
	OtherCert, OtherKey     string // a client certificate of another CA
	OtherCAFile             string // that other CA
}

// New writes a CA and the certificates of Files into a new temporary
// directory.
func New(t testing.TB) *Files {
	t.Helper()
	dir := t.TempDir()
	ca, other := NewCA(t, "idgen test CA"), NewCA(t, "another CA")
	f := &Files{Dir: dir, CA: ca}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		Write(t, p, data)
		return p
	}
	f.CAFile = write("ca.pem", ca.PEM)
	f.OtherCAFile = write("other-ca.pem", other.PEM)
	c, k := ca.Valid(t, "server", Server)
	f.ServerCert, f.ServerKey = write("server.pem", c), write("server-key.pem", k)
	c, k = ca.Valid(t, "client", Client)
	f.ClientCert, f.ClientKey = write("client.pem", c), write("client-key.pem", k)
	c, k = ca.Issue(t, "expired", Client, time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour))
	f.ExpiredCert, f.ExpiredKey = write("expired.pem", c), write("expired-key.pem", k)
	c, k = other.Valid(t, "stranger", Client)
	f.OtherCert, f.OtherKey = write("other.pem", c), write("other-key.pem", k)
	return f
}

// Write writes data to path (mode 0600) through a temporary file renamed
// over it, as a certificate manager rotates files: a reader sees the old
// file or the new, never half of one.
func Write(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
