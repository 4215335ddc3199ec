package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/internal/cli"
	"github.com/idgenkit/idgen/internal/testenv"
)

func TestServeBadInput(t *testing.T) {
	expired := filepath.Join(t.TempDir(), "expired.yaml")
	if err := os.WriteFile(expired, []byte("default: orders\ngenerators:\n  orders: snowflake?preset=twitter\n  old: snowflake?preset=baidu\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Two generators issuing the same IDs, and one name twice (JSON kept
	// the last); on a port in use (busyAddr).
	overlap := filepath.Join(t.TempDir(), "overlap.yaml")
	if err := os.WriteFile(overlap, []byte("default: orders\ngenerators:\n  orders: snowflake?worker=1\n  other: snowflake?worker=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	twice := filepath.Join(t.TempDir(), "twice.json")
	if err := os.WriteFile(twice, []byte("{\"generators\": {\n  \"orders\": \"snowflake?worker=1\",\n  \"orders\": \"snowflake?worker=2\"}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tlsCfg := filepath.Join(t.TempDir(), "tls.yaml")
	if err := os.WriteFile(tlsCfg, []byte("generators:\n  a: uuidv7\ntls:\n  cert: none.pem\n  key: none-key.pem\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	busy := busyAddr(t)
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"neither", []string{"serve"}, 2, "exactly one of --config FILE or -s SPEC"},
		{"both", []string{"serve", "-s", "snowflake", "--config", "x.yaml"}, 2, "exactly one of"},
		{"bad spec", []string{"serve", "-s", "nope"}, 2, `unknown strategy "nope"`},
		{"bad spec key", []string{"serve", "-s", "snowflake?worker=99"}, 2, "worker 99 outside [0, 31]"},
		{"missing config", []string{"serve", "--config", filepath.Join(t.TempDir(), "none.yaml")}, 2, "none.yaml"},
		{"log level", []string{"serve", "-s", "snowflake", "--log-level", "loud"}, 2, `--log-level "loud"`},
		{"max count", []string{"serve", "-s", "snowflake", "--max-count", "0"}, 2, "--max-count 0"},
		{"negative timeout", []string{"serve", "-s", "snowflake", "--write-timeout", "-1s"}, 2, "--write-timeout -1s must not be negative"},
		{"port out of range", []string{"serve", "-s", "snowflake", "--addr", "127.0.0.1:99999"}, 2,
			`--addr "127.0.0.1:99999": want host:port with a port from 0 to 65535`},
		{"addr not host:port", []string{"serve", "-s", "snowflake", "--addr", "notaport"}, 2,
			`--addr "notaport": want host:port with a port from 0 to 65535`},
		{"addr without port", []string{"serve", "-s", "snowflake", "--addr", "127.0.0.1:"}, 2, `--addr "127.0.0.1:": want host:port`},
		{"addr bad port", []string{"serve", "-s", "snowflake", "--addr", ":80a"}, 2, `--addr ":80a": want host:port`},
		{"expired layout", []string{"serve", "-s", "snowflake?preset=baidu", "--addr", "127.0.0.1:0"}, 2,
			`-s "snowflake?preset=baidu": layout lifetime exhausted: the 28-bit time field ended at 2024-11-20T21:24:16Z`},
		{"expired layout in config", []string{"serve", "--config", expired, "--addr", "127.0.0.1:0"}, 2,
			`--config: generator "old": layout lifetime exhausted`},
		{"future epoch", []string{"serve", "-s", "snowflake?preset=twitter&epoch=2199-01-01", "--addr", "127.0.0.1:0"}, 2,
			"clock is before the epoch"},
		{"generators issuing the same IDs", []string{"serve", "--config", overlap, "--addr", busy}, 2,
			`overlap.yaml:4: generators "orders" (line 3) and "other" (line 4) issue the same IDs`},
		{"generator name twice", []string{"serve", "--config", twice, "--addr", busy}, 2,
			`twice.json:3: generator "orders" defined twice, first at line 2`},
		{"every interface without TLS", []string{"serve", "-s", "snowflake", "--addr", "0.0.0.0:8443"}, 2,
			`--addr "0.0.0.0:8443" listens beyond loopback without TLS: anyone who reaches it could issue IDs, draining sequences and segments; give --tls-cert and --tls-key (and --client-ca for mutual TLS), or --insecure`},
		{"empty host without TLS", []string{"serve", "-s", "snowflake", "--addr", ":8080"}, 2, `--addr ":8080" listens beyond loopback without TLS`},
		{"gRPC beyond loopback", []string{"serve", "-s", "snowflake", "--grpc-addr", "[::]:9090"}, 2, `--grpc-addr "[::]:9090" listens beyond loopback without TLS`},
		{"gRPC host name", []string{"serve", "-s", "snowflake", "--grpc-addr", "ids.example:9090"}, 2, "or --insecure to serve plaintext on purpose"},
		{"certificate without key", []string{"serve", "-s", "snowflake", "--tls-cert", "s.pem"}, 2, `--tls-cert "s.pem" and --tls-key "": give both files or neither`},
		{"client CA without TLS", []string{"serve", "-s", "snowflake", "--client-ca", "ca.pem"}, 2, "--client-ca needs --tls-cert and --tls-key"},
		{"insecure beside TLS", []string{"serve", "-s", "snowflake", "--tls-cert", "s.pem", "--tls-key", "k.pem", "--insecure"}, 2, "--insecure serves plaintext"},
		{"certificate missing", []string{"serve", "-s", "snowflake", "--tls-cert", "none.pem", "--tls-key", "k.pem"}, 2, "unusable certificate files: stat none.pem: no such file"},
		{"config's certificate missing", []string{"serve", "--config", tlsCfg}, 2,
			"unusable certificate files: stat " + filepath.Join(filepath.Dir(tlsCfg), "none.pem") + ": no such file"},
		{"config's TLS beside --insecure", []string{"serve", "--config", tlsCfg, "--insecure"}, 2, "--insecure serves plaintext"},
		{"metrics address", []string{"serve", "-s", "snowflake", "--metrics-addr", "9100"}, 2, `--metrics-addr "9100": want host:port`},
		// --insecure passes the check: the port in use is what fails.
		{"insecure on purpose", []string{"serve", "-s", "snowflake", "--addr", "0.0.0.0:" + busy[strings.LastIndex(busy, ":")+1:], "--insecure"}, 1, "address already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cli.Main(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.contains) {
				t.Errorf("idgen %s = %d, stderr %q; want %d and %q", strings.Join(tt.args, " "), code, stderr.String(), tt.code, tt.contains)
			}
		})
	}
}

// A port in use is a runtime failure, not bad input: exit 1, naming the
// address.
func TestServePortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"serve", "-s", "snowflake", "--addr", addr}, strings.NewReader(""), &stdout, &stderr)
	if want := fmt.Sprintf("--addr %q", addr); code != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("idgen serve --addr %s (in use) = %d, stderr %q; want 1 and %q", addr, code, stderr.String(), want)
	}
}

// The startup error masks the passwords of the spec's DSNs, and cuts a
// long spec.
func TestServeStartupErrorMasked(t *testing.T) {
	tests := []struct {
		name, spec string
		secrets    []string
		contains   string
	}{
		{"ticket list", "ticket?dsn=mysql://u:S3cretMY@127.0.0.1:1/test,postgres://u:S3cretPG@127.0.0.1:1/db",
			[]string{"S3cretMY", "S3cretPG"}, `-s "ticket?dsn=mysql://u:xxxxx@127.0.0.1:1/test,postgres://u:xxxxx@1…"`},
		{"password cut", "ticket?dsn=mysql://u:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx@127.0.0.1:1/test,postgres://u:S3cretCUT@127.0.0.1:1/db",
			[]string{"S3cr"}, `-s "ticket?dsn=mysql://u:xxxxx@127.0.0.1:1/test,postgres://u:xxxxx@1…"`},
		{"segment", "segment?dsn=postgres://u:S3cretSEG@127.0.0.1:1/db&tag=a", []string{"S3cretSEG"}, "postgres://u:xxxxx@127.0.0.1:1/db"},
		{"password key", "segment?dsn=postgres://u@127.0.0.1:1/db?password=S3cretQ%26sslmode=disable&tag=a",
			[]string{"S3cretQ"}, "password=xxxxx"},
		{"keyword DSN", "segment?dsn=host=127.0.0.1 port=1 user=u password=S3cretKW dbname=x&tag=a", []string{"S3cretKW"}, "password=xxxxx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cli.Main([]string{"serve", "-s", tt.spec, "--addr", "127.0.0.1:0"}, strings.NewReader(""), &stdout, &stderr)
			if code == 0 || !strings.Contains(stderr.String(), tt.contains) {
				t.Errorf("idgen serve -s %q = %d, stderr %q; want a failure and %q", tt.spec, code, stderr.String(), tt.contains)
			}
			for _, secret := range tt.secrets {
				if strings.Contains(stdout.String()+stderr.String(), secret) {
					t.Errorf("idgen serve -s %q printed the password %q: %s", tt.spec, secret, stderr.String())
				}
			}
		})
	}
	long := "snowflake?preset=" + strings.Repeat("x", 10_000)
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"serve", "-s", long, "--addr", "127.0.0.1:0"}, strings.NewReader(""), &stdout, &stderr)
	if echo := `-s "` + long[:70]; code != 2 || strings.Contains(stderr.String(), echo) || !strings.Contains(stderr.String(), long[:40]) {
		t.Errorf("idgen serve -s <10,000 characters> = %d, stderr %.300q; want 2 and the spec cut to about 64 characters", code, stderr.String())
	}
}

// TestServeProcess runs "idgen serve" as a process: it serves, logs JSON,
// and on SIGTERM lets a request in flight finish before it exits 0.
func TestServeProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	t.Parallel() // a process on a port of its own
	bin := buildIdgen(t)
	cfg := filepath.Join(t.TempDir(), "idgen.yaml")
	if err := os.WriteFile(cfg, []byte("default: orders\ngenerators:\n  orders: snowflake?preset=twitter&worker=7\n  sessions: uuidv7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, "--config", cfg, "--addr", "127.0.0.1:0", "--max-count", "1000000",
		"--timeout", "1m") // the million IDs may take more than the default 1 s on a busy machine
	cmd, logs, rec := p.cmd, p.logs, p.rec
	next := func() map[string]any { return p.next(t) }
	addr, _ := rec["addr"].(string)
	if addr == "" || rec["default"] != "orders" {
		t.Fatalf("first log record = %v; want msg serving with addr and default orders", rec)
	}

	resp, err := http.Get("http://" + addr + "/api/v1/sessions/ids?count=2&format=text")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(strings.Fields(string(body))) != 2 {
		t.Fatalf("GET sessions = %d %q; want 200 and 2 IDs", resp.StatusCode, body)
	}

	// count=250,000 as JSON under the default --write-timeout: the whole
	// body, streamed, while the process's heap (go_memstats_heap_alloc_bytes,
	// read from its /metrics every 10 ms) stays within 32 MiB of where it
	// was. The request holds about 0.2 MB; the margin is the GC's: garbage
	// may reach twice the live heap, and the 4 MB minimum goal, before a
	// cycle. Building the answer whole took 502 MB for a million IDs
	// (httpapi's TestStreamLarge, then), so some 125 MB for these, four
	// times the bound. (A million took this test 2.5 s of CPU in
	// json.Valid alone under -race, and as much again in copies.)
	base := heapAlloc(t, addr)
	peak := base
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(10 * time.Millisecond):
			}
			peak = max(peak, heapAlloc(t, addr))
		}
	}()
	const jsonCount = 250_000
	resp, err = http.Get("http://" + addr + "/api/v1/ids?count=" + strconv.Itoa(jsonCount))
	if err != nil {
		t.Fatal(err)
	}
	// The body checked as valid JSON with jsonCount ID objects and a
	// generated_at: decoding it into structs took a minute under -race
	// (the decoder's reflection, instrumented), the scan seconds.
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	close(stopSampling)
	<-sampled
	if n := bytes.Count(body, []byte(`{"value_string":"`)); err != nil || resp.StatusCode != http.StatusOK || !json.Valid(body) ||
		!bytes.HasPrefix(body, []byte(`{"ids":[{"value_string":"`)) || n != jsonCount || !bytes.Contains(body, []byte(`"generated_at":"`)) {
		t.Fatalf("GET count=%d = %d, %d bytes, %d IDs, valid JSON %v, %v; want 200 and the whole body, with generated_at",
			jsonCount, resp.StatusCode, len(body), n, json.Valid(body), err)
	}
	t.Logf("count=%d: the server's heap peaked %.1f MB above its %.1f MB before", jsonCount, (peak-base)/1e6, base/1e6)
	if peak-base > 32<<20 {
		t.Errorf("the server's heap grew by %.1f MB serving count=%d; want at most 32 MiB", (peak-base)/1e6, jsonCount)
	}

	// A request in flight: a million IDs as text (about 20 MB, more than the
	// socket buffers hold) to a client with a small receive buffer that does
	// not read yet, so the handler is blocked writing when SIGTERM arrives.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /api/v1/ids?count=1000000&format=text HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the handler is running
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if rec := next(); !strings.HasPrefix(rec["msg"].(string), "shutting down") {
		t.Fatalf("log record after SIGTERM = %v; want shutting down", rec)
	}
	select {
	case rec := <-logs:
		t.Fatalf("log record %v while a request is in flight; want none until it is read", rec)
	case <-time.After(300 * time.Millisecond):
	}
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the in-flight response: %v", err)
	}
	body, err = io.ReadAll(resp.Body)
	if n := bytes.Count(body, []byte("\n")); err != nil || resp.StatusCode != http.StatusOK || n != 1_000_000 {
		t.Errorf("in-flight request = %d, %d IDs, %v; want 200 and 1000000 IDs", resp.StatusCode, n, err)
	}
	if rec := next(); rec["msg"] != "stopped" {
		t.Errorf("last log record = %v; want stopped", rec)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("idgen serve exited with %v; want 0", err)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Errorf("%s still accepts connections after shutdown", addr)
	}
}

// heapAlloc reads go_memstats_heap_alloc_bytes from the server's /metrics.
func heapAlloc(t *testing.T, addr string) float64 {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Errorf("GET /metrics: %v", err)
		return 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_alloc_bytes "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Errorf("go_memstats_heap_alloc_bytes %q: %v", v, err)
			}
			return f
		}
	}
	t.Errorf("no go_memstats_heap_alloc_bytes in /metrics")
	return 0
}

// serve warns at start-up, before it serves, when --max-count IDs of a
// generator cannot be issued within --timeout at the pace one chunk took:
// a ticket server's 100 chunks of 1,024 at more than 10 µs each under a
// 1 ms timeout (a PostgreSQL round trip takes some 100 µs and more). A
// Snowflake generator under the defaults (10 chunks within 1 s) gets no
// warning.
func TestServeWarnsSlowIssue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	bin := buildIdgen(t)
	dsn := testenv.PostgresDSN(t)
	name := fmt.Sprintf("serve_warn_%d", time.Now().UnixNano())
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), dsn); err == nil {
			c.Exec(context.Background(), "DROP SEQUENCE IF EXISTS "+name)
			c.Close(context.Background())
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		warn bool
	}{
		{"tickets", []string{"-s", "ticket?dsn=" + dsn + "&name=" + name, "--max-count", "100000", "--timeout", "1ms"}, true},
		{"snowflake", []string{"-s", "snowflake?worker=1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			var warned map[string]any
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				var rec map[string]any
				if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
					t.Fatalf("log line %q: %v", sc.Text(), err)
				}
				if rec["msg"] == "serving" {
					break
				}
				if rec["level"] == "WARN" && strings.Contains(fmt.Sprint(rec["msg"]), "--max-count cannot be met within --timeout") {
					warned = rec
				}
			}
			if tc.warn && (warned == nil || warned["generator"] != "default" || warned["max_count"] != 100000.0) {
				t.Errorf("log before serving: warning %v; want one for generator default, max_count 100000", warned)
			}
			if !tc.warn && warned != nil {
				t.Errorf("log before serving: warning %v; want none", warned)
			}
		})
	}
}
