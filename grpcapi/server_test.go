package grpcapi_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

// serve starts a gRPC server of gens on a loopback port and returns a
// grpc-go client connection to it.
func serve(t testing.TB, gens map[string]idgen.Generator, opts grpcapi.Options) *grpc.ClientConn {
	t.Helper()
	return dial(t, listen(t, gens, opts))
}

// listen starts a gRPC server of gens on a loopback port, stopped at the
// test's end, and returns its address.
func listen(t testing.TB, gens map[string]idgen.Generator, opts grpcapi.Options) string {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := grpcapi.New(gens, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := s.NewGRPCServer()
	go gs.Serve(ln)
	t.Cleanup(func() { s.Shutdown(); gs.Stop() })
	return ln.Addr().String()
}

// dial returns a grpc-go client connection to addr, closed at the test's
// end.
func dial(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(grpcapi.StreamWindow), grpc.WithInitialConnWindowSize(grpcapi.StreamWindow))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func newSnowflake(t testing.TB, worker int64, cfg snowflake.Config) *snowflake.Generator {
	t.Helper()
	cfg.Nodes = map[string]int64{"worker": worker}
	g, err := snowflake.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestHealthAndReflection(t *testing.T) {
	cc := serve(t, map[string]idgen.Generator{"default": newSnowflake(t, 7, snowflake.Config{})}, grpcapi.Options{})
	ctx := context.Background()
	for _, svc := range []string{"", "idgen.v1.IDService"} {
		resp, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil {
			t.Fatalf("Check(%q) = %v", svc, err)
		}
		if resp.Status != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v; want SERVING", svc, resp.Status)
		}
	}
	rc, err := rpb.NewServerReflectionClient(cc).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	for _, want := range []string{"idgen.v1.IDService", "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %v; want %s among them", names, want)
		}
	}
}

func TestNextDecodesToWorker(t *testing.T) {
	g := newSnowflake(t, 7, snowflake.Config{})
	cc := serve(t, map[string]idgen.Generator{"orders": g}, grpcapi.Options{})
	c := idgenv1.NewIDServiceClient(cc)
	ctx := context.Background()
	resp, err := c.Next(ctx, &idgenv1.NextRequest{Count: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Ids) != 5 {
		t.Fatalf("Next(count=5) gave %d IDs; want 5", len(resp.Ids))
	}
	var last uint64
	for _, p := range resp.Ids {
		v := binary.BigEndian.Uint64(p.Value)
		if v <= last {
			t.Errorf("ID %d after %d; want increasing", v, last)
		}
		last = v
		parts, err := g.Decompose(g.Scheme().FromUint64(v))
		if err != nil {
			t.Fatal(err)
		}
		if w, _ := parts.Node("worker"); w != 7 {
			t.Errorf("ID %d decodes to worker %d; want 7", v, w)
		}
		var worker uint64 = 99
		for _, f := range p.Fields {
			if f.Name == "worker" {
				worker = f.Value
			}
		}
		if worker != 7 {
			t.Errorf("ID %s breakdown %v: worker = %d; want 7", p.Text, p.Fields, worker)
		}
	}
	dec, err := c.Decode(ctx, &idgenv1.DecodeRequest{Id: resp.Ids[0].Text})
	if err != nil {
		t.Fatal(err)
	}
	if dec.Text != resp.Ids[0].Text || dec.TimestampMs != resp.Ids[0].TimestampMs {
		t.Errorf("Decode(%q) = %v; want %v", resp.Ids[0].Text, dec, resp.Ids[0])
	}
	list, err := c.ListGenerators(ctx, &idgenv1.ListGeneratorsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if list.Default != "orders" || len(list.Generators) != 1 || list.Generators[0].Layout != g.Layout().String() {
		t.Errorf("ListGenerators() = %v; want orders with layout %s", list, g.Layout())
	}
}

func TestNextStream(t *testing.T) {
	g := newSnowflake(t, 3, snowflake.Config{})
	cc := serve(t, map[string]idgen.Generator{"default": g}, grpcapi.Options{MaxCount: 100})
	stream, err := idgenv1.NewIDServiceClient(cc).NextStream(context.Background(), &idgenv1.NextStreamRequest{Count: 250, BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var last uint64
	for {
		b, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.IdSize != 8 {
			t.Fatalf("id_size = %d; want 8", b.IdSize)
		}
		sizes = append(sizes, len(b.Packed)/8)
		for i := 0; i < len(b.Packed); i += 8 {
			v := binary.BigEndian.Uint64(b.Packed[i:])
			if v <= last {
				t.Fatalf("ID %d after %d; want increasing", v, last)
			}
			last = v
		}
	}
	if !slices.Equal(sizes, []int{100, 100, 50}) {
		t.Errorf("NextStream(count=250, batch_size=100) batches = %v; want [100 100 50]", sizes)
	}
}

func TestErrorCodes(t *testing.T) {
	lease := &idgentest.Lease{}
	lease.Set(&idgen.Identity{WorkerID: 1})
	lost := newSnowflake(t, 1, snowflake.Config{Lease: lease})
	lease.Set(nil) // the lease is lost after start
	reg := prometheus.NewRegistry()
	cc := serve(t, map[string]idgen.Generator{"default": newSnowflake(t, 2, snowflake.Config{}), "lost": lost},
		grpcapi.Options{MaxCount: 10, Registry: reg})
	c := idgenv1.NewIDServiceClient(cc)
	ctx := context.Background()
	tests := []struct {
		name  string
		call  func() error
		code  codes.Code
		msg   string
		retry bool
	}{
		{"count over max", func() error { _, err := c.Next(ctx, &idgenv1.NextRequest{Count: 11}); return err },
			codes.InvalidArgument, "idgen: count 11 outside [1, 10]", false},
		{"unknown generator", func() error { _, err := c.Next(ctx, &idgenv1.NextRequest{Generator: "nope"}); return err },
			codes.NotFound, `idgen: unknown generator "nope"; served: default, lost`, false},
		{"bad ID", func() error { _, err := c.Decode(ctx, &idgenv1.DecodeRequest{Id: "12x"}); return err },
			codes.InvalidArgument, `idgen: "12x" is not a snowflake ID of generator "default": idgen: invalid ID syntax: it is not a decimal ID (digits 0-9 only)`, false},
		{"lease lost", func() error { _, err := c.Next(ctx, &idgenv1.NextRequest{Generator: "lost"}); return err },
			codes.Unavailable, `idgen: generator "lost": worker ID lease lost: no ID is issued until the worker ID is reacquired`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := status.Convert(tt.call())
			if st.Code() != tt.code || st.Message() != tt.msg {
				t.Errorf("%s: status = %v %q; want %v %q", tt.name, st.Code(), st.Message(), tt.code, tt.msg)
			}
			retry, ok := retryDelay(t, st)
			if ok != tt.retry || (ok && retry <= 0) {
				t.Errorf("%s: RetryInfo = %v, %t; want present %t with a positive delay", tt.name, retry, ok, tt.retry)
			}
		})
	}
	if n, err := testutil.GatherAndCount(reg, "grpc_server_handled_total"); err != nil || n == 0 {
		t.Errorf("grpc_server_handled_total series = %d, %v; want some", n, err)
	}
}

// retryDelay returns the retry_delay of st's google.rpc.RetryInfo detail,
// decoded by hand (field 1, a google.protobuf.Duration), and whether st
// has one.
func retryDelay(t *testing.T, st *status.Status) (time.Duration, bool) {
	t.Helper()
	for _, d := range st.Proto().GetDetails() {
		if d.GetTypeUrl() != "type.googleapis.com/google.rpc.RetryInfo" {
			continue
		}
		num, typ, n := protowire.ConsumeTag(d.GetValue())
		if num != 1 || typ != protowire.BytesType {
			t.Fatalf("RetryInfo = %x; want field 1, a Duration", d.GetValue())
		}
		b, m := protowire.ConsumeBytes(d.GetValue()[n:])
		var dur durationpb.Duration
		if m < 0 || proto.Unmarshal(b, &dur) != nil {
			t.Fatalf("RetryInfo = %x: retry_delay does not decode", d.GetValue())
		}
		return dur.AsDuration(), true
	}
	return 0, false
}

// steppedClock is a test clock that reports wall clock steps followed.
type steppedClock struct{ *idgentest.Clock }

func (steppedClock) ClockSteps() (forward, back uint64, sum time.Duration) {
	return 2, 1, 1500 * time.Millisecond
}

// TestGeneratorMetrics: a Server alone on its registry exports its
// generators' counters (serving.Collector over their idgen.Stats) as
// httpapi does, the clock steps included, read through a wrapper (the
// layout end is the default layout's, 2095-09-07T15:47:35Z).
func TestGeneratorMetrics(t *testing.T) {
	clk := steppedClock{idgentest.NewClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))}
	g := newSnowflake(t, 1, snowflake.Config{Clock: clk})
	reg := prometheus.NewRegistry()
	cc := serve(t, map[string]idgen.Generator{"default": wrapped{g}}, grpcapi.Options{Registry: reg})
	if _, err := idgenv1.NewIDServiceClient(cc).Next(context.Background(), &idgenv1.NextRequest{Count: 3}); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP idgen_clock_steps_total Wall clock steps a generator's clock followed, by direction (forward, back); after a step back the rollback policy applies. Present only for generators on the Snowflake core.
# TYPE idgen_clock_steps_total counter
idgen_clock_steps_total{direction="back",generator="default"} 1
idgen_clock_steps_total{direction="forward",generator="default"} 2
# HELP idgen_clock_stepped_seconds The sum of the wall clock steps a generator's clock followed, in seconds, > 0 forward. Present only for generators on the Snowflake core.
# TYPE idgen_clock_stepped_seconds gauge
idgen_clock_stepped_seconds{generator="default"} 1.5
# HELP idgen_clock_rollback_failures_total Clock rollbacks that failed an issue, by generator: from the generator's own counter when it has one, else the requests answered 503 for a rollback.
# TYPE idgen_clock_rollback_failures_total counter
idgen_clock_rollback_failures_total{generator="default"} 0
# HELP idgen_grpc_ids_issued_total IDs sent to gRPC clients, by generator.
# TYPE idgen_grpc_ids_issued_total counter
idgen_grpc_ids_issued_total{generator="default"} 3
# HELP idgen_layout_end_timestamp_seconds When the generator's layout runs out of time bits, as a Unix time in seconds: from then on it issues nothing.
# TYPE idgen_layout_end_timestamp_seconds gauge
idgen_layout_end_timestamp_seconds{generator="default"} 3.966248855e+09
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "idgen_clock_steps_total", "idgen_clock_stepped_seconds",
		"idgen_clock_rollback_failures_total", "idgen_grpc_ids_issued_total", "idgen_layout_end_timestamp_seconds"); err != nil {
		t.Error(err)
	}
}

// wrapped is a wrapper generator, as encoding= builds one.
type wrapped struct{ idgen.Generator }

func (w wrapped) Unwrap() idgen.Generator { return w.Generator }

// rollingBack is a generator with no counters of its own whose every issue
// fails with a clock rollback.
type rollingBack struct{ idgen.Generator }

func (rollingBack) Next(context.Context) (idgen.ID, error) {
	return idgen.ID{}, &idgen.ClockRollbackError{Drift: 5 * time.Millisecond}
}

// TestRollbackFailuresCounted: for a generator whose Stats do not count
// rollback failures, idgen_clock_rollback_failures_total counts the calls
// gRPC failed with one, as httpapi counts its requests.
func TestRollbackFailuresCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	inner := rollingBack{newSnowflake(t, 1, snowflake.Config{})}
	cc := serve(t, map[string]idgen.Generator{"default": inner}, grpcapi.Options{Registry: reg})
	c := idgenv1.NewIDServiceClient(cc)
	for range 3 {
		_, err := c.Next(context.Background(), &idgenv1.NextRequest{Count: 1})
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("Next during a rollback = %v; want Unavailable", err)
		}
	}
	want := `
# HELP idgen_clock_rollback_failures_total Clock rollbacks that failed an issue, by generator: from the generator's own counter when it has one, else the requests answered 503 for a rollback.
# TYPE idgen_clock_rollback_failures_total counter
idgen_clock_rollback_failures_total{generator="default"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "idgen_clock_rollback_failures_total"); err != nil {
		t.Error(err)
	}
}
