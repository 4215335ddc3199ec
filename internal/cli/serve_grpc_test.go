package cli_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/snowflake"
)

// TestServeGRPC runs "idgen serve --grpc-addr" as a process and talks to it
// with grpc-go's own clients: health SERVING, IDs of worker 7.
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
