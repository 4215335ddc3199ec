package cli_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"net"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/snowflake"
)

// TestServeGRPC runs "idgen serve --grpc-addr" as a process and talks to it
// with grpc-go's own clients: health SERVING, IDs of worker 7; and the
// server's static flow-control windows (grpcapi.NewGRPCServer's options)
// reach the wire.
func TestServeGRPC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	bin := buildIdgen(t)
	cmd := exec.Command(bin, "serve", "-s", "snowflake?preset=twitter&worker=7", "--addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() {
		t.Fatal("idgen serve closed stderr")
	}
	var rec map[string]any
	if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
		t.Fatalf("first log line %q: %v", sc.Text(), err)
	}
	addr, _ := rec["grpc_addr"].(string)
	if rec["msg"] != "serving" || addr == "" {
		t.Fatalf("first log record = %v; want msg serving with grpc_addr", rec)
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Health/Check = %v, %v; want SERVING", h, err)
	}
	checkWindows(t, addr)
	resp, err := idgenv1.NewIDServiceClient(cc).Next(ctx, &idgenv1.NextRequest{Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := snowflake.Preset("twitter")
	for _, id := range resp.Ids {
		parts, err := l.Decompose(binary.BigEndian.Uint64(id.Value))
		if err != nil {
			t.Fatal(err)
		}
		if w, _ := parts.Node("worker"); w != 7 {
			t.Errorf("ID %s decodes to worker %d; want 7", id.Text, w)
		}
	}
}

// checkWindows opens an HTTP/2 connection to the gRPC server at addr and
// checks the server's first frames: SETTINGS with a stream window of
// idgenv1.StreamWindow, then a WINDOW_UPDATE raising the connection's
// window from HTTP/2's 65,535 bytes to the same. A window of 64 KiB or
// more set by option is static in grpc-go: no BDP-estimation PING frames
// ride along with the calls.
func checkWindows(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	f, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		t.Fatalf("first frame = %v; want SETTINGS", f)
	}
	if v, ok := sf.Value(http2.SettingInitialWindowSize); !ok || v != idgenv1.StreamWindow {
		t.Errorf("SETTINGS_INITIAL_WINDOW_SIZE = %d (sent %t); want %d", v, ok, idgenv1.StreamWindow)
	}
	if f, err = fr.ReadFrame(); err != nil {
		t.Fatal(err)
	}
	if wu, ok := f.(*http2.WindowUpdateFrame); !ok || wu.StreamID != 0 || wu.Increment != idgenv1.StreamWindow-65535 {
		t.Errorf("second frame = %v; want WINDOW_UPDATE of stream 0 by %d", f, idgenv1.StreamWindow-65535)
	}
}
