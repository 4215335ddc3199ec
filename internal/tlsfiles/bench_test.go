package tlsfiles_test

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/internal/testenv/certs"
	"github.com/idgenkit/idgen/internal/tlsfiles"
	"github.com/idgenkit/idgen/snowflake"
)

// benchServer serves httpapi (one Snowflake generator) on loopback,
// plaintext when mode is "plain", else TLS from f (mutual with "mtls"; a
// static tls.Config without reloading with "tls-static"), and returns its
// URL and a client for it.
func benchServer(b *testing.B, f *certs.Set, mode string, keepAlive bool) (string, *http.Client) {
	b.Helper()
	g, err := snowflake.New(context.Background(), snowflake.Config{Nodes: map[string]int64{"worker": 1}})
	if err != nil {
		b.Fatal(err)
	}
	h, err := httpapi.New(map[string]idgen.Generator{"default": g}, httpapi.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	tr := &http.Transport{DisableKeepAlives: !keepAlive, MaxIdleConnsPerHost: 64}
	url := "http://" + ln.Addr().String()
	if mode != "plain" {
		ca := ""
		files := tlsfiles.Client{CAFile: f.CA.CertFile}
		if mode == "mtls" {
			ca, files.CertFile, files.KeyFile = f.CA.CertFile, f.Client.CertFile, f.Client.KeyFile
		}
		s, err := tlsfiles.NewServer(f.Server.CertFile, f.Server.KeyFile, ca)
		if err != nil {
			b.Fatal(err)
		}
		srv.TLSConfig = s.Config("http/1.1")
		if mode == "tls-static" { // the baseline: crypto/tls with the pair loaded once
			pair, err := tls.LoadX509KeyPair(f.Server.CertFile, f.Server.KeyFile)
			if err != nil {
				b.Fatal(err)
			}
			srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}, Certificates: []tls.Certificate{pair}}
		}
		ln = tls.NewListener(ln, srv.TLSConfig)
		if tr.TLSClientConfig, err = files.Config(nil); err != nil {
			b.Fatal(err)
		}
		url = "https://" + ln.Addr().String()
	}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return url, &http.Client{Transport: tr}
}

// BenchmarkCount1 is GET /api/v1/ids?count=1 from 4 parallel clients per
// core over HTTP/1.1 on loopback, plaintext, TLS and mutual TLS in one
// run: keep-alive, the cost of TLS per request (record encryption); new
// connections, the cost of a handshake. "tls-static" is crypto/tls with the
// pair loaded once: against "tls", what checking the files at each
// handshake (three stat calls) costs.
func BenchmarkCount1(b *testing.B) {
	f := certs.New(b)
	for _, keepAlive := range []bool{true, false} {
		for _, mode := range []string{"plain", "tls-static", "tls", "mtls"} {
			name := mode + "/keep-alive"
			if !keepAlive {
				name = mode + "/new-connection"
			}
			b.Run(name, func(b *testing.B) {
				url, c := benchServer(b, f, mode, keepAlive)
				b.SetParallelism(4)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						resp, err := c.Get(url + "/api/v1/ids?count=1")
						if err != nil {
							b.Error(err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
			})
		}
	}
}
