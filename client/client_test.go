package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/client"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/snowflake"
)

// server is one in-process idgen server of a Snowflake generator, gRPC
// (package grpcapi) or HTTP (package httpapi).
type server struct {
	t        testing.TB
	worker   int64
	http     bool
	maxCount int         // grpcapi.Options.MaxCount or httpapi's; 0: its default
	tls      *tls.Config // serve TLS with it; nil: plaintext
	addr     string
	stop     func()
}

// transports are the two a server and the client speak.
var transports = []struct {
	name string
	http bool
}{{"grpc", false}, {"http", true}}

// start serves on s.addr (a new loopback port the first time).
func (s *server) start() {
	s.t.Helper()
	g, err := snowflake.New(context.Background(), snowflake.Config{Nodes: map[string]int64{"worker": s.worker}})
	if err != nil {
		s.t.Fatal(err)
	}
	gens, log := map[string]idgen.Generator{"default": g}, slog.New(slog.DiscardHandler)
	addr := s.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	if s.http {
		h, err := httpapi.New(gens, httpapi.Options{MaxCount: s.maxCount, Logger: log})
		if err != nil {
			s.t.Fatal(err)
		}
		hs := &http.Server{Handler: h}
		if s.tls != nil {
			ln = tls.NewListener(ln, s.tls)
		}
		go hs.Serve(ln)
		s.stop = func() { hs.Close() }
		return
	}
	api, err := grpcapi.New(gens, grpcapi.Options{MaxCount: s.maxCount, Logger: log})
	if err != nil {
		s.t.Fatal(err)
	}
	var opts []grpc.ServerOption
	if s.tls != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.tls)))
	}
	gs := api.NewGRPCServer(opts...)
	go gs.Serve(ln)
	s.stop = gs.Stop
}

// target is the server as Config.Targets names it.
func (s *server) target() string {
	switch {
	case !s.http:
		return s.addr
	case s.tls != nil:
		return "https://" + s.addr
	}
	return "http://" + s.addr
}

func startServer(t testing.TB, worker int64, http bool) *server {
	s := &server{t: t, worker: worker, http: http}
	s.start()
	t.Cleanup(func() { s.stop() })
	return s
}

// TestFailover issues IDs from two servers while the first is stopped and
// restarted: every ID is unique, no call fails, and the client fails over;
// over gRPC and over HTTP.
// The stop and restart follow the issue, not the clock: the first server
// stops once 1000 IDs are out, restarts once the client has failed over,
// and the workers stop 1000 IDs after that, however fast the machine.
func TestFailover(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { testFailover(t, tr.http) })
	}
}

func testFailover(t *testing.T, http bool) {
	a, b := startServer(t, 1, http), startServer(t, 2, http)
	ctx := context.Background()
	g, err := client.New(ctx, client.Config{Targets: []string{a.target(), b.target()}, MinBatch: 100, MaxBatch: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	l, _ := snowflake.Preset("default")
	if want, _ := snowflake.SchemeOf(l); g.Scheme() != want {
		t.Errorf("Scheme() = %v; want %v", g.Scheme(), want)
	}
	const workers = 4
	ids := make([][]idgen.ID, workers)
	var issued atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	done := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				id, err := g.Next(ctx)
				if err != nil {
					errs <- err
					return
				}
				ids[w] = append(ids[w], id)
				issued.Add(1)
			}
		}()
	}
	// waitIssued waits until n more IDs are out (or a worker failed).
	waitIssued := func(n int64) {
		for end := issued.Load() + n; issued.Load() < end && len(errs) == 0; {
			time.Sleep(time.Millisecond)
		}
	}
	waitIssued(1000)
	a.stop()
	// 200 000 IDs are 400 batches of the largest size: a client that has
	// not failed over by then never will.
	stopped := issued.Load()
	for g.Stats().Failovers == 0 && issued.Load()-stopped < 200_000 && len(errs) == 0 {
		time.Sleep(time.Millisecond)
	}
	a.start()
	waitIssued(1000)
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Next during stop and restart = %v; want no error", err)
	}
	seen := make(map[idgen.ID]bool, issued.Load())
	for _, s := range ids {
		for _, id := range s {
			if seen[id] {
				t.Fatalf("ID %v issued twice", id)
			}
			seen[id] = true
		}
	}
	if int64(len(seen)) != issued.Load() {
		t.Errorf("%d unique IDs; want %d", len(seen), issued.Load())
	}
	if st := g.Stats(); st.Failovers == 0 {
		t.Errorf("Stats() = %+v after %d IDs with the first server stopped; want at least one failover", st, issued.Load()-stopped)
	}
}

func TestUnavailable(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { testUnavailable(t, tr.http) })
	}
}

func testUnavailable(t *testing.T, http bool) {
	a := startServer(t, 3, http)
	ctx := context.Background()
	g, err := client.New(ctx, client.Config{Targets: []string{a.target()}, MinBatch: 10, MaxBatch: 10, RetryMin: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	a.stop()
	var dst [100]idgen.ID
	n, err := g.NextN(ctx, dst[:])
	if !errors.Is(err, idgen.ErrUnavailable) || n >= len(dst) {
		t.Errorf("NextN(100) with the only server stopped = %d, %v; want fewer and ErrUnavailable", n, err)
	}
}

// After Close, Next and NextN fail with ErrClosed at once, as a segment
// allocator's do, though IDs were left in the buffer.
func TestClosed(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { testClosed(t, tr.http) })
	}
}

func testClosed(t *testing.T, http bool) {
	a := startServer(t, 5, http)
	ctx := context.Background()
	g, err := client.New(ctx, client.Config{Targets: []string{a.target()}, MinBatch: 1000, MaxBatch: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(ctx); err != nil {
		t.Fatalf("Next() = %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if id, err := g.Next(ctx); !errors.Is(err, idgen.ErrClosed) {
		t.Errorf("Next() after Close = %v, %v; want ErrClosed", id, err)
	}
	var dst [10]idgen.ID
	if n, err := g.NextN(ctx, dst[:]); n != 0 || !errors.Is(err, idgen.ErrClosed) {
		t.Errorf("NextN(10) after Close = %d, %v; want 0, ErrClosed", n, err)
	}
	if st := g.Stats(); st.Buffered != 0 {
		t.Errorf("Stats().Buffered after Close = %d; want 0", st.Buffered)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close() = %v; want nil", err)
	}
}

// The client fetches 2,000,000 IDs from a server whose max count is
// 1,000,000: its fetches (up to MaxBatch, 1,000,000) ask for batches that
// fit in grpc-go's 4 MiB message. Before, the server sent a fetch's
// million IDs as one 8 MB batch, and the client failed after about
// 430,000 IDs with ResourceExhausted. Two fetches of the largest size show
// it (5,000,000 took 9 s under -race).
func TestFetchTwoMillion(t *testing.T) {
	s := &server{t: t, worker: 6, maxCount: 1_000_000}
	s.start()
	t.Cleanup(s.stop)
	ctx := context.Background()
	g, err := client.New(ctx, client.Config{Targets: []string{s.addr}, MinBatch: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	dst := make([]idgen.ID, 100_000)
	var last uint64
	for got := 0; got < 2_000_000; got += len(dst) {
		if n, err := g.NextN(ctx, dst); err != nil || n != len(dst) {
			t.Fatalf("NextN(%d) after %d IDs = %d, %v; want %d, nil", len(dst), got, n, err, len(dst))
		}
		for _, id := range dst {
			v, _ := id.Uint64()
			if v <= last {
				t.Fatalf("ID %d after %d; want increasing (one server)", v, last)
			}
			last = v
		}
	}
}

func TestNewBadConfig(t *testing.T) {
	if _, err := client.New(context.Background(), client.Config{}); !errors.Is(err, client.ErrConfig) {
		t.Errorf("New(no targets) = %v; want ErrConfig", err)
	}
}

// BenchmarkNext measures Next from the buffer: one goroutine; the timer
// stops while the buffer refills, so that the figure is the buffer's cost,
// not the server's rate.
func BenchmarkNext(b *testing.B) {
	a := startServer(b, 4, false)
	const block = 1 << 20
	g, err := client.New(context.Background(), client.Config{Targets: []string{a.addr}, MinBatch: block, MaxBatch: block})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	ctx := context.Background()
	left := block
	b.ResetTimer()
	for range b.N {
		if left == 0 {
			b.StopTimer()
			for g.Stats().Buffered < block {
				time.Sleep(time.Millisecond)
			}
			left = block
			b.StartTimer()
		}
		if _, err := g.Next(ctx); err != nil {
			b.Fatal(err)
		}
		left--
	}
}

// BenchmarkFetch takes IDs through a Generator as fast as it refills, over
// gRPC (packed bytes) and HTTP (text, at most 10,000 a request: httpapi's
// default max count), and reports IDs/s: what each transport delivers from
// one server on loopback. The server's Snowflake layout caps it at 4.096 M
// IDs/s.
func BenchmarkFetch(b *testing.B) {
	for _, tr := range transports {
		b.Run(tr.name, func(b *testing.B) {
			a := startServer(b, 11, tr.http)
			ctx := context.Background()
			g, err := client.New(ctx, client.Config{Targets: []string{a.target()}, MinBatch: 10_000, MaxBatch: 100_000})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			dst := make([]idgen.ID, 10_000)
			b.ResetTimer()
			for range b.N {
				if _, err := g.NextN(ctx, dst); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(dst))/b.Elapsed().Seconds(), "IDs/s")
		})
	}
}
