package httpapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/snowflake"
)

// discardWriter is a ResponseWriter that keeps nothing, so that the
// in-process benchmarks measure the handler alone.
type discardWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
func (w *discardWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

func benchHandler(b *testing.B, opts ...httpapi.Options) *httpapi.Handler {
	b.Helper()
	var o httpapi.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Logger = slog.New(slog.DiscardHandler)
	g, err := snowflake.New(b.Context(), snowflake.Config{Layout: twitter, Nodes: map[string]int64{"worker": 1}})
	if err != nil {
		b.Fatal(err)
	}
	h, err := httpapi.New(map[string]idgen.Generator{"default": g}, o)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkHandler measures ServeHTTP in process, without a network.
func BenchmarkHandler(b *testing.B) {
	for _, bm := range []struct {
		name    string
		url     string
		count   int
		timeout time.Duration
	}{
		{"json/count=1", "/api/v1/ids", 1, 0},
		{"json/count=1/timeout=1s", "/api/v1/ids", 1, time.Second},
		{"json/count=1000", "/api/v1/ids?count=1000", 1000, 0},
		{"text/count=1000", "/api/v1/ids?count=1000&format=text", 1000, 0},
		{"decode", "/api/v1/ids/2123931401576411136", 0, 0},
	} {
		b.Run(bm.name, func(b *testing.B) {
			h := benchHandler(b, httpapi.Options{Timeout: bm.timeout})
			req := httptest.NewRequest(http.MethodGet, bm.url, nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
			if w.code != http.StatusOK {
				b.Fatalf("status %d", w.code)
			}
			if bm.count > 0 {
				b.ReportMetric(float64(bm.count)*float64(b.N)/b.Elapsed().Seconds(), "ids/s")
			}
		})
	}
}

// BenchmarkLoopback drives a real server over loopback with a minimal
// HTTP/1.1 keep-alive client (one per connection, so that the client costs
// little of the 2 cores), reporting requests/s, IDs/s and latency
// percentiles. "baseline" is a handler that writes a fixed 200-byte body:
// the ceiling of net/http on this machine, against which "json/count=1"
// compares. Run it alone, with -benchtime long enough for stable numbers:
//
//	go test -run '^$' -bench Loopback -benchtime 200000x ./httpapi/
func BenchmarkLoopback(b *testing.B) {
	fixed := bytes.Repeat([]byte("x"), 200)
	baseline := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Content-Type"] = []string{"application/json"}
		w.Write(fixed)
	})
	for _, bm := range []struct {
		name  string
		path  string
		count int
		conns int
	}{
		{"baseline/conns=16", "/", 0, 16},
		{"json/count=1/conns=16", "/api/v1/ids", 1, 16},
		{"text/count=1000/conns=4", "/api/v1/ids?count=1000&format=text", 1000, 4},
	} {
		b.Run(bm.name, func(b *testing.B) {
			var h http.Handler = baseline
			if bm.count > 0 {
				h = benchHandler(b)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			lat := loadRun(b, srv.Listener.Addr().String(), bm.path, bm.conns, b.N)
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/sec, "req/s")
			if bm.count > 0 {
				b.ReportMetric(float64(b.N*bm.count)/sec, "ids/s")
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// loadRun sends n GET requests for path over conns keep-alive connections
// and returns each request's latency.
func loadRun(b *testing.B, addr, path string, conns, n int) []time.Duration {
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: bench\r\n\r\n")
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	b.ResetTimer()
	for c := range conns {
		lo, hi := n*c/conns, n*(c+1)/conns
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			r := bufio.NewReaderSize(conn, 64<<10)
			for i := lo; i < hi; i++ {
				start := time.Now()
				if _, err := conn.Write(req); err != nil {
					errs <- err
					return
				}
				if err := readResponse(r); err != nil {
					errs <- err
					return
				}
				lat[i] = time.Since(start)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return lat
}

// readResponse reads one HTTP/1.1 response with a Content-Length and
// discards its body; any status but 200 is an error.
func readResponse(r *bufio.Reader) error {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("status line %q", line)
	}
	length := -1
	for {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			length, err = strconv.Atoi(string(bytes.TrimSpace(v)))
			if err != nil {
				return err
			}
		}
	}
	if length < 0 {
		return fmt.Errorf("response without Content-Length")
	}
	_, err = r.Discard(length)
	return err
}

var _ io.Writer = (*discardWriter)(nil)

// BenchmarkStream measures one streamed response of a million Snowflake
// IDs over loopback, the client discarding the body: the write rate
// MinWriteRate is set from (see its doc).
//
//	go test -run '^$' -bench Stream -benchtime 5x ./httpapi/
func BenchmarkStream(b *testing.B) {
	const count = 1_000_000
	for _, format := range []string{"json", "text"} {
		b.Run(format, func(b *testing.B) {
			h := benchHandler(b, httpapi.Options{MaxCount: count})
			srv := httptest.NewServer(h)
			defer srv.Close()
			url := srv.URL + "/api/v1/ids?count=" + strconv.Itoa(count) + "&format=" + format
			var bytes int64
			for b.Loop() {
				resp, err := http.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("GET count=%d: %d, %v", count, resp.StatusCode, err)
				}
				bytes += n
			}
			b.ReportMetric(float64(bytes)/b.Elapsed().Seconds()/(1<<20), "MiB/s")
			b.ReportMetric(float64(count)*float64(b.N)/b.Elapsed().Seconds(), "ids/s")
			b.ReportMetric(float64(bytes)/float64(count)/float64(b.N), "bytes/id")
		})
	}
}
