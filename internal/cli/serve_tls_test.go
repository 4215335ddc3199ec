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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/testenv/certs"
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
func httpsClient(t *testing.T, f *certs.Set, cert, key string) *http.Client {
	t.Helper()
	c, err := tlsfiles.Client{CAFile: f.CA.CertFile, CertFile: cert, KeyFile: key}.Config(nil)
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
func refusedClient(t *testing.T, f *certs.Set, cert, key string) *http.Client {
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
	f := certs.New(t)
	p := startServe(t, bin, "-s", "snowflake?worker=7", "--addr", "0.0.0.0:0", "--metrics-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--tls-cert", f.Server.CertFile, "--tls-key", f.Server.KeyFile, "--client-ca", f.CA.CertFile)
	if p.rec["tls"] != true || p.rec["mutual_tls"] != true {
		t.Errorf("serving record = %v; want tls and mutual_tls true", p.rec)
	}
	url := "https://" + p.addr(t, "addr")

	ok := httpsClient(t, f, f.Client.CertFile, f.Client.KeyFile)
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
	// A streamed response (above 1,024 IDs) over HTTP/2 and TLS.
	if ids, err := getIDs(ok, url, 10_000); err != nil {
		t.Errorf("GET count=10000 over HTTP/2 with TLS: %d IDs, %v; want 10000", len(ids), err)
	}
	for _, tc := range []struct{ name, cert, key, want string }{
		{"no certificate", "", "", "remote error: tls: handshake failure"},
		{"another CA", f.WrongClient.CertFile, f.WrongClient.KeyFile, "remote error: tls: unknown certificate authority"},
		{"expired", f.Expired.CertFile, f.Expired.KeyFile, "remote error: tls: expired certificate"},
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
	out, err := curl("--cacert", f.CA.CertFile, "--cert", f.Client.CertFile, "--key", f.Client.KeyFile, url+"/api/v1/ids?count=3&format=text")
	if err != nil || len(strings.Fields(out)) != 3 {
		t.Errorf("curl with the client certificate = %q, %v; want 3 IDs", out, err)
	}
	out, err = curl("--cacert", f.CA.CertFile, url+"/api/v1/ids")
	if err == nil || strings.Contains(out, "ids") {
		t.Errorf("curl without a client certificate = %q, %v; want a failure and no IDs", out, err)
	}

	// idgen gen --from, package client over gRPC and HTTPS.
	for _, target := range []string{p.addr(t, "grpc_addr"), url} {
		gen := func(args ...string) (string, string, int) {
			cmd := exec.Command(bin, append([]string{"gen", "--from", target, "-n", "3", "--tls-ca", f.CA.CertFile}, args...)...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
		}
		if out, errOut, code := gen("--tls-cert", f.Client.CertFile, "--tls-key", f.Client.KeyFile); code != 0 || len(strings.Fields(out)) != 3 {
			t.Errorf("idgen gen --from %s with the client certificate = %d, %q, stderr %q; want 0 and 3 IDs", target, code, out, errOut)
		}
		if out, errOut, code := gen(); code != 1 || out != "" || !strings.Contains(errOut, "idgen: --from: ID store unavailable: no server answered") || !strings.Contains(errOut, "TLS handshake: "+target+": remote error: tls: certificate required (the server may want a client certificate: --tls-cert, --tls-key)") {
			t.Errorf("idgen gen --from %s without a client certificate = %d, %q, stderr %q; want 1, no ID, unavailable", target, code, out, errOut)
		}
		_, errOut, _ := gen()
		t.Logf("idgen gen --from %s without a client certificate: %s", target, errOut)
		if out, errOut, code := gen("--tls-cert", f.Client.CertFile); code != 2 || out != "" || !strings.Contains(errOut, "needs both files") {
			t.Errorf("idgen gen --from %s --tls-cert without --tls-key = %d, %q, stderr %q; want 2 naming both files", target, code, out, errOut)
		}
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
		if path == "/metrics" && !strings.Contains(string(body), `idgen_ids_issued_total{generator="default"}`) {
			t.Errorf("/metrics on --metrics-addr lacks idgen_ids_issued_total:\n%.2000s", body)
		}
		expiry := fmt.Sprintf("idgen_tls_certificate_expiry_timestamp_seconds %g\n", float64(f.Server.Cert.NotAfter.Unix()))
		if path == "/metrics" && !strings.Contains(string(body), expiry) {
			t.Errorf("/metrics lacks %q", expiry)
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

	// The same from a config file's tls table, its paths relative to the
	// file.
	cfg := filepath.Join(f.Dir, "idgen.yaml")
	rel := func(p string) string { return filepath.Base(p) }
	if err := os.WriteFile(cfg, []byte("generators:\n  orders: snowflake?worker=8\ntls:\n  cert: "+rel(f.Server.CertFile)+
		"\n  key: "+rel(f.Server.KeyFile)+"\n  client_ca: "+rel(f.CA.CertFile)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pc := startServe(t, bin, "--config", cfg, "--addr", "0.0.0.0:0")
	curl2 := "https://" + pc.addr(t, "addr")
	if ids, err := getIDs(ok, curl2, 2); err != nil || pc.rec["mutual_tls"] != true {
		t.Errorf("serve --config with a tls table: GET = %v, %v, serving record %v; want 2 IDs over mutual TLS", ids, err, pc.rec)
	}
	if _, err := getIDs(refusedClient(t, f, "", ""), curl2, 1); err == nil {
		t.Errorf("serve --config with a tls table: GET without a client certificate got IDs")
	}
}

// copyFile copies src to dst through a temporary file renamed over dst, as
// a certificate manager replaces a file: a reader sees the old file or the
// new, never half of one.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst+".tmp", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dst+".tmp", dst); err != nil {
		t.Fatal(err)
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
	f := certs.New(t)
	clientCA := filepath.Join(f.Dir, "clients-ca.pem") // the clients' CA, apart from the one they trust
	copyFile(t, f.CA.CertFile, clientCA)
	p := startServe(t, bin, "-s", "snowflake?worker=7", "--addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--tls-cert", f.Server.CertFile, "--tls-key", f.Server.KeyFile, "--client-ca", clientCA)
	url := "https://" + p.addr(t, "addr")
	serial := func() string {
		t.Helper()
		resp, err := httpsClient(t, f, f.Client.CertFile, f.Client.KeyFile).Get(url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.TLS.PeerCertificates[0].SerialNumber.String()
	}
	first := serial()
	// The gRPC listener's certificate, from a handshake offering h2.
	grpcSerial := func() string {
		t.Helper()
		c, err := tlsfiles.Client{CAFile: f.CA.CertFile, CertFile: f.Client.CertFile, KeyFile: f.Client.KeyFile}.Config(&tls.Config{NextProtos: []string{"h2"}})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := tls.Dial("tcp", p.addr(t, "grpc_addr"), c)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	if got := grpcSerial(); got != first {
		t.Fatalf("gRPC serves serial %s, HTTPS %s; want the same certificate", got, first)
	}

	// The keep-alive client counts its connections.
	var dials atomic.Int32
	kc, _ := tlsfiles.Client{CAFile: f.CA.CertFile, CertFile: f.Client.CertFile, KeyFile: f.Client.KeyFile}.Config(nil)
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
		c := httpsClient(t, f, f.Client.CertFile, f.Client.KeyFile)
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
	p2, err := f.Issue("server2", certs.ServerKind)
	if err != nil {
		t.Fatal(err)
	}
	// The key first, then the certificate, each renamed over the old: between
	// the two the pair does not match, and serve keeps the old one.
	copyFile(t, p2.KeyFile, f.Server.KeyFile)
	copyFile(t, p2.CertFile, f.Server.CertFile)
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
	if got := grpcSerial(); got != second {
		t.Errorf("gRPC serves serial %s after the swap; want the new %s", got, second)
	}
	if n := errs.Load(); n != 0 {
		t.Errorf("%d of %d requests failed during the rotation; want none; first: %v", n, requests.Load(), firstErr.Load())
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the keep-alive client dialled %d times; want 1: the rotation cut its connection", n)
	}
	t.Logf("%d requests, %d of them before the swap, none failed", requests.Load(), before)

	// A new client CA, loaded on SIGHUP.
	copyFile(t, f.WrongCA.CertFile, clientCA)
	newCert, newKey := f.WrongClient.CertFile, f.WrongClient.KeyFile
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for rec := p.next(t); rec["msg"] != "SIGHUP: reloading the TLS files"; rec = p.next(t) {
	}
	if rec := p.next(t); rec["msg"] != "TLS files reloaded" {
		t.Fatalf("log record after SIGHUP = %v; want TLS files reloaded", rec)
	}
	if _, err := getIDs(refusedClient(t, f, f.Client.CertFile, f.Client.KeyFile), url, 1); err == nil || !strings.Contains(err.Error(), "unknown certificate authority") {
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

// readmeBlock returns the fenced block after the README's
// "<!-- example: NAME -->" line, continuation lines joined.
func readmeBlock(t *testing.T, readme, name string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "<!-- example: "+name+" -->\n```bash\n")
	if !ok {
		t.Fatalf("README.md has no bash block marked example: %s", name)
	}
	block, _, _ := strings.Cut(rest, "```")
	return strings.Split(strings.TrimSpace(strings.ReplaceAll(block, "\\\n", "")), "\n")
}

// freePort returns a loopback port free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// TestReadmeMutualTLS runs the README's mutual-TLS example as written, in
// bash with the idgen binary on PATH, but for the ports (8443, 9443, 9100:
// free ones instead): openssl makes the certificates, serve runs, and each
// client line does what its comment says.
func TestReadmeMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ports := strings.NewReplacer("8443", freePort(t), "9443", freePort(t), "9100", freePort(t))
	readme := ports.Replace(string(data))
	bin := buildIdgen(t)
	dir := t.TempDir()
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	bash := func(line string) *exec.Cmd {
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir, cmd.Env = dir, env
		return cmd
	}
	for _, line := range readmeBlock(t, readme, "mtls-certs") {
		if out, err := bash(line).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	serve := readmeBlock(t, readme, "mtls-serve")
	if len(serve) != 1 {
		t.Fatalf("the mtls-serve block has %d commands; want 1", len(serve))
	}
	srv := bash("exec " + serve[0])
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })

	client := readmeBlock(t, readme, "mtls-client")
	want := []struct {
		ok  bool
		ids int // lines of output
	}{{true, 2}, {false, 0}, {true, 2}, {true, 2}, {true, 0}}
	if len(client) != len(want) {
		t.Fatalf("the mtls-client block has %d commands; want %d", len(client), len(want))
	}
	ready := client[len(client)-1]
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := bash(ready).CombinedOutput()
		if err == nil && strings.Contains(string(out), `"status":"ready"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v, %s 30 s after serve started", ready, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, line := range client[:len(client)-1] {
		cmd := bash(line)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ids := strings.Fields(stdout.String()); (err == nil) != want[i].ok || len(ids) != want[i].ids {
			t.Errorf("%s = %v, stdout %q, stderr %q; want success %t and %d IDs", line, err, stdout.String(), stderr.String(), want[i].ok, want[i].ids)
		}
	}
}
