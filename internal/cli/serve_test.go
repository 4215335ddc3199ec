package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/cli"
)

func TestServeBadInput(t *testing.T) {
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
		{"bad addr", []string{"serve", "-s", "snowflake", "--addr", "127.0.0.1:99999"}, 2, `--addr "127.0.0.1:99999"`},
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

// TestServeProcess runs "idgen serve" as a process: it serves, logs JSON,
// and on SIGTERM lets a request in flight finish before it exits 0.
func TestServeProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	bin := filepath.Join(t.TempDir(), "idgen")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/idgen")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := filepath.Join(t.TempDir(), "idgen.yaml")
	if err := os.WriteFile(cfg, []byte("default: orders\ngenerators:\n  orders: snowflake?preset=twitter&worker=7\n  sessions: uuidv7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", cfg, "--addr", "127.0.0.1:0", "--max-count", "1000000")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	logs := make(chan map[string]any, 16)
	go func() {
		defer close(logs)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				rec = map[string]any{"msg": "NOT JSON: " + sc.Text()}
			}
			logs <- rec
		}
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case rec, ok := <-logs:
			if !ok {
				t.Fatal("idgen serve closed stderr")
			}
			return rec
		case <-time.After(30 * time.Second):
			t.Fatal("no log record from idgen serve within 30 s")
		}
		return nil
	}
	rec := next()
	addr, _ := rec["addr"].(string)
	if rec["msg"] != "serving" || addr == "" || rec["default"] != "orders" {
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
