package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/client"
	"github.com/idgenkit/idgen/internal/testenv/certs"
	"github.com/idgenkit/idgen/internal/tlsfiles"
)

// Over HTTP the client asks for no more than the server's --max-count,
// read from its OpenAPI document: 100 here, below MinBatch.
func TestHTTPMaxCount(t *testing.T) {
	s := &server{t: t, worker: 9, http: true, maxCount: 100}
	s.start()
	t.Cleanup(s.stop)
	ctx := context.Background()
	g, err := client.New(ctx, client.Config{Targets: []string{s.target()}, MinBatch: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	dst := make([]idgen.ID, 1000)
	if n, err := g.NextN(ctx, dst); n != len(dst) || err != nil {
		t.Fatalf("NextN(1000) = %d, %v; want 1000, nil", n, err)
	}
	if st := g.Stats(); st.Fetches < 10 || st.FetchErrors != 0 {
		t.Errorf("Stats() = %+v; want at least 10 fetches of 100 and no error", st)
	}
}

// TestMutualTLS: a server that requires client certificates of its CA
// issues to a client given the CA, certificate and key files, over gRPC
// and HTTPS; a client without a certificate, with one of another CA or an
// expired one gets none (New fails with ErrUnavailable); bad options are
// ErrConfig.
func TestMutualTLS(t *testing.T) {
	f := certs.New(t)
	srv, err := tlsfiles.NewServer(f.Server.CertFile, f.Server.KeyFile, f.CA.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			s := &server{t: t, worker: 10, http: tr.http, tls: srv.Config("h2", "http/1.1")}
			s.start()
			t.Cleanup(s.stop)
			cfg := client.Config{Targets: []string{s.target()}, MinBatch: 10, MaxBatch: 10, CAFile: f.CA.CertFile, CertFile: f.Client.CertFile, KeyFile: f.Client.KeyFile}
			g, err := client.New(ctx, cfg)
			if err != nil {
				t.Fatalf("New with the client certificate = %v", err)
			}
			if _, err := g.Next(ctx); err != nil {
				t.Errorf("Next() = %v", err)
			}
			g.Close()
			for _, tc := range []struct{ name, cert, key, want string }{
				{"no certificate", "", "", "remote error: tls: certificate required (the server may want a client certificate: CertFile, KeyFile)"},
				{"another CA", f.WrongClient.CertFile, f.WrongClient.KeyFile, "remote error: tls: unknown certificate authority"},
				{"expired", f.Expired.CertFile, f.Expired.KeyFile, "remote error: tls: expired certificate"},
			} {
				c := cfg
				c.CertFile, c.KeyFile = tc.cert, tc.key
				if tc.cert != "" { // send it whatever CAs the server names
					base, err := tlsfiles.Client{CertFile: tc.cert, KeyFile: tc.key}.Config(nil)
					if err != nil {
						t.Fatal(err)
					}
					crt := base.Certificates[0]
					c.TLS = &tls.Config{GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &crt, nil }}
					c.CertFile, c.KeyFile = "", ""
				}
				if g, err := client.New(ctx, c); !errors.Is(err, idgen.ErrUnavailable) || !strings.Contains(err.Error(), "TLS handshake: "+s.target()+": "+tc.want) {
					if g != nil {
						g.Close()
					}
					t.Errorf("%s: New = %v; want ErrUnavailable saying %q", tc.name, err, tc.want)
				}
			}
			// The server's certificate does not name ids.example.
			c := cfg
			c.ServerName = "ids.example"
			if _, err := client.New(ctx, c); !errors.Is(err, idgen.ErrUnavailable) || !strings.Contains(err.Error(), "TLS handshake: "+s.target()+": tls: failed to verify certificate: x509: certificate is valid for localhost, not ids.example") {
				t.Errorf("New with ServerName ids.example = %v; want ErrUnavailable naming it", err)
			}
		})
	}
	for _, tc := range []struct {
		name string
		cfg  client.Config
		want string
	}{
		{"key without certificate", client.Config{Targets: []string{"127.0.0.1:1"}, KeyFile: f.Client.KeyFile}, "needs both files"},
		{"CA file missing", client.Config{Targets: []string{"127.0.0.1:1"}, CAFile: f.Dir + "/none.pem"}, "none.pem"},
		{"http:// with TLS", client.Config{Targets: []string{"http://127.0.0.1:1"}, CAFile: f.CA.CertFile}, `target "http://127.0.0.1:1" is plaintext HTTP but TLS is configured`},
		{"URL with a query", client.Config{Targets: []string{"https://127.0.0.1:1/?x=1"}}, "want a base URL"},
	} {
		if _, err := client.New(ctx, tc.cfg); !errors.Is(err, client.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v; want ErrConfig with %q", tc.name, err, tc.want)
		}
	}
}
