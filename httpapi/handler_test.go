package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

// fakeClock is a snowflake.Clock the test steps by hand. As a Sleeper it
// advances instead of blocking, so a used-up tick never hangs a test.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time       { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Step(d time.Duration) { c.ns.Add(int64(d)) }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.ns.Add(int64(d))
	return ctx.Err()
}

var twitter = func() snowflake.Layout { l, _ := snowflake.Preset("twitter"); return l }()

func newSnowflake(t testing.TB, clk snowflake.Clock, policy snowflake.Policy, nodes map[string]int64) *snowflake.Generator {
	t.Helper()
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: twitter, Nodes: nodes, Clock: clk, Rollback: policy})
	if err != nil {
		t.Fatalf("snowflake.New: %v", err)
	}
	return g
}

// serve starts a loopback server over a Handler of gens.
func serve(t testing.TB, gens map[string]idgen.Generator, opts httpapi.Options) (*httptest.Server, *httpapi.Handler) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h, err := httpapi.New(gens, opts)
	if err != nil {
		t.Fatalf("httpapi.New: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, h
}

type response struct {
	code   int
	header http.Header
	body   []byte
}

func do(t testing.TB, c *http.Client, method, url string, body io.Reader, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

func get(t testing.TB, url string, header ...string) response {
	t.Helper()
	return do(t, http.DefaultClient, http.MethodGet, url, nil, header...)
}

// decodeObject decodes a JSON object keeping numbers as json.Number.
func decodeObject(t testing.TB, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return m
}

func keys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// checkSnowflakeObject checks one ID object of the twitter layout against
// the layout's own Decompose and returns the ID's value.
func checkSnowflakeObject(t *testing.T, obj any) uint64 {
	t.Helper()
	o, ok := obj.(map[string]any)
	if !ok {
		t.Fatalf("ID entry %v is %T; want an object", obj, obj)
	}
	if got, want := keys(o), []string{"breakdown", "value_hex", "value_string"}; !slices.Equal(got, want) {
		t.Fatalf("ID object keys = %v; want %v", got, want)
	}
	s, ok := o["value_string"].(string)
	if !ok {
		t.Fatalf("value_string = %v (%T); want a JSON string", o["value_string"], o["value_string"])
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("value_string %q: %v", s, err)
	}
	hx, ok := o["value_hex"].(string)
	if !ok || len(hx) != 16 {
		t.Fatalf("value_hex = %v; want a string of 16 hex digits", o["value_hex"])
	}
	if want := fmt.Sprintf("%016x", v); hx != want {
		t.Errorf("value_hex = %q; want %q (value_string %s)", hx, want, s)
	}
	bd, ok := o["breakdown"].(map[string]any)
	if !ok {
		t.Fatalf("breakdown = %v (%T); want an object", o["breakdown"], o["breakdown"])
	}
	parts, err := twitter.Decompose(v)
	if err != nil {
		t.Fatalf("Decompose(%d): %v", v, err)
	}
	dc, _ := parts.Node("datacenter")
	wk, _ := parts.Node("worker")
	want := map[string]int64{
		"timestamp_ms":    parts.Time.UnixMilli(),
		"datacenter_id":   int64(dc),
		"worker_id":       int64(wk),
		"sequence_number": int64(parts.Sequence),
	}
	if got, wantKeys := keys(bd), slices.Sorted(maps.Keys(want)); !slices.Equal(got, wantKeys) {
		t.Fatalf("breakdown keys = %v; want %v", got, wantKeys)
	}
	for k, w := range want {
		n, ok := bd[k].(json.Number)
		if !ok {
			t.Fatalf("breakdown.%s = %v (%T); want a JSON number", k, bd[k], bd[k])
		}
		if got, err := n.Int64(); err != nil || got != w {
			t.Errorf("breakdown.%s of %d = %s; want %d", k, v, n, w)
		}
	}
	return v
}

func TestContract(t *testing.T) {
	clk := newFakeClock(time.Date(2026, 6, 1, 11, 7, 0, 0, time.UTC))
	g := newSnowflake(t, clk, snowflake.Fail, map[string]int64{"datacenter": 4, "worker": 18})
	srv, _ := serve(t, map[string]idgen.Generator{"orders": g}, httpapi.Options{})

	before := time.Now().UTC().Truncate(time.Second)
	r := get(t, srv.URL+"/api/v1/ids?count=5")
	after := time.Now().UTC()
	if r.code != http.StatusOK {
		t.Fatalf("GET /api/v1/ids?count=5 = %d %s; want 200", r.code, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q; want application/json", ct)
	}
	m := decodeObject(t, r.body)
	if got, want := keys(m), []string{"generated_at", "ids"}; !slices.Equal(got, want) {
		t.Fatalf("top-level keys = %v; want %v", got, want)
	}
	ga, ok := m["generated_at"].(string)
	if !ok || !strings.HasSuffix(ga, "Z") {
		t.Fatalf("generated_at = %v; want an RFC 3339 UTC string", m["generated_at"])
	}
	at, err := time.Parse(time.RFC3339, ga)
	if err != nil || at.Before(before) || at.After(after) {
		t.Errorf("generated_at = %q (%v); want RFC 3339 between %v and %v", ga, err, before, after)
	}
	ids, ok := m["ids"].([]any)
	if !ok || len(ids) != 5 {
		t.Fatalf("ids = %v; want an array of 5", m["ids"])
	}
	var prev uint64
	for i, obj := range ids {
		v := checkSnowflakeObject(t, obj)
		if i > 0 && v <= prev {
			t.Errorf("ids[%d] = %d after %d; want increasing", i, v, prev)
		}
		prev = v
		parts, _ := twitter.Decompose(v)
		if !parts.Time.Equal(clk.Now()) {
			t.Errorf("ids[%d] time = %v; want the clock's %v", i, parts.Time, clk.Now())
		}
	}

	// The named route answers the same generator; decoding gives back the object.
	r = get(t, srv.URL+"/api/v1/orders/ids")
	if r.code != http.StatusOK {
		t.Fatalf("GET /api/v1/orders/ids = %d %s; want 200", r.code, r.body)
	}
	obj := decodeObject(t, r.body)["ids"].([]any)[0]
	v := checkSnowflakeObject(t, obj)
	for _, path := range []string{"/api/v1/ids/", "/api/v1/orders/ids/"} {
		r = get(t, srv.URL+path+strconv.FormatUint(v, 10))
		if r.code != http.StatusOK {
			t.Fatalf("GET %s%d = %d %s; want 200", path, v, r.code, r.body)
		}
		dec := decodeObject(t, r.body)
		if got := checkSnowflakeObject(t, dec); got != v {
			t.Errorf("GET %s%d value_string = %d; want %d", path, v, got, v)
		}
		want, _ := json.Marshal(obj)
		got, _ := json.Marshal(dec)
		if !bytes.Equal(got, want) {
			t.Errorf("GET %s%d = %s; want %s", path, v, got, want)
		}
	}
}

// wideCodec is a 16-byte test scheme: 32 hex digits, fields hi and lo of
// 64 bits each, no time.
type wideCodec struct{}

func (wideCodec) AppendText(dst, b []byte) []byte { return hex.AppendEncode(dst, b) }
func (wideCodec) ParseText(b, text []byte) error {
	if len(text) != 32 {
		return fmt.Errorf("%w: %q is not 32 hex digits", idgen.ErrSyntax, text)
	}
	if _, err := hex.Decode(b, text); err != nil {
		return fmt.Errorf("%w: %q: %v", idgen.ErrSyntax, text, err)
	}
	return nil
}
func (wideCodec) Time([]byte) time.Time { return time.Time{} }
func (wideCodec) Decompose(b []byte) []idgen.Field {
	return []idgen.Field{
		{Name: "hi", Value: binary.BigEndian.Uint64(b[:8]), Bits: 64},
		{Name: "lo", Value: binary.BigEndian.Uint64(b[8:]), Bits: 64},
	}
}

var wideScheme = &idgen.Scheme{Name: "wide", Size: 16, Column: idgen.ColumnBytea, Codec: wideCodec{}}

// counterGen issues wide IDs 1, 2, 3, ... It is not a Batcher.
type counterGen struct{ n atomic.Uint64 }

func (g *counterGen) Scheme() *idgen.Scheme { return wideScheme }
func (g *counterGen) Next(context.Context) (idgen.ID, error) {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], 0xfedcba9876543210)
	binary.BigEndian.PutUint64(b[8:], g.n.Add(1))
	return wideScheme.FromBytes(b[:])
}

func TestContractWideScheme(t *testing.T) {
	srv, _ := serve(t, map[string]idgen.Generator{"wide": &counterGen{}}, httpapi.Options{})
	r := get(t, srv.URL+"/api/v1/ids?count=2")
	if r.code != http.StatusOK {
		t.Fatalf("GET = %d %s; want 200", r.code, r.body)
	}
	ids := decodeObject(t, r.body)["ids"].([]any)
	for i, obj := range ids {
		o := obj.(map[string]any)
		want := fmt.Sprintf("fedcba9876543210%016x", i+1)
		if o["value_string"] != want || o["value_hex"] != want {
			t.Errorf("ids[%d] value_string, value_hex = %v, %v; want %s for both", i, o["value_string"], o["value_hex"], want)
		}
		bd := o["breakdown"].(map[string]any)
		// 64-bit fields exceed a double's exact integers: strings.
		wantBD := map[string]any{"hi": strconv.FormatUint(0xfedcba9876543210, 10), "lo": strconv.Itoa(i + 1)}
		if !maps.Equal(bd, wantBD) {
			t.Errorf("ids[%d] breakdown = %v; want %v", i, bd, wantBD)
		}
	}
}

func TestText(t *testing.T) {
	g := newSnowflake(t, nil, snowflake.Fail, map[string]int64{"worker": 3})
	srv, _ := serve(t, map[string]idgen.Generator{"default": g, "other": &counterGen{}}, httpapi.Options{})
	tests := []struct {
		name   string
		path   string
		header []string
		count  int
	}{
		{"format=text", "/api/v1/ids?count=1000&format=text", nil, 1000},
		{"Accept text/plain", "/api/v1/default/ids?count=7", []string{"Accept", "text/plain"}, 7},
		{"Accept prefers text", "/api/v1/ids?count=3", []string{"Accept", "text/plain;q=0.9, application/json;q=0.8"}, 3},
		{"percent-encoded", "/api/v1/ids?%63ount=2&format=%74ext", nil, 2},
		{"max count", "/api/v1/ids?count=10000&format=text", nil, 10000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, srv.URL+tt.path, tt.header...)
			if r.code != http.StatusOK {
				t.Fatalf("GET %s = %d %s; want 200", tt.path, r.code, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type = %q; want text/plain; charset=utf-8", ct)
			}
			if !bytes.HasSuffix(r.body, []byte("\n")) {
				t.Fatalf("body does not end in a newline: %q", r.body)
			}
			lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
			if len(lines) != tt.count {
				t.Fatalf("GET %s gave %d lines; want %d", tt.path, len(lines), tt.count)
			}
			var prev idgen.ID
			for i, line := range lines {
				id, err := g.Scheme().Parse(line)
				if err != nil {
					t.Fatalf("line %d: Parse(%q) = %v", i, line, err)
				}
				if i > 0 && id.Compare(prev) <= 0 {
					t.Fatalf("line %d: %s after %s; want increasing", i, id, prev)
				}
				prev = id
			}
		})
	}
	t.Run("Accept json wins when first", func(t *testing.T) {
		r := get(t, srv.URL+"/api/v1/ids", "Accept", "application/json, text/plain")
		if ct := r.header.Get("Content-Type"); r.code != http.StatusOK || ct != "application/json" {
			t.Errorf("GET = %d %q; want 200 application/json", r.code, ct)
		}
	})
	t.Run("format=json beats Accept", func(t *testing.T) {
		r := get(t, srv.URL+"/api/v1/ids?format=json", "Accept", "text/plain")
		if ct := r.header.Get("Content-Type"); r.code != http.StatusOK || ct != "application/json" {
			t.Errorf("GET = %d %q; want 200 application/json", r.code, ct)
		}
	})
	t.Run("wide scheme", func(t *testing.T) {
		r := get(t, srv.URL+"/api/v1/other/ids?count=2&format=text")
		want := fmt.Sprintf("fedcba9876543210%016x\nfedcba9876543210%016x\n", 1, 2)
		if r.code != http.StatusOK || string(r.body) != want {
			t.Errorf("GET = %d %q; want 200 %q", r.code, r.body, want)
		}
	})
}

// checkError checks a JSON error answer.
func checkError(t *testing.T, r response, code int, contains string) {
	t.Helper()
	if r.code != code {
		t.Errorf("status = %d; want %d (body %s)", r.code, code, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q; want application/json", ct)
	}
	var e map[string]any
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body %q is not JSON: %v", r.body, err)
	}
	msg, ok := e["error"].(string)
	if len(e) != 1 || !ok || msg == "" {
		t.Fatalf("error body = %s; want {\"error\": \"...\"}", r.body)
	}
	if !strings.Contains(msg, contains) {
		t.Errorf("error = %q; want it to contain %q", msg, contains)
	}
}

func TestBadInput(t *testing.T) {
	g := newSnowflake(t, nil, snowflake.Fail, nil)
	srv, _ := serve(t, map[string]idgen.Generator{"default": g, "b": &counterGen{}}, httpapi.Options{})
	tests := []struct {
		name     string
		method   string
		path     string
		code     int
		contains string
	}{
		{"count=0", "GET", "/api/v1/ids?count=0", 400, "count 0 outside [1, 10000]"},
		{"count=-1", "GET", "/api/v1/ids?count=-1", 400, "count -1 outside [1, 10000]"},
		{"count=10001", "GET", "/api/v1/ids?count=10001", 400, "count 10001 outside [1, 10000]"},
		{"count huge", "GET", "/api/v1/ids?count=99999999999999999999999", 400, "outside [1, 10000]"},
		{"count=abc", "GET", "/api/v1/ids?count=abc", 400, `count "abc" is not an integer`},
		{"count=1.5", "GET", "/api/v1/ids?count=1.5", 400, `count "1.5" is not an integer`},
		{"count empty", "GET", "/api/v1/ids?count=", 400, "count is empty"},
		{"count twice", "GET", "/api/v1/ids?count=1&count=2", 400, "count given twice"},
		{"named count=0", "GET", "/api/v1/b/ids?count=0", 400, "count 0 outside"},
		{"format", "GET", "/api/v1/ids?format=xml", 400, `format "xml": want json or text`},
		{"unknown parameter", "GET", "/api/v1/ids?cout=5", 400, `unknown query parameter "cout"`},
		{"bad escape", "GET", "/api/v1/ids?count=%zz", 400, "percent-encoding"},
		{"unknown generator", "GET", "/api/v1/nope/ids", 404, `unknown generator "nope"; served: b, default`},
		{"unknown generator decode", "GET", "/api/v1/nope/ids/1", 404, `unknown generator "nope"`},
		{"unknown route", "GET", "/api/v2/ids", 404, "no route"},
		{"unknown sub-route", "GET", "/api/v1/b/things", 404, "no route"},
		{"decode extra segment", "GET", "/api/v1/ids/1/2", 404, "no route"},
		{"decode empty", "GET", "/api/v1/ids/", 404, "no route"},
		{"decode bad", "GET", "/api/v1/ids/12ab", 400, `"12ab" is not a snowflake ID`},
		{"decode too wide", "GET", "/api/v1/ids/18446744073709551615", 400, "exceeds the layout's 63 bits"},
		{"POST", "POST", "/api/v1/ids", 405, "method POST not allowed"},
		{"DELETE decode", "DELETE", "/api/v1/ids/1", 405, "method DELETE not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, http.DefaultClient, tt.method, srv.URL+tt.path, nil)
			checkError(t, r, tt.code, tt.contains)
		})
	}
}

func TestBodyIgnored(t *testing.T) {
	g := newSnowflake(t, nil, snowflake.Fail, nil)
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{})
	body := strings.NewReader(`count=50&format=text` + strings.Repeat("x", 100_000))
	r := do(t, http.DefaultClient, http.MethodGet, srv.URL+"/api/v1/ids?count=2", body, "Content-Type", "application/x-www-form-urlencoded")
	if r.code != http.StatusOK {
		t.Fatalf("GET with a body = %d %s; want 200", r.code, r.body)
	}
	if n := len(decodeObject(t, r.body)["ids"].([]any)); n != 2 {
		t.Errorf("GET ?count=2 with body count=50 gave %d IDs; want 2", n)
	}
}

func TestHead(t *testing.T) {
	g := newSnowflake(t, nil, snowflake.Fail, nil)
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{})
	r := do(t, http.DefaultClient, http.MethodHead, srv.URL+"/api/v1/ids", nil)
	if r.code != http.StatusOK || len(r.body) != 0 {
		t.Errorf("HEAD = %d with %d body bytes; want 200 and none", r.code, len(r.body))
	}
}

func TestUniqueAcrossClients(t *testing.T) {
	const clients, perClient = 8, 10_000
	g := newSnowflake(t, nil, snowflake.Fail, map[string]int64{"worker": 1})
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{})
	// Each client mixes single JSON IDs, JSON batches and text batches.
	batches := []struct {
		count int
		text  bool
	}{{1, false}, {1, true}, {250, false}, {997, true}}
	results := make([][]string, clients)
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			var got []string
			for i := 0; len(got) < perClient; i++ {
				b := batches[(c+i)%len(batches)]
				n := min(b.count, perClient-len(got))
				url := fmt.Sprintf("%s/api/v1/ids?count=%d", srv.URL, n)
				if b.text {
					url += "&format=text"
				}
				resp, err := client.Get(url)
				if err != nil {
					errs <- err
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("GET %s = %d %s %v", url, resp.StatusCode, body, err)
					return
				}
				before := len(got)
				if b.text {
					sc := bufio.NewScanner(bytes.NewReader(body))
					for sc.Scan() {
						got = append(got, sc.Text())
					}
				} else {
					var v struct {
						IDs []struct {
							ValueString string `json:"value_string"`
						} `json:"ids"`
					}
					if err := json.Unmarshal(body, &v); err != nil {
						errs <- err
						return
					}
					for _, id := range v.IDs {
						got = append(got, id.ValueString)
					}
				}
				if len(got)-before != n {
					errs <- fmt.Errorf("GET %s gave %d IDs; want %d", url, len(got)-before, n)
					return
				}
			}
			results[c] = got
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := make(map[string]int, clients*perClient)
	for c, ids := range results {
		if len(ids) != perClient {
			t.Fatalf("client %d got %d IDs; want %d", c, len(ids), perClient)
		}
		for _, id := range ids {
			if other, dup := seen[id]; dup {
				t.Fatalf("ID %s issued to client %d and client %d", id, other, c)
			}
			seen[id] = c
		}
	}
	if len(seen) != clients*perClient {
		t.Errorf("%d distinct IDs; want %d", len(seen), clients*perClient)
	}
}

// scrape returns the value of the metric line that starts with prefix
// (name and labels), or -1 when there is none.
func scrape(t *testing.T, url, prefix string) float64 {
	t.Helper()
	r := get(t, url+"/metrics")
	if r.code != http.StatusOK {
		t.Fatalf("GET /metrics = %d %s", r.code, r.body)
	}
	for line := range strings.Lines(string(r.body)) {
		if rest, ok := strings.CutPrefix(line, prefix+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("metric %s: %v", line, err)
			}
			return v
		}
	}
	return -1
}

func TestClockRollbackFail(t *testing.T) {
	clk := newFakeClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	g := newSnowflake(t, clk, snowflake.Fail, nil)
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{})

	seen := map[string]bool{}
	fetch := func(n int) []string {
		t.Helper()
		r := get(t, fmt.Sprintf("%s/api/v1/ids?count=%d&format=text", srv.URL, n))
		if r.code != http.StatusOK {
			t.Fatalf("GET = %d %s; want 200", r.code, r.body)
		}
		lines := strings.Fields(string(r.body))
		for _, id := range lines {
			if seen[id] {
				t.Fatalf("duplicate ID %s", id)
			}
			seen[id] = true
		}
		return lines
	}
	fetch(10)
	clk.Step(-5 * time.Millisecond) // NTP steps the clock back
	for _, path := range []string{"/api/v1/ids?count=1", "/api/v1/ids?count=100&format=text", "/api/v1/default/ids"} {
		r := get(t, srv.URL+path)
		checkError(t, r, http.StatusServiceUnavailable, "clock moved backwards by 5ms")
		if ra := r.header.Get("Retry-After"); ra != "1" {
			t.Errorf("GET %s Retry-After = %q; want 1", path, ra)
		}
	}
	if r := get(t, srv.URL+"/readyz"); r.code != http.StatusServiceUnavailable {
		t.Errorf("GET /readyz during the rollback = %d %s; want 503", r.code, r.body)
	}
	if got := scrape(t, srv.URL, `idgen_clock_rollback_failures_total{generator="default"}`); got < 3 {
		t.Errorf("idgen_clock_rollback_failures_total = %v; want at least 3", got)
	}
	if got := scrape(t, srv.URL, `idgen_issue_errors_total{generator="default",kind="clock_rollback"}`); got != 3 {
		t.Errorf("idgen_issue_errors_total{kind=clock_rollback} = %v; want 3", got)
	}
	clk.Step(6 * time.Millisecond) // past the last tick issued
	if r := get(t, srv.URL+"/readyz"); r.code != http.StatusOK {
		t.Errorf("GET /readyz after the clock caught up = %d %s; want 200", r.code, r.body)
	}
	fetch(5000) // spans ticks: the fake clock advances on each sequence wait
	if got := scrape(t, srv.URL, `idgen_ids_issued_total{generator="default"}`); got != 5010 {
		t.Errorf("idgen_ids_issued_total = %v; want 5010", got)
	}
}

// panicGen panics on every call.
type panicGen struct{}

func (panicGen) Scheme() *idgen.Scheme                  { return wideScheme }
func (panicGen) Next(context.Context) (idgen.ID, error) { panic("generator exploded") }

func TestPanicRecovered(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logs}, nil))
	g := newSnowflake(t, nil, snowflake.Fail, nil)
	srv, _ := serve(t, map[string]idgen.Generator{"default": g, "boom": panicGen{}}, httpapi.Options{Logger: logger})
	r := get(t, srv.URL+"/api/v1/boom/ids")
	checkError(t, r, http.StatusInternalServerError, "internal error")
	if strings.Contains(string(r.body), "exploded") {
		t.Errorf("500 body %s leaks the panic", r.body)
	}
	mu.Lock()
	logged := logs.String()
	mu.Unlock()
	if !strings.Contains(logged, "generator exploded") || !strings.Contains(logged, `"level":"ERROR"`) {
		t.Errorf("log = %s; want an ERROR record with the panic", logged)
	}
	if r := get(t, srv.URL+"/api/v1/ids"); r.code != http.StatusOK {
		t.Errorf("GET /api/v1/ids after a panic = %d %s; want 200", r.code, r.body)
	}
	if got := scrape(t, srv.URL, "idgen_http_panics_total"); got != 1 {
		t.Errorf("idgen_http_panics_total = %v; want 1", got)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// statGen is a generator with Stats (clock and segment counters) and a Readier.
type statGen struct {
	counterGen
	readyErr atomic.Pointer[error]
}

func (g *statGen) Ready(context.Context) error {
	if p := g.readyErr.Load(); p != nil {
		return *p
	}
	return nil
}
func (g *statGen) Stats() idgen.Stats {
	return idgen.Stats{Kinds: idgen.StatsClock | idgen.StatsSegment, ClockRollbackWaits: 7, ClockRollbackFailures: 2, SequenceWaits: 11,
		Remaining: 4242, Ahead: 1500 * time.Millisecond, Drift: -250 * time.Millisecond, ClockStalls: 3}
}

// failGen fails every issue with err.
type failGen struct{ err error }

func (g failGen) Scheme() *idgen.Scheme                  { return wideScheme }
func (g failGen) Next(context.Context) (idgen.ID, error) { return idgen.ID{}, g.err }

func TestIssueErrors(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		code     int
		contains string
	}{
		{"lease lost", fmt.Errorf("workerid: etcd: %w", idgen.ErrLeaseLost), 503, "worker ID lease lost"},
		{"store down", fmt.Errorf("segment: %w: dial tcp: refused", idgen.ErrUnavailable), 503, "store unavailable"},
		{"exhausted", fmt.Errorf("%w: the 28-bit time field ended at 2024-11-20T21:24:16Z", idgen.ErrLayoutExhausted), 503,
			"layout lifetime exhausted: the 28-bit time field ended at 2024-11-20T21:24:16Z"},
		{"before epoch", fmt.Errorf("%w: clock reads 2026-01-01T00:00:00Z, epoch is 2030-01-01T00:00:00Z", idgen.ErrBeforeEpoch), 503,
			"clock is before the epoch: clock reads 2026-01-01T00:00:00Z, epoch is 2030-01-01T00:00:00Z"},
		{"unknown", errors.New("secret: password=hunter2"), 500, "internal error issuing IDs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, map[string]idgen.Generator{"default": failGen{tt.err}}, httpapi.Options{})
			r := get(t, srv.URL+"/api/v1/ids?count=3")
			checkError(t, r, tt.code, tt.contains)
			if strings.Contains(string(r.body), "hunter2") {
				t.Errorf("body %s leaks the internal error", r.body)
			}
			if r := get(t, srv.URL+"/readyz"); r.code != http.StatusServiceUnavailable {
				t.Errorf("GET /readyz = %d; want 503", r.code)
			}
		})
	}
}

func TestReadyAndMetrics(t *testing.T) {
	sg := &statGen{}
	g := newSnowflake(t, nil, snowflake.Fail, nil)
	srv, _ := serve(t, map[string]idgen.Generator{"seg": sg, "sf": g}, httpapi.Options{Default: "sf"})

	if r := get(t, srv.URL+"/healthz"); r.code != http.StatusOK || string(r.body) != "{\"status\":\"ok\"}\n" {
		t.Errorf("GET /healthz = %d %q; want 200 {\"status\":\"ok\"}", r.code, r.body)
	}
	if r := get(t, srv.URL+"/readyz"); r.code != http.StatusOK {
		t.Errorf("GET /readyz = %d %s; want 200", r.code, r.body)
	}
	lost := fmt.Errorf("workerid: %w", idgen.ErrLeaseLost)
	sg.readyErr.Store(&lost)
	checkError(t, get(t, srv.URL+"/readyz"), http.StatusServiceUnavailable, `generator "seg" not ready: workerid: idgen: worker ID lease lost`)

	get(t, srv.URL+"/api/v1/ids?count=3")
	get(t, srv.URL+"/api/v1/seg/ids?count=2")
	get(t, srv.URL+"/api/v1/ids?count=0")
	tests := []struct {
		metric string
		want   float64
	}{
		{`idgen_ids_issued_total{generator="sf"}`, 3},
		{`idgen_ids_issued_total{generator="seg"}`, 2},
		{`idgen_clock_rollback_failures_total{generator="seg"}`, 2},
		{`idgen_clock_rollback_waits_total{generator="seg"}`, 7},
		{`idgen_sequence_exhaustion_waits_total{generator="seg"}`, 11},
		{`idgen_segment_ids_remaining{generator="seg"}`, 4242},
		{`idgen_clock_rollback_failures_total{generator="sf"}`, 0},
		{`idgen_clock_rollback_waits_total{generator="sf"}`, 0},
		{`idgen_sequence_exhaustion_waits_total{generator="sf"}`, 0},
		{`idgen_clock_ahead_seconds{generator="seg"}`, 1.5},
		{`idgen_clock_ahead_seconds{generator="sf"}`, 0},
		{`idgen_clock_drift_seconds{generator="seg"}`, -0.25},
		{`idgen_clock_stalls_total{generator="seg"}`, 3},
		{`idgen_clock_stalls_total{generator="sf"}`, 0},
		{`idgen_http_request_duration_seconds_count{code="200",route="ids"}`, 2},
		{`idgen_http_request_duration_seconds_count{code="400",route="ids"}`, 1},
		{`idgen_http_request_duration_seconds_count{code="503",route="readyz"}`, 1},
	}
	for _, tt := range tests {
		if got := scrape(t, srv.URL, tt.metric); got != tt.want {
			t.Errorf("%s = %v; want %v", tt.metric, got, tt.want)
		}
	}
}

func TestOpenAPI(t *testing.T) {
	srv, _ := serve(t, map[string]idgen.Generator{"default": &counterGen{}}, httpapi.Options{})
	r := get(t, srv.URL+"/api/v1/openapi.json")
	want, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if r.code != http.StatusOK || !bytes.Equal(r.body, want) {
		t.Fatalf("GET /api/v1/openapi.json = %d, %d bytes; want 200 and openapi.json (%d bytes)", r.code, len(r.body), len(want))
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi = %q; want 3.x", doc.OpenAPI)
	}
	for _, p := range []string{"/api/v1/ids", "/api/v1/ids/{id}", "/api/v1/{generator}/ids", "/api/v1/{generator}/ids/{id}",
		"/api/v1/generators", "/api/v1/openapi.json", "/healthz", "/readyz", "/metrics"} {
		if _, ok := doc.Paths[p]["get"]; !ok {
			t.Errorf("openapi.json has no GET %s", p)
		}
	}
}

func TestGenerators(t *testing.T) {
	g := newSnowflake(t, nil, snowflake.Fail, nil)
	srv, h := serve(t, map[string]idgen.Generator{"orders": g, "wide": &counterGen{}}, httpapi.Options{Default: "orders"})
	if h.Default() != "orders" || !slices.Equal(h.Names(), []string{"orders", "wide"}) {
		t.Errorf("Default, Names = %q, %v; want orders, [orders wide]", h.Default(), h.Names())
	}
	r := get(t, srv.URL+"/api/v1/generators")
	want := `{"default":"orders","generators":[` +
		`{"name":"orders","scheme":"snowflake","size":8,"time_ordered":true,"layout":"` + twitter.String() + `","path":"/api/v1/orders/ids"},` +
		`{"name":"wide","scheme":"wide","size":16,"time_ordered":false,"path":"/api/v1/wide/ids"}]}` + "\n"
	if r.code != http.StatusOK || string(r.body) != want {
		t.Errorf("GET /api/v1/generators = %d %s; want 200 %s", r.code, r.body, want)
	}
}

func TestNewErrors(t *testing.T) {
	g := &counterGen{}
	tests := []struct {
		name string
		gens map[string]idgen.Generator
		opts httpapi.Options
	}{
		{"none", nil, httpapi.Options{}},
		{"reserved name", map[string]idgen.Generator{"ids": g}, httpapi.Options{}},
		{"bad name", map[string]idgen.Generator{"a/b": g}, httpapi.Options{}},
		{"space", map[string]idgen.Generator{"my orders": g}, httpapi.Options{}},
		{"nil generator", map[string]idgen.Generator{"a": nil}, httpapi.Options{}},
		{"default missing", map[string]idgen.Generator{"a": g, "b": g}, httpapi.Options{}},
		{"default unknown", map[string]idgen.Generator{"a": g}, httpapi.Options{Default: "b"}},
		{"negative max", map[string]idgen.Generator{"a": g}, httpapi.Options{MaxCount: -1}},
		{"negative timeout", map[string]idgen.Generator{"a": g}, httpapi.Options{Timeout: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := httpapi.New(tt.gens, tt.opts); !errors.Is(err, httpapi.ErrConfig) {
				t.Errorf("New(%v, %+v) = %v; want ErrConfig", tt.gens, tt.opts, err)
			}
		})
	}
}

func TestMaxCountOption(t *testing.T) {
	srv, _ := serve(t, map[string]idgen.Generator{"default": &counterGen{}}, httpapi.Options{MaxCount: 5})
	checkError(t, get(t, srv.URL+"/api/v1/ids?count=6"), 400, "count 6 outside [1, 5]")
	if r := get(t, srv.URL+"/api/v1/ids?count=5&format=text"); r.code != 200 || strings.Count(string(r.body), "\n") != 5 {
		t.Errorf("GET count=5 = %d %q; want 200 with 5 lines", r.code, r.body)
	}
}

func TestTimeout(t *testing.T) {
	// Under the wait policy a rollback blocks until the clock catches up;
	// Options.Timeout bounds it.
	g, err := snowflake.New(context.Background(), snowflake.Config{Clock: &stuckClock{}, Rollback: snowflake.Wait})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{Timeout: 20 * time.Millisecond})
	if r := get(t, srv.URL+"/api/v1/ids"); r.code != 200 {
		t.Fatalf("first GET = %d %s; want 200", r.code, r.body)
	}
	checkError(t, get(t, srv.URL+"/api/v1/ids"), http.StatusServiceUnavailable, "context deadline exceeded")
}

// stuckClock reads 2026-06-01 once, then 1 s earlier forever, and sleeps
// in real time: a rollback the wait policy cannot wait out.
type stuckClock struct{ calls atomic.Int64 }

func (c *stuckClock) Now() time.Time {
	t := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	if c.calls.Add(1) > 1 {
		t = t.Add(-time.Second)
	}
	return t
}

// The breakdown of every kind of layout equals the layout's own Decompose:
// ticks other than 1 ms, sequence above the node field, a random field, a
// sub-ms tick and epoch.
func TestBreakdownLayouts(t *testing.T) {
	custom, err := snowflake.ParseLayout("time:40,region:3,worker:10,sequence:10;tick=500us;epoch=2026-01-01T00:00:00.0005Z")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		layout snowflake.Layout
		now    time.Time
		nodes  map[string]int64
	}{
		{"sonyflake", mustPreset(t, "sonyflake"), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), map[string]int64{"machine": 513}},
		{"discord", mustPreset(t, "discord"), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), map[string]int64{"worker": 3, "process": 30}},
		{"instagram", mustPreset(t, "instagram"), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), map[string]int64{"shard": 5000}},
		{"baidu", mustPreset(t, "baidu"), time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), map[string]int64{"worker": 1 << 21}},
		{"simpleflake", mustPreset(t, "simpleflake"), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), nil},
		{"sub-ms tick", custom, time.Date(2026, 6, 1, 0, 0, 0, 123456789, time.UTC), map[string]int64{"region": 5, "worker": 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := snowflake.New(context.Background(), snowflake.Config{Layout: tt.layout, Nodes: tt.nodes, Clock: newFakeClock(tt.now)})
			if err != nil {
				t.Fatal(err)
			}
			srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{})
			r := get(t, srv.URL+"/api/v1/ids?count=3")
			if r.code != http.StatusOK {
				t.Fatalf("GET = %d %s; want 200", r.code, r.body)
			}
			for _, obj := range decodeObject(t, r.body)["ids"].([]any) {
				o := obj.(map[string]any)
				v, err := strconv.ParseUint(o["value_string"].(string), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprintf("%016x", v); o["value_hex"] != want {
					t.Errorf("value_hex = %v; want %s", o["value_hex"], want)
				}
				parts, err := tt.layout.Decompose(v)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]any{"timestamp_ms": json.Number(strconv.FormatInt(parts.Time.UnixMilli(), 10))}
				for _, f := range tt.layout.Fields {
					switch f.Name {
					case snowflake.FieldTime:
					case snowflake.FieldSequence:
						want["sequence_number"] = json.Number(strconv.FormatUint(parts.Sequence, 10))
					case snowflake.FieldRandom:
						want["random"] = json.Number(strconv.FormatUint(parts.Random, 10))
					default:
						n, _ := parts.Node(f.Name)
						want[f.Name+"_id"] = json.Number(strconv.FormatUint(n, 10))
					}
				}
				if bd := o["breakdown"].(map[string]any); !maps.Equal(bd, want) {
					t.Errorf("breakdown of %d = %v; want %v", v, bd, want)
				}
			}
		})
	}
}

func mustPreset(t *testing.T, name string) snowflake.Layout {
	t.Helper()
	l, err := snowflake.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A Snowflake generator whose worker-ID lease is lost answers 503 and is
// not ready; once the lease is back it issues under the new worker ID.
func TestLeaseLost(t *testing.T) {
	lease := &idgentest.Lease{}
	lease.Set(&idgen.Identity{WorkerID: 3, DatacenterID: 1, Generation: 1})
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: twitter, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{})
	workerOf := func() json.Number {
		t.Helper()
		r := get(t, srv.URL+"/api/v1/ids")
		if r.code != http.StatusOK {
			t.Fatalf("GET = %d %s; want 200", r.code, r.body)
		}
		return decodeObject(t, r.body)["ids"].([]any)[0].(map[string]any)["breakdown"].(map[string]any)["worker_id"].(json.Number)
	}
	if w := workerOf(); w != "3" {
		t.Errorf("worker_id = %s; want 3", w)
	}
	lease.Set(nil)
	checkError(t, get(t, srv.URL+"/api/v1/ids?count=10"), http.StatusServiceUnavailable, "worker ID lease lost")
	checkError(t, get(t, srv.URL+"/readyz"), http.StatusServiceUnavailable, "worker ID lease lost")
	if got := scrape(t, srv.URL, `idgen_issue_errors_total{generator="default",kind="lease_lost"}`); got != 1 {
		t.Errorf("idgen_issue_errors_total{kind=lease_lost} = %v; want 1", got)
	}
	lease.Set(&idgen.Identity{WorkerID: 9, DatacenterID: 1, Generation: 2})
	if r := get(t, srv.URL+"/readyz"); r.code != http.StatusOK {
		t.Errorf("GET /readyz after the lease is back = %d %s; want 200", r.code, r.body)
	}
	if w := workerOf(); w != "9" {
		t.Errorf("worker_id after reacquiring = %s; want 9", w)
	}
}

// TestReadyDetails: /readyz gives each generator's clock drift and ahead,
// in seconds, for the generators that report them.
func TestReadyDetails(t *testing.T) {
	srv, _ := serve(t, map[string]idgen.Generator{"a": &statGen{}, "b": failGen{}}, httpapi.Options{Default: "a"})
	r := get(t, srv.URL+"/readyz")
	want := `{"status":"ready","generators":{"a":{"clock_drift_seconds":-0.25,"clock_ahead_seconds":1.5}}}` + "\n"
	if r.code != http.StatusOK || string(r.body) != want {
		t.Fatalf("GET /readyz = %d %s; want 200 %s", r.code, r.body, want)
	}
}
