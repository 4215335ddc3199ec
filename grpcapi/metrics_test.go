package grpcapi_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/snowflake"
)

// The server's metrics are go-grpc-middleware's, series for series: the
// same calls (unary ones that succeed and fail, a stream, health) on a
// Server and on a grpc.Server with go-grpc-middleware's interceptors give
// the same grpc_server_* families, names, help, labels and counts (the
// histograms compared by their sample counts: the times differ).
func TestMetricsAsMiddleware(t *testing.T) {
	gens := map[string]idgen.Generator{"default": newSnowflake(t, 1, snowflake.Config{})}
	opts := grpcapi.Options{MaxCount: 100, Logger: slog.New(slog.DiscardHandler)}

	ours := prometheus.NewRegistry()
	opts.Registry = ours
	s, err := grpcapi.New(gens, opts)
	if err != nil {
		t.Fatal(err)
	}
	gs := s.NewGRPCServer()

	theirs := prometheus.NewRegistry()
	opts.Registry = nil
	s2, err := grpcapi.New(gens, opts)
	if err != nil {
		t.Fatal(err)
	}
	pm := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
	theirs.MustRegister(pm)
	gs2 := grpc.NewServer(grpc.ChainUnaryInterceptor(pm.UnaryServerInterceptor()), grpc.ChainStreamInterceptor(pm.StreamServerInterceptor()))
	idgenv1.RegisterIDServiceServer(gs2, s2)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs2, hs)
	reflection.Register(gs2)
	pm.InitializeMetrics(gs2)

	for _, g := range []*grpc.Server{gs, gs2} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go g.Serve(ln)
		t.Cleanup(g.Stop)
		cc := dial(t, ln.Addr().String())
		c := idgenv1.NewIDServiceClient(cc)
		ctx := context.Background()
		for _, req := range []*idgenv1.NextRequest{{Count: 1}, {Count: 3, OmitBreakdown: true}, {Count: 101}, {Generator: "nope"}} {
			c.Next(ctx, req) // the errors are counted, not checked
		}
		c.Decode(ctx, &idgenv1.DecodeRequest{Id: "12"})
		c.Decode(ctx, &idgenv1.DecodeRequest{Id: "x"})
		st, err := c.NextStream(ctx, &idgenv1.NextStreamRequest{Count: 25, BatchSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := st.Recv(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
		g.GracefulStop() // every handler has counted
	}
	got, want := grpcFamilies(t, ours), grpcFamilies(t, theirs)
	if len(want) != 5 || !slices.Equal(got, want) {
		t.Errorf("metrics = \n%s\nwant go-grpc-middleware's\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// grpcFamilies returns reg's grpc_server_* families as text, each
// histogram reduced to its sample count.
func grpcFamilies(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "grpc_server_") {
			continue
		}
		for _, m := range mf.Metric {
			if h := m.Histogram; h != nil {
				m.Histogram = &dto.Histogram{SampleCount: h.SampleCount}
			}
			if c := m.Counter; c != nil {
				c.CreatedTimestamp = nil
			}
		}
		out = append(out, prototext.Format(mf))
	}
	return out
}
