package cli_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/testenv/testcert"
	"github.com/idgenkit/idgen/internal/tlsfiles"
)

// serveProc is an "idgen serve" process and its log records.
type serveProc struct {
	cmd  *exec.Cmd
	logs chan map[string]any
	rec  map[string]any // the "serving" record
}

// startServe runs idgen serve with args and waits for its "serving" record.
func startServe(t *testing.T, bin string, args ...string) *serveProc {
	t.Helper()
	p := &serveProc{cmd: exec.Command(bin, append([]string{"serve"}, args...)...), logs: make(chan map[string]any, 64)}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	go func() {
		defer close(p.logs)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				rec = map[string]any{"msg": "NOT JSON: " + sc.Text()}
			}
			p.logs <- rec
		}
	}()
	p.rec = p.next(t)
	if p.rec["msg"] != "serving" {
		t.Fatalf("first log record = %v; want msg serving", p.rec)
	}
	return p
}

// next returns the next log record, failing after 30 s.
func (p *serveProc) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case rec, ok := <-p.logs:
		if !ok {
			t.Fatal("idgen serve closed stderr")
		}
		return rec
	case <-time.After(30 * time.Second):
		t.Fatal("no log record from idgen serve within 30 s")
	}
	return nil
}

// addr returns the loopback address of the record's key (addr, grpc_addr,
// metrics_addr), which may name every interface.
func (p *serveProc) addr(t *testing.T, key string) string {
	t.Helper()
	a, _ := p.rec[key].(string)
	_, port, err := net.SplitHostPort(a)
	if err != nil {
		t.Fatalf("serving record %v: %s %q: %v", p.rec, key, a, err)
	}
	return "127.0.0.1:" + port
}

// httpsClient trusts f's CA and presents cert (none when empty) whatever
// CAs the server names, as curl does. Each request opens a new connection,
// HTTP/1.1.
func httpsClient(t *testing.T, f *testcert.Files, cert, key string) *http.Client {
	t.Helper()
	c, err := tlsfiles.Client{CAFile: f.CAFile, CertFile: cert, KeyFile: key}.Config(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Certificates) > 0 {
		crt := c.Certificates[0]
		c.Certificates = nil
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &crt, nil }
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: c, DisableKeepAlives: true}}
}

// refusedClient is httpsClient with TLS 1.2 at most: the server verifies
// the client's certificate within the handshake, so that its alert is the
// handshake's error (with TLS 1.3 it comes after, as a read or write
// error).
func refusedClient(t *testing.T, f *testcert.Files, cert, key string) *http.Client {
	c := httpsClient(t, f, cert, key)
	c.Transport.(*http.Transport).TLSClientConfig.MaxVersion = tls.VersionTLS12
	return c
}

// getIDs asks for n IDs as text and returns them, or the error.
func getIDs(c *http.Client, url string, n int) ([]string, error) {
	resp, err := c.Get(fmt.Sprintf("%s/api/v1/ids?count=%d&format=text", url, n))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if ids := strings.Fields(string(body)); resp.StatusCode != http.StatusOK || len(ids) != n {
		return nil, fmt.Errorf("status %d, %q; want 200 and %d IDs", resp.StatusCode, body, n)
	}
	return strings.Fields(string(body)), nil
}

// TestServeMutualTLS: serve on every interface with TLS and a client CA
// (the issue's "--addr 0.0.0.0:8443 with --tls-cert and --tls-key serves
// HTTPS"): a client certificate of the CA gets IDs over HTTP/2; none, one
// of another CA and an expired one are refused at the handshake; curl
// likewise; the metrics listener serves plain HTTP without a certificate,
// and the ID listener no longer serves /metrics.
func TestServeMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	bin := buildIdgen(t)
	f := testcert.New(t)
	p := startServe(t, bin, "-s", "snowflake?worker=7", "--addr", "0.0.0.0:0", "--metrics-addr", "127.0.0.1:0",
		"--tls-cert", f.ServerCert, "--tls-key", f.ServerKey, "--client-ca", f.CAFile)
	if p.rec["tls"] != true || p.rec["mutual_tls"] != true {
		t.Errorf("serving record = %v; want tls and mutual_tls true", p.rec)
	}
	url := "https://" + p.addr(t, "addr")

	ok := httpsClient(t, f, f.ClientCert, f.ClientKey)
	ok.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	resp, err := ok.Get(url + "/api/v1/ids?count=2&format=text")
	if err != nil {
		t.Fatalf("GET with the client certificate: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(strings.Fields(string(body))) != 2 || resp.ProtoMajor != 2 || resp.TLS.Version < tls.VersionTLS12 {
		t.Errorf("GET with the client certificate = %d %s %q, TLS %x; want 200 over HTTP/2 and TLS ≥ 1.2 with 2 IDs", resp.StatusCode, resp.Proto, body, resp.TLS.Version)
	}
	for _, tc := range []struct{ name, cert, key, want string }{
		{"no certificate", "", "", "remote error: tls: handshake failure"},
		{"another CA", f.OtherCert, f.OtherKey, "remote error: tls: unknown certificate authority"},
		{"expired", f.ExpiredCert, f.ExpiredKey, "remote error: tls: expired certificate"},
	} {
		if _, err := getIDs(refusedClient(t, f, tc.cert, tc.key), url, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: GET = %v; want a TLS alert with %q", tc.name, err, tc.want)
		}
	}
	plain := &http.Client{Timeout: 30 * time.Second}
	if _, err := getIDs(plain, "http://"+p.addr(t, "addr"), 1); err == nil {
		t.Errorf("plain HTTP to the TLS listener got IDs; want a failure")
	}

	// curl, as the README shows it.
	curl := func(args ...string) (string, error) {
		out, err := exec.Command("curl", append([]string{"-sS", "--max-time", "30"}, args...)...).CombinedOutput()
		return string(out), err
	}
	out, err := curl("--cacert", f.CAFile, "--cert", f.ClientCert, "--key", f.ClientKey, url+"/api/v1/ids?count=3&format=text")
	if err != nil || len(strings.Fields(out)) != 3 {
		t.Errorf("curl with the client certificate = %q, %v; want 3 IDs", out, err)
	}
	out, err = curl("--cacert", f.CAFile, url+"/api/v1/ids")
	if err == nil || strings.Contains(out, "ids") {
		t.Errorf("curl without a client certificate = %q, %v; want a failure and no IDs", out, err)
	}

	// The metrics listener: plain HTTP, no certificate, ops routes only.
	murl := "http://" + p.addr(t, "metrics_addr")
	for path, code := range map[string]int{"/metrics": 200, "/healthz": 200, "/readyz": 200, "/api/v1/ids": 404} {
		resp, err := plain.Get(murl + path)
		if err != nil {
			t.Fatalf("GET %s on --metrics-addr: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("GET %s on --metrics-addr = %d %q; want %d", path, resp.StatusCode, body, code)
		}
		if path == "/metrics" && !strings.Contains(string(body), `idgen_ids_issued_total{generator="default"} 5`) {
			t.Errorf("/metrics on --metrics-addr lacks the 5 IDs issued over TLS:\n%.2000s", body)
		}
	}
	resp, err = ok.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on --addr with --metrics-addr = %d; want 404", resp.StatusCode)
	}
}

// TestServeRotation swaps the certificate and key files under a running
// serve while clients open a new connection per request: the next
// handshake shows the new certificate, and no request fails. A
// keep-alive connection opened before keeps working on one connection.
// Then the client CA is swapped and SIGHUP sent: a client certificate of
// the old CA is refused, one of the new accepted, and serve keeps running.
func TestServeRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	bin := buildIdgen(t)
	f := testcert.New(t)
	clientCA := filepath.Join(f.Dir, "clients-ca.pem") // the clients' CA, apart from the one they trust
	testcert.Write(t, clientCA, f.CA.PEM)
	p := startServe(t, bin, "-s", "snowflake?worker=7", "--addr", "127.0.0.1:0",
		"--tls-cert", f.ServerCert, "--tls-key", f.ServerKey, "--client-ca", clientCA)
	url := "https://" + p.addr(t, "addr")
	serial := func() string {
		t.Helper()
		resp, err := httpsClient(t, f, f.ClientCert, f.ClientKey).Get(url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.TLS.PeerCertificates[0].SerialNumber.String()
	}
	first := serial()

	// The keep-alive client counts its connections.
	var dials atomic.Int32
	kc, _ := tlsfiles.Client{CAFile: f.CAFile, CertFile: f.ClientCert, KeyFile: f.ClientKey}.Config(nil)
	keep := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: kc, ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}}

	const loaders = 4
	var (
		wg             sync.WaitGroup
		stop           = make(chan struct{})
		requests, errs atomic.Int64
		firstErr       atomic.Value
	)
	for i := range loaders + 1 {
		c := httpsClient(t, f, f.ClientCert, f.ClientKey)
		if i == loaders {
			c = keep
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				requests.Add(1)
				if _, err := getIDs(c, url, 10); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	before := requests.Load()
	c2, k2 := f.CA.Valid(t, "server 2", testcert.Server)
	// The key first, then the certificate: between the two the pair does
	// not match, and serve keeps the old one.
	testcert.Write(t, f.ServerKey, k2)
	testcert.Write(t, f.ServerCert, c2)
	deadline := time.Now().Add(30 * time.Second)
	second := serial()
	for second == first && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		second = serial()
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	if second == first {
		t.Fatalf("the certificate served is still serial %s 30 s after the files were swapped", first)
	}
	if n := errs.Load(); n != 0 {
		t.Errorf("%d of %d requests failed during the rotation; want none; first: %v", n, requests.Load(), firstErr.Load())
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the keep-alive client dialled %d times; want 1: the rotation cut its connection", n)
	}
	t.Logf("%d requests, %d of them before the swap, none failed", requests.Load(), before)

	// A new client CA, loaded on SIGHUP.
	ca2 := testcert.NewCA(t, "idgen test CA 2")
	cc, ck := ca2.Valid(t, "client 2", testcert.Client)
	newCert, newKey := filepath.Join(f.Dir, "client2.pem"), filepath.Join(f.Dir, "client2-key.pem")
	testcert.Write(t, newCert, cc)
	testcert.Write(t, newKey, ck)
	testcert.Write(t, clientCA, ca2.PEM)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for rec := p.next(t); rec["msg"] != "SIGHUP: reloading the TLS files"; rec = p.next(t) {
	}
	if rec := p.next(t); rec["msg"] != "TLS files reloaded" {
		t.Fatalf("log record after SIGHUP = %v; want TLS files reloaded", rec)
	}
	if _, err := getIDs(refusedClient(t, f, f.ClientCert, f.ClientKey), url, 1); err == nil || !strings.Contains(err.Error(), "unknown certificate authority") {
		t.Errorf("a client certificate of the old CA after the CA changed: %v; want unknown certificate authority", err)
	}
	if _, err := getIDs(httpsClient(t, f, newCert, newKey), url, 1); err != nil {
		t.Errorf("a client certificate of the new CA: %v; want IDs", err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("idgen serve exited with %v after SIGHUP and SIGTERM; want 0", err)
	}
}
