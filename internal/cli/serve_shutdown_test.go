package cli_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/idgenkit/idgen/grpcapi/idgenv1"
)

// grpcConn returns a plaintext client of the process's --grpc-addr,
// closed at the test's end.
func (p *serveProc) grpcConn(t *testing.T) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(p.addr(t, "grpc_addr"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// openStream opens a NextStream of IDs without end on the gRPC address and
// reads its first batch: the stream is in flight, and stays so, its
// server blocked on flow control, as long as nobody reads on.
func openStream(t *testing.T, ctx context.Context, cc *grpc.ClientConn) {
	t.Helper()
	st, err := idgenv1.NewIDServiceClient(cc).NextStream(ctx, &idgenv1.NextStreamRequest{BatchSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := st.Recv(); err != nil || len(b.Packed) != 8000 {
		t.Fatalf("NextStream's first batch = %d bytes, %v; want 1000 IDs", len(b.GetPacked()), err)
	}
}

// rest returns the log records up to the end of stderr (the process has
// exited or closed it), failing after 60 s.
func (p *serveProc) rest(t *testing.T) []map[string]any {
	t.Helper()
	var recs []map[string]any
	timeout := time.After(60 * time.Second)
	for {
		select {
		case rec, ok := <-p.logs:
			if !ok {
				return recs
			}
			recs = append(recs, rec)
		case <-timeout:
			t.Fatalf("idgen serve still writing logs 60 s on: %v", recs)
		}
	}
}

// exitCode waits for the process and returns its exit code.
func (p *serveProc) exitCode(t *testing.T) int {
	t.Helper()
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("waiting for idgen serve: %v", err)
	return -1
}

// msgs returns the msg of each record.
func msgs(recs []map[string]any) []string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprint(r["msg"]))
	}
	return out
}

// On SIGTERM serve turns readiness off first: a gRPC health Watch sees
// NOT_SERVING and /readyz (on --metrics-addr, which answers through the
// drain) answers 503 while a NextStream is still in flight. The stream
// outlives --shutdown-timeout: it is cut off, a log record says so (the
// transport and the count), "stopped" comes after it, and the exit code
// is 1.
func TestServeShutdownNotServing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	t.Parallel() // a process on ports of its own; it mostly waits out --shutdown-timeout
	bin := buildIdgen(t)
	p := startServe(t, bin, "-s", "snowflake?worker=3", "--addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--metrics-addr", "127.0.0.1:0", "--shutdown-timeout", "5s")
	cc := p.grpcConn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	watch, err := healthpb.NewHealthClient(cc).Watch(ctx, &healthpb.HealthCheckRequest{Service: idgenv1.IDService_ServiceDesc.ServiceName})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := watch.Recv(); err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health Watch = %v, %v; want SERVING", h, err)
	}
	openStream(t, ctx, cc)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if h, err := watch.Recv(); err != nil || h.Status != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health Watch after SIGTERM = %v, %v; want NOT_SERVING", h, err)
	}
	// HTTP readiness is turned off before gRPC's: it is off by now.
	resp, err := http.Get("http://" + p.addr(t, "metrics_addr") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "shutting down") {
		t.Errorf("GET /readyz during the drain = %d %s; want 503, shutting down", resp.StatusCode, body)
	}
	recs := p.rest(t)
	code := p.exitCode(t)
	if len(recs) != 4 || recs[0]["msg"] != "shutting down: finishing requests in flight" || recs[2]["msg"] != "stopped" ||
		!strings.HasPrefix(fmt.Sprint(recs[3]["msg"]), "NOT JSON: idgen: serve: shutdown cut off work in flight after --shutdown-timeout 5s (grpc: 0 requests, 1 streams)") {
		t.Fatalf("log records after SIGTERM: %q; want shutting down, the cut, stopped, the error line", msgs(recs))
	}
	cut := recs[1]
	if cut["level"] != "ERROR" || cut["msg"] != "shutdown cut off work in flight: --shutdown-timeout passed" || cut["transport"] != "grpc" ||
		cut["streams"] != 1.0 || cut["requests"] != 0.0 || cut["timeout"] != "5s" {
		t.Errorf("cut-off record = %v; want ERROR, transport grpc, 1 stream, 0 requests, timeout 5s", cut)
	}
	if code != 1 {
		t.Errorf("exit code = %d; want 1 (work cut off)", code)
	}
}

// Both transports drain together, within one --shutdown-timeout: with an
// HTTP response and a gRPC stream that both outlive it, serve exits 1
// after the timeout plus a margin (process exit and scheduling), and the
// bound, twice the timeout, is what drains one after the other would take
// at least, allows a margin of 3 s. The margin is logged: 3-75 ms in 7
// runs under -race on the shared 2-core machine, 6-107 ms in 3 more beside
// two busy loops (yes > /dev/null); drains one after the other took 6.009 s.
func TestServeShutdownDrainsTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	t.Parallel() // a process on ports of its own; it mostly waits out --shutdown-timeout
	bin := buildIdgen(t)
	const timeout = 3 * time.Second
	p := startServe(t, bin, "-s", "snowflake?worker=4", "--addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--shutdown-timeout", timeout.String(), "--max-count", "1000000", "--timeout", "1m")
	cc := p.grpcConn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	openStream(t, ctx, cc)
	// An HTTP response in flight: a million IDs as text to a client with
	// a small receive buffer that never reads: its handler blocks writing.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", p.addr(t, "addr"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /api/v1/ids?count=1000000&format=text HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The status line is written once the first chunk is issued: the
	// handler is running when it arrives.
	line := make([]byte, len("HTTP/1.1 200"))
	if _, err := io.ReadFull(conn, line); err != nil || string(line) != "HTTP/1.1 200" {
		t.Fatalf("in-flight response starts %q, %v; want HTTP/1.1 200", line, err)
	}
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	recs := p.rest(t)
	took := time.Since(start)
	code := p.exitCode(t)
	t.Logf("shutdown with both transports busy took %v: the %v timeout plus %v", took.Round(time.Millisecond), timeout, (took - timeout).Round(time.Millisecond))
	cuts := map[string]string{}
	for _, r := range recs {
		if r["msg"] == "shutdown cut off work in flight: --shutdown-timeout passed" {
			cuts[fmt.Sprint(r["transport"])] = fmt.Sprintf("%v requests, %v streams", r["requests"], r["streams"])
		}
	}
	if got := fmt.Sprint(cuts); code != 1 || got != "map[grpc:0 requests, 1 streams http:1 requests, 0 streams]" {
		t.Errorf("exit %d, cut-off records %s; want 1, an HTTP request and a gRPC stream (logs %q)", code, got, msgs(recs))
	}
	if took < timeout || took >= 2*timeout {
		t.Errorf("shutdown took %v; want at least the %v timeout and less than twice it (drains one after the other)", took, timeout)
	}
}
