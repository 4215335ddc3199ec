package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// A layout whose lifetime ends while the server runs answers 503 with the
// reason, and no Retry-After: waiting does not help.
func TestLayoutExpiresWhileServing(t *testing.T) {
	clk := idgentest.NewClock(twitter.End().Add(-time.Second))
	g := newSnowflake(t, clk, snowflake.Fail, nil)
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{})
	if r := get(t, srv.URL+"/api/v1/ids?count=3"); r.code != http.StatusOK {
		t.Fatalf("GET before the end = %d %s; want 200", r.code, r.body)
	}
	clk.Add(2 * time.Second)
	r := get(t, srv.URL+"/api/v1/ids?count=3")
	checkError(t, r, http.StatusServiceUnavailable, "layout lifetime exhausted: the 41-bit time field ended at "+twitter.End().Format(time.RFC3339))
	if ra := r.header.Get("Retry-After"); ra != "" {
		t.Errorf("Retry-After = %q; want none for an expired layout", ra)
	}
	checkError(t, get(t, srv.URL+"/readyz"), http.StatusServiceUnavailable, "layout lifetime exhausted")
}

// HEAD answers the headers a GET would and issues nothing.
func TestHeadIssuesNothing(t *testing.T) {
	g := &counterGen{}
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{})
	tests := []struct {
		name string
		path string
		code int
		ct   string
	}{
		{"json", "/api/v1/ids?count=10000", 200, "application/json"},
		{"text", "/api/v1/ids?count=10000&format=text", 200, "text/plain; charset=utf-8"},
		{"named", "/api/v1/default/ids?count=10000", 200, "application/json"},
		{"bad count", "/api/v1/ids?count=10001", 400, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, http.DefaultClient, http.MethodHead, srv.URL+tt.path, nil)
			if r.code != tt.code || r.header.Get("Content-Type") != tt.ct || len(r.body) != 0 {
				t.Errorf("HEAD %s = %d, Content-Type %q, %d body bytes; want %d, %q, none",
					tt.path, r.code, r.header.Get("Content-Type"), len(r.body), tt.code, tt.ct)
			}
			if n := g.n.Load(); n != 0 {
				t.Errorf("HEAD %s issued %d IDs; want 0", tt.path, n)
			}
		})
	}
	// A generator that cannot issue: HEAD says so, as GET would.
	sg := &statGen{}
	lost := error(idgen.ErrLeaseLost)
	sg.readyErr.Store(&lost)
	srv, _ = serve(t, map[string]idgen.Generator{"default": sg}, httpapi.Options{})
	if r := do(t, http.DefaultClient, http.MethodHead, srv.URL+"/api/v1/ids", nil); r.code != http.StatusServiceUnavailable {
		t.Errorf("HEAD of a generator that is not ready = %d; want 503", r.code)
	}
}

// The decode endpoint of a UUID scheme refuses a UUID of another version.
func TestDecodeUUIDVersion(t *testing.T) {
	v4, v7 := strategies.NewUUIDv4(), strategies.NewUUIDv7()
	srv, _ := serve(t, map[string]idgen.Generator{"v4": v4, "v7": v7}, httpapi.Options{Default: "v7"})
	const (
		aV4 = "6f1c2a3b-4d5e-4f60-8a7b-8c9d0e1f2a3b"
		aV7 = "019a7b3c-1d2e-7f30-8a41-52b6c7d8e9f0"
		aV1 = "6f1c2a3b-4d5e-1f60-8a7b-8c9d0e1f2a3b"
	)
	tests := []struct {
		name     string
		path     string
		code     int
		contains string
	}{
		{"v7 of v7", "/api/v1/ids/" + aV7, 200, ""},
		{"v4 of v4", "/api/v1/v4/ids/" + aV4, 200, ""},
		{"v4 of v7", "/api/v1/ids/" + aV4, 400, `"` + aV4 + `" is a version 4 UUID; generator "v7" issues version 7`},
		{"v1 of v7", "/api/v1/v7/ids/" + aV1, 400, "is a version 1 UUID; generator \"v7\" issues version 7"},
		{"v7 of v4", "/api/v1/v4/ids/" + aV7, 400, "is a version 7 UUID; generator \"v4\" issues version 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, srv.URL+tt.path)
			if tt.code == 200 {
				if r.code != 200 {
					t.Errorf("GET %s = %d %s; want 200", tt.path, r.code, r.body)
				}
				return
			}
			checkError(t, r, tt.code, tt.contains)
		})
	}
}

// openapi.json states the count limit in force.
func TestOpenAPIMaxCount(t *testing.T) {
	srv, _ := serve(t, map[string]idgen.Generator{"default": &counterGen{}}, httpapi.Options{MaxCount: 50})
	r := get(t, srv.URL+"/api/v1/openapi.json")
	var doc struct {
		Components struct {
			Parameters map[string]struct {
				Schema struct {
					Maximum int `json:"maximum"`
				} `json:"schema"`
			} `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("GET /api/v1/openapi.json = %d: %v", r.code, err)
	}
	if got := doc.Components.Parameters["count"].Schema.Maximum; r.code != 200 || got != 50 {
		t.Errorf("openapi.json count maximum under MaxCount 50 = %d (status %d); want 50", got, r.code)
	}
}

// Inputs of 10,000 characters are echoed cut to about 64, in the error
// answer and in the log.
func TestLongInputsCut(t *testing.T) {
	var (
		mu   sync.Mutex
		logs bytes.Buffer
	)
	log := slog.New(slog.NewJSONHandler(lockedWriter{mu: &mu, w: &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g := newSnowflake(t, nil, snowflake.Fail, nil)
	srv, _ := serve(t, map[string]idgen.Generator{"default": g, "u": strategies.NewUUIDv7()}, httpapi.Options{Logger: log})
	long := strings.Repeat("x", 10_000)
	digits := strings.Repeat("7", 10_000)
	tests := []struct {
		name     string
		path     string
		code     int
		contains string
	}{
		{"generator", "/api/v1/" + long + "/ids", 404, `unknown generator "xxxxxxxx`},
		{"route", "/api/v2/" + long, 404, `no route "/api/v2/xxxxxxxx`},
		{"sub-route", "/api/v1/u/" + long, 404, `no route "/api/v1/u/xxxxxxxx`},
		{"decode snowflake", "/api/v1/ids/" + digits, 400, `"77777777`},
		{"decode text", "/api/v1/ids/" + long, 400, `"xxxxxxxx`},
		{"decode uuid", "/api/v1/u/ids/" + long, 400, `"` + long[:64] + `…" is not a uuidv7 ID of generator "u": idgen: invalid ID syntax: it is not a 36-char UUID`},
		{"count", "/api/v1/ids?count=" + long, 400, `count "xxxxxxxx`},
		{"count digits", "/api/v1/ids?count=" + digits, 400, "count 77777777"},
		{"format", "/api/v1/ids?format=" + long, 400, `format "xxxxxxxx`},
		{"parameter", "/api/v1/ids?" + long + "=1", 400, `unknown query parameter "xxxxxxxx`},
		{"escape", "/api/v1/ids?count=%zz" + long, 400, "percent-encoding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, srv.URL+tt.path)
			checkError(t, r, tt.code, tt.contains)
			for _, run := range []string{long[:65], digits[:65]} {
				if bytes.Contains(r.body, []byte(run)) {
					t.Errorf("GET %.40s... = %d, %d bytes; want the input cut to about 64 characters", tt.path, r.code, len(r.body))
				}
			}
		})
	}
	srv.Close() // every request's log record is written
	mu.Lock()
	defer mu.Unlock()
	for _, run := range []string{long[:65], digits[:65]} {
		if i := bytes.Index(logs.Bytes(), []byte(run)); i >= 0 {
			t.Errorf("the log holds an input of more than 64 characters: %.200s", logs.Bytes()[max(0, i-100):])
		}
	}
	_, err := httpapi.New(map[string]idgen.Generator{long: &counterGen{}}, httpapi.Options{})
	if !errors.Is(err, httpapi.ErrConfig) || strings.Contains(err.Error(), long[:65]) {
		t.Errorf("New with a 10,000-character name = %.200v; want ErrConfig with the name cut", err)
	}
}
