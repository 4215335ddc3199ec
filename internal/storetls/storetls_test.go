package storetls_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/internal/storetls"
	"github.com/idgenkit/idgen/internal/testenv/certs"
)

func TestTake(t *testing.T) {
	q, _ := url.ParseQuery("tls_ca=/a&tls_cert=/b&tls_key=/c&tls_server_name=db&password_file=/p&ttl=5s")
	o, err := storetls.Take(q)
	want := storetls.Options{CA: "/a", Cert: "/b", Key: "/c", ServerName: "db", PasswordFile: "/p"}
	if err != nil || o != want || q.Encode() != "ttl=5s" || !o.TLS() {
		t.Fatalf("Take = %+v, %v, left %q; want %+v, ttl=5s left", o, err, q.Encode(), want)
	}
	for raw, msg := range map[string]string{
		"tls_cert=/b":          "tls_cert and tls_key go together",
		"tls_key=/c":           "tls_cert and tls_key go together",
		"tls_ca=":              "tls_ca: want one non-empty value",
		"tls_ca=/a&tls_ca=/b":  "tls_ca: want one non-empty value",
		"password_file=&x=1":   "password_file: want one non-empty value",
		"tls_server_name=&y=2": "tls_server_name: want one non-empty value",
	} {
		q, _ := url.ParseQuery(raw)
		if _, err := storetls.Take(q); err == nil || err.Error() != msg {
			t.Errorf("Take(%s) = %v; want %q", raw, err, msg)
		}
	}
	if o, _ := storetls.Take(url.Values{"password_file": {"/p"}}); o.TLS() {
		t.Error("password_file alone turns TLS on")
	}
}

func TestConfigAndPassword(t *testing.T) {
	cs := certs.New(t)
	c, err := storetls.Options{CA: cs.CA.CertFile, Cert: cs.Client.CertFile, Key: cs.Client.KeyFile, ServerName: "db"}.Config()
	if err != nil || c.MinVersion != tls.VersionTLS12 || c.ServerName != "db" || len(c.Certificates) != 1 || c.RootCAs == nil {
		t.Fatalf("Config = %+v, %v", c, err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o600)
		return p
	}
	notPEM := write("not.pem", "s3cret\n")
	for _, tt := range []struct {
		o    storetls.Options
		want string
	}{
		{storetls.Options{CA: "/nonexistent/ca"}, "tls_ca: tls: unusable certificate files: open /nonexistent/ca"},
		{storetls.Options{CA: notPEM}, "tls_ca: tls: unusable certificate files: CA file "},
		{storetls.Options{Cert: cs.Client.CertFile, Key: cs.Server.KeyFile}, "tls_cert, tls_key: tls: unusable certificate files: certificate "},
		// a certificate path that starts with the CA's is still the certificate's fault
		{storetls.Options{CA: cs.CA.CertFile, Cert: cs.CA.CertFile + ".client", Key: cs.Client.KeyFile}, "tls_cert, tls_key: tls: unusable certificate files: certificate " + cs.CA.CertFile + ".client"},
	} {
		if _, err := tt.o.Config(); err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Config(%+v) = %v; want %q, no content", tt.o, err, tt.want)
		}
	}
	for _, tt := range []struct{ text, pw, err string }{
		{"s3cret\n", "s3cret", ""},
		{"s3cret\r\nignored\n", "s3cret", ""},
		{"pass word with spaces", "pass word with spaces", ""},
		{"\nlater\n", "", "the first line is empty"},
	} {
		pw, err := storetls.Options{PasswordFile: write("pw", tt.text)}.Password()
		if pw != tt.pw || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Password of %q = %q, %v; want %q, %q", tt.text, pw, err, tt.pw, tt.err)
		}
	}
	if pw, err := (storetls.Options{}).Password(); pw != "" || err != nil {
		t.Errorf("Password without a file = %q, %v", pw, err)
	}
}

func TestExplain(t *testing.T) {
	cs := certs.New(t)
	withCert := func(p *certs.Pair) *tls.Config { return &tls.Config{Certificates: []tls.Certificate{p.TLS()}} }
	alert := errors.New("remote error: tls: bad certificate")
	for _, tt := range []struct {
		name string
		err  error
		c    *tls.Config
		want string
	}{
		{"no TLS", alert, nil, "remote error: tls: bad certificate"},
		{"unrelated", errors.New("WRONGPASS"), withCert(cs.Client), "WRONGPASS"},
		{"no certificate", alert, &tls.Config{}, "remote error: tls: bad certificate (the server may want a client certificate: tls_cert, tls_key)"},
		{"untrusted", alert, withCert(cs.WrongClient), "remote error: tls: bad certificate (did the server refuse the client certificate? is it signed by a CA the server trusts?)"},
		{"reset", errors.New("read: connection reset by peer"), withCert(cs.Client), "read: connection reset by peer (did the server refuse"},
		{"expired, any error", io.ErrUnexpectedEOF, withCert(cs.Expired), "unexpected EOF (the client certificate expired at " + cs.Expired.Cert.NotAfter.UTC().Format("2006-01-02T15:04:05Z") + ")"},
	} {
		got := storetls.Explain(tt.err, tt.c)
		if !strings.HasPrefix(got.Error(), tt.want) || !errors.Is(got, tt.err) {
			t.Errorf("%s: Explain = %q; want %q, wrapping the error", tt.name, got, tt.want)
		}
	}
	// A caller with options of its own names them.
	got := storetls.ExplainFor(alert, &tls.Config{}, "--tls-cert, --tls-key")
	if want := "remote error: tls: bad certificate (the server may want a client certificate: --tls-cert, --tls-key)"; got.Error() != want || !errors.Is(got, alert) {
		t.Errorf("ExplainFor(--tls-cert, --tls-key) = %q; want %q, wrapping the error", got, want)
	}
}
