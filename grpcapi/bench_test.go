package grpcapi_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/snowflake"
)

// BenchmarkUnaryNext is Next with count=1 over loopback from as many
// parallel callers as BenchmarkHTTPNext (4 × GOMAXPROCS), with the
// breakdown (as HTTP's JSON has it) and without (omit_breakdown); compare
// BenchmarkHTTPNext in the same run. conns=callers gives each caller a
// connection of its own, as HTTP/1.1's keep-alive pool does; conns=1
// multiplexes them all over one, as one grpc-go ClientConn does; conns=procs
// spreads them over GOMAXPROCS connections, round robin. Like
// BenchmarkHTTPNext's client, which reads the body into io.Discard, the
// callers receive the whole answer and check its status but do not decode
// it (discardCodec): both benchmarks measure the server and the transport,
// not a client's decoder. cpu-ns/op is the process's CPU time (user +
// system, client and server) per call: on a busy machine a steadier figure
// than req/s.
func BenchmarkUnaryNext(b *testing.B) {
	for _, omit := range []bool{false, true} {
		name := "breakdown"
		if omit {
			name = "omit_breakdown"
		}
		for _, pool := range []struct {
			name string
			size func() int // connections; 0: one per caller
		}{
			{"conns=callers", func() int { return 0 }},
			{"conns=1", func() int { return 1 }},
			{"conns=procs", func() int { return runtime.GOMAXPROCS(0) }},
		} {
			b.Run(name+"/"+pool.name, func(b *testing.B) {
				addr := listen(b, map[string]idgen.Generator{"default": newSnowflake(b, 1, snowflake.Config{})}, grpcapi.Options{MaxCount: 10_000})
				var conns []idgenv1.IDServiceClient
				for range pool.size() {
					conns = append(conns, idgenv1.NewIDServiceClient(dial(b, addr)))
				}
				var mu sync.Mutex
				var next int
				client := func() idgenv1.IDServiceClient {
					mu.Lock()
					defer mu.Unlock()
					if len(conns) == 0 {
						return idgenv1.NewIDServiceClient(dial(b, addr))
					}
					next++
					return conns[next%len(conns)]
				}
				b.SetParallelism(benchParallelism)
				b.ReportAllocs()
				cpu := cpuTime(b)
				b.RunParallel(func(pb *testing.PB) {
					c := client()
					ctx := context.Background()
					req := &idgenv1.NextRequest{Count: 1, OmitBreakdown: omit}
					discard := grpc.ForceCodecV2(discardCodec{encoding.GetCodecV2("proto")})
					for pb.Next() {
						if _, err := c.Next(ctx, req, discard); err != nil {
							b.Error(err)
							return
						}
					}
				})
				reportRate(b, cpu)
			})
		}
	}
}

// discardCodec is the benchmark callers' codec: grpc-go's proto codec for
// the request; the answer's bytes, received whole, are dropped undecoded.
type discardCodec struct{ encoding.CodecV2 }

func (discardCodec) Unmarshal(mem.BufferSlice, any) error { return nil }

// benchParallelism is the parallel callers per GOMAXPROCS of
// BenchmarkUnaryNext and BenchmarkHTTPNext.
const benchParallelism = 4

// cpuTime returns the process's CPU time so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRate reports req/s and cpu-ns/op, the process's CPU time since
// cpu0 per call.
func reportRate(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkHTTPNext is GET /api/v1/ids?count=1 over loopback, keep-alive,
// from as many parallel callers as BenchmarkUnaryNext, each on a
// connection of its own (the pool keeps one idle connection per caller).
// Each caller sends one prepared request again and again, as
// BenchmarkUnaryNext's callers send one NextRequest, and reads the body
// into io.Discard.
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
	b.SetParallelism(benchParallelism)
	b.ReportAllocs()
	cpu := cpuTime(b)
	b.RunParallel(func(pb *testing.PB) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			resp, err := client.Do(req)
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
	reportRate(b, cpu)
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
