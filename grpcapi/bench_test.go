package grpcapi_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/snowflake"
)

// BenchmarkUnaryNext is Next with count=1 over loopback from parallel
// clients on one connection, with the breakdown (as HTTP's JSON has it)
// and without (omit_breakdown); compare BenchmarkHTTPNext in the same run.
func BenchmarkUnaryNext(b *testing.B) {
	for _, omit := range []bool{false, true} {
		name := "breakdown"
		if omit {
			name = "omit_breakdown"
		}
		b.Run(name, func(b *testing.B) {
			cc := serve(b, map[string]idgen.Generator{"default": newSnowflake(b, 1, snowflake.Config{})}, grpcapi.Options{MaxCount: 10_000})
			c := idgenv1.NewIDServiceClient(cc)
			b.SetParallelism(4)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				req := &idgenv1.NextRequest{Count: 1, OmitBreakdown: omit}
				for pb.Next() {
					if _, err := c.Next(ctx, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkHTTPNext is GET /api/v1/ids?count=1 over loopback, keep-alive,
// from as many parallel clients as BenchmarkUnaryNext.
func BenchmarkHTTPNext(b *testing.B) {
	h, err := httpapi.New(map[string]idgen.Generator{"default": newSnowflake(b, 1, snowflake.Config{})},
		httpapi.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/api/v1/ids?count=1"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.SetParallelism(4)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Get(url)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("GET = %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkNextStream streams b.N IDs in batches of 10,000 on layouts with
// a 14-bit sequence: at 1 ms ticks the layout itself caps the rate at
// 16,384,000 IDs/s; at 100 µs ticks, ten times that.
func BenchmarkNextStream(b *testing.B) {
	for _, layout := range []string{
		"time:39,worker:10,sequence:14;tick=1ms",
		"time:43,worker:6,sequence:14;tick=100us",
	} {
		b.Run(layout, func(b *testing.B) {
			l, err := snowflake.ParseLayout(layout)
			if err != nil {
				b.Skipf("layout %s: %v", layout, err)
			}
			g := newSnowflake(b, 1, snowflake.Config{Layout: l})
			cc := serve(b, map[string]idgen.Generator{"default": g}, grpcapi.Options{MaxCount: 10_000})
			st, err := idgenv1.NewIDServiceClient(cc).NextStream(context.Background(),
				&idgenv1.NextStreamRequest{Count: uint64(b.N), BatchSize: 10_000})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				batch, err := st.Recv()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				n += len(batch.Packed) / 8
			}
			if n != b.N {
				b.Fatalf("streamed %d IDs; want %d", n, b.N)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "ids/s")
		})
	}
}

// BenchmarkNextServer is the Server's Next in process, count=1, without
// grpc-go around it: the allocations and time the answer itself costs,
// with Options.Timeout as idgen serve sets it (1 s).
func BenchmarkNextServer(b *testing.B) {
	s, err := grpcapi.New(map[string]idgen.Generator{"default": newSnowflake(b, 1, snowflake.Config{})},
		grpcapi.Options{Timeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	req := &idgenv1.NextRequest{Count: 1}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Next(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
