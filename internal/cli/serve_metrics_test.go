package cli_test

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/snowflake"
)

// TestServeGRPCMetrics runs "idgen serve --grpc-addr --metrics-addr" as a
// process, takes IDs over gRPC only, and reads /metrics on the metrics
// listener: the generator's own series (one collector over its
// idgen.Stats, shared by the HTTP and gRPC transports: each series once),
// the clock steps among them, read through the encoding= wrapper, beside
// the gRPC call counters.
func TestServeGRPCMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	p := startServe(t, buildIdgen(t), "-s", "snowflake?preset=twitter&worker=7&encoding=crockford",
		"--addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
	grpcAddr, metricsAddr := p.addr(t, "grpc_addr"), p.addr(t, "metrics_addr")
	cc, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := idgenv1.NewIDServiceClient(cc).Next(ctx, &idgenv1.NextRequest{Count: 3}); err != nil {
		t.Fatal(err)
	}

	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d, %v", resp.StatusCode, err)
	}
	series := map[string][]float64{}
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, val, ok := strings.Cut(strings.TrimSpace(line), " ")
		if v, err := strconv.ParseFloat(val, 64); ok && err == nil {
			series[name] = append(series[name], v)
		}
	}
	twitter, _ := snowflake.Preset("twitter")
	for _, c := range []struct {
		series string
		want   float64 // -1: any value
	}{
		{`idgen_grpc_ids_issued_total{generator="default"}`, 3},
		{`idgen_ids_issued_total{generator="default"}`, 0}, // HTTP's
		{`idgen_layout_end_timestamp_seconds{generator="default"}`, float64(twitter.End().Unix())},
		{`idgen_clock_max_ahead_seconds{generator="default"}`, 0},
		{`idgen_clock_rollback_failures_total{generator="default"}`, 0},
		{`idgen_clock_steps_total{direction="forward",generator="default"}`, -1},
		{`idgen_clock_steps_total{direction="back",generator="default"}`, -1},
		{`idgen_clock_stepped_seconds{generator="default"}`, -1},
		{`idgen_sequence_exhaustion_waits_total{generator="default"}`, -1},
		{`idgen_clock_drift_seconds{generator="default"}`, -1},
	} {
		got := series[c.series]
		if len(got) != 1 || c.want >= 0 && got[0] != c.want {
			t.Errorf("/metrics %s = %v; want one series of %v (-1: any)", c.series, got, c.want)
		}
	}
}

// TestServeLifetimeThroughWrapper: serve checks the layout's lifetime
// through a wrapper too (idgen.ReadyOf): a baidu layout, whose time field
// ended in 2024, written with encoding= exits 2 before it listens. It
// served before, answering every request 503.
func TestServeLifetimeThroughWrapper(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildIdgen(t), "serve", "-s", "snowflake?preset=baidu&encoding=crockford", "--addr", "127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	const want = `serve: -s "snowflake?preset=baidu&encoding=crockford": layout lifetime exhausted: the 28-bit time field ended at 2024-11-20T21:24:16Z`
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), want) {
		t.Errorf("idgen serve -s 'snowflake?preset=baidu&encoding=crockford' = %v, output %q; want exit 2 and %q", err, out, want)
	}
}
