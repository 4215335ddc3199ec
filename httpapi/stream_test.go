package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/snowflake"
)

// scanJSONIDs reads a JSON /ids body as it streams, with a buffer of 64 KB,
// and appends each value_string to out. It returns the values and the
// bytes after the last value's closing quote, for the caller to check how
// the document ends. Each Read is followed by pause, so that the client
// reads at a pace of its own.
func scanJSONIDs(r io.Reader, out []uint64, pause time.Duration) ([]uint64, string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	// Split at '"': `value_string"` then `:"` then the value and its quote.
	var prev, prev2 []byte
	prev = make([]byte, 0, 64)
	prev2 = make([]byte, 0, 64)
	var tail bytes.Buffer
	reads := 0
	for {
		tok, err := br.ReadSlice('"')
		if errors.Is(err, bufio.ErrBufferFull) {
			return out, "", errors.New("a token longer than 64 KB")
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				tail.Write(tok)
				return out, tail.String(), nil
			}
			return out, "", err
		}
		if string(prev2) == `value_string"` && string(prev) == `:"` {
			v, perr := strconv.ParseUint(string(tok[:len(tok)-1]), 10, 64)
			if perr != nil {
				return out, "", perr
			}
			out = append(out, v)
			tail.Reset()
		} else {
			tail.Write(tok)
		}
		prev2, prev = append(prev2[:0], prev...), append(prev[:0], tok...)
		if reads++; pause > 0 && reads%(1<<14) == 0 { // about every 1,000 IDs

			time.Sleep(pause)
		}
	}
}

// count=200,000 with MaxCount raised: the body is complete (every ID,
// increasing, then generated_at), chunked, and the server's memory does
// not grow with the count. The server's WriteTimeout (3 s) is shorter than
// the whole response takes to read at the client's pace (a pause of 20 ms
// every 1,000 IDs or so: 200 pauses, at least 4 s on any machine): it
// applies to each chunk's write (about 170 KB, some 20-80 ms of reading),
// not to the response. The margin per chunk: with a 1 s WriteTimeout, one
// chunk's read took over 1 s once at load 30 on 2 cores under -race (the
// transfer was cut after 155,349 IDs, 9.1 s in); 3 s is 40× the slowest
// chunk seen otherwise. (A million IDs with 1 ms pauses showed the same in
// 25 s under -race.)
//
// Heap bound: the test process's heap objects (server and client) may
// grow by at most 16 MiB while the response streams. Streamed, a request
// holds ChunkIDs IDs and their JSON, about 0.2 MB, and the client's reader
// 64 KB; the Go runtime's 4 MB minimum heap goal and a GC cycle's garbage
// make the rest of the margin. Issued whole, as before, the 200,000 IDs
// (5 MB) and their JSON (33 MB) were held at once.
func TestStreamLarge(t *testing.T) {
	const count = 200_000
	g := newSnowflake(t, newFakeClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)), snowflake.Fail, map[string]int64{"datacenter": 1, "worker": 2})
	h, err := httpapi.New(map[string]idgen.Generator{"default": g}, httpapi.Options{
		MaxCount: count, WriteTimeout: 3 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.WriteTimeout = 3 * time.Second
	srv.Start()
	defer srv.Close()

	ids := make([]uint64, 0, count) // before the baseline: 8 MB the client needs
	stop := testenv.HeapGrowth()
	resp, err := http.Get(srv.URL + "/api/v1/ids?count=" + strconv.Itoa(count))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	ids, tail, err := scanJSONIDs(resp.Body, ids, 20*time.Millisecond)
	took := time.Since(start)
	growth := stop()
	if err != nil {
		t.Fatalf("reading the body after %d IDs (%v): %v; want the whole body", len(ids), took, err)
	}
	if resp.StatusCode != http.StatusOK || resp.ContentLength != -1 || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Errorf("status %d, Content-Length %d, Transfer-Encoding %v; want 200, chunked", resp.StatusCode, resp.ContentLength, resp.TransferEncoding)
	}
	if len(ids) != count {
		t.Fatalf("body holds %d IDs; want %d", len(ids), count)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("ID #%d %d not above #%d %d", i, ids[i], i-1, ids[i-1])
		}
	}
	if !strings.HasPrefix(tail, `,"value_hex":"`) || !strings.Contains(tail, `],"generated_at":"`) || !strings.HasSuffix(tail, "Z\"}\n") {
		t.Errorf("body ends %q; want the last ID's breakdown, then generated_at", tail)
	}
	t.Logf("%d IDs in %v; heap objects peaked %.1f MB above where they were before the request", count, took, float64(growth)/1e6)
	if growth > 16<<20 {
		t.Errorf("heap grew by %.1f MB serving count=%d; want at most 16 MiB", float64(growth)/1e6, count)
	}
}

// failAfter issues from a Snowflake generator until n IDs are out, then
// fails with ErrUnavailable: a store that goes down mid-response.
type failAfter struct {
	*snowflake.Generator
	left atomic.Int64
}

func (g *failAfter) NextN(ctx context.Context, dst []idgen.ID) (int, error) {
	if g.left.Add(-int64(len(dst))) < 0 {
		return 0, idgen.ErrUnavailable
	}
	return g.Generator.NextN(ctx, dst)
}

// A generator that fails after the status line is out: the response ends
// without its last chunk, so the client's read fails (unexpected EOF)
// rather than a short body passing for a whole one, in both formats; the
// cut is counted. A failure in the first chunk is still a 503.
func TestStreamCut(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			g := &failAfter{Generator: newSnowflake(t, newFakeClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)), snowflake.Fail, map[string]int64{"worker": 3})}
			g.left.Store(3 * httpapi.ChunkIDs)
			reg := prometheus.NewRegistry()
			srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{MaxCount: 10 * httpapi.ChunkIDs, Registry: reg})
			resp, err := http.Get(srv.URL + "/api/v1/ids?format=" + format + "&count=" + strconv.Itoa(10*httpapi.ChunkIDs))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("GET with the generator failing after 3 chunks = %d, %d bytes, %v; want 200 and a cut transfer (unexpected EOF)", resp.StatusCode, len(body), err)
			}
			if got := testutil.ToFloat64(collectorOf(t, reg, "idgen_http_responses_cut_total")); got != 1 {
				t.Errorf("idgen_http_responses_cut_total = %v; want 1", got)
			}
			g.left.Store(0)
			checkError(t, get(t, srv.URL+"/api/v1/ids?count="+strconv.Itoa(2*httpapi.ChunkIDs)), http.StatusServiceUnavailable, "unavailable")
		})
	}
}

// collectorOf returns the registry's metric name as a collector for
// testutil.ToFloat64.
func collectorOf(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: name}, func() float64 {
				m := mf.GetMetric()[0]
				if c := m.GetCounter(); c != nil {
					return c.GetValue()
				}
				return m.GetGauge().GetValue()
			})
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

// HTTP/1.0 has no chunked transfer: a count that would stream is refused
// with 505, since a cut response would end as a whole one does.
func TestStreamHTTP10(t *testing.T) {
	g := newSnowflake(t, newFakeClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)), snowflake.Fail, map[string]int64{"worker": 4})
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{MaxCount: 5000})
	for _, tc := range []struct {
		count int
		code  int
	}{{httpapi.ChunkIDs, 200}, {httpapi.ChunkIDs + 1, 505}} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET /api/v1/ids?format=text&count="+strconv.Itoa(tc.count)+" HTTP/1.0\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("HTTP/1.0 GET count=%d = %d %.80s; want %d", tc.count, resp.StatusCode, body, tc.code)
		}
	}
}

// blockAfter issues from a Snowflake generator until n IDs are out, then
// waits for its context: a store that stops answering mid-response.
type blockAfter struct {
	*snowflake.Generator
	left atomic.Int64
}

func (g *blockAfter) NextN(ctx context.Context, dst []idgen.ID) (int, error) {
	if g.left.Add(-int64(len(dst))) < 0 {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return g.Generator.NextN(ctx, dst)
}

// Options.Timeout holds for a streamed response too: a chunk whose IDs do
// not come within what the earlier chunks left of it ends the transfer cut
// (the request's own context would have waited for as long as the client).
func TestStreamTimeout(t *testing.T) {
	g := &blockAfter{Generator: newSnowflake(t, newFakeClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)), snowflake.Fail, map[string]int64{"worker": 5})}
	g.left.Store(2 * httpapi.ChunkIDs)
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{MaxCount: 10 * httpapi.ChunkIDs, Timeout: 50 * time.Millisecond})
	c := &http.Client{Timeout: 30 * time.Second} // the bound of a hang, not of the test's expectation
	resp, err := c.Get(srv.URL + "/api/v1/ids?format=text&count=" + strconv.Itoa(5*httpapi.ChunkIDs))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !errors.Is(err, io.ErrUnexpectedEOF) || strings.Count(string(body), "\n") != 2*httpapi.ChunkIDs {
		t.Fatalf("GET with the third chunk blocked = %d, %d lines, %v; want 200, the first 2 chunks, then a cut transfer", resp.StatusCode, strings.Count(string(body), "\n"), err)
	}
}
