package httpapi

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/errclass"
	"github.com/idgenkit/idgen/internal/serving"
)

// DefaultMaxCount is the largest count a request may ask for when
// Options.MaxCount is zero.
const DefaultMaxCount = serving.DefaultMaxCount

// DefaultName is the name of the default generator when Options.Default is
// empty and there is more than one generator.
const DefaultName = serving.DefaultName

// DefaultReadyTimeout bounds a readiness check when Options.ReadyTimeout is zero.
const DefaultReadyTimeout = time.Second

// A Readier is a Generator that can tell whether it is able to issue IDs
// now: a worker-ID lease held, a segment buffer or store within reach. /readyz
// calls Ready on every generator that implements it; a generator that does
// not is probed with one call to Next, whose ID is discarded. Ready returns
// nil when the generator can issue, else an error saying why not.
type Readier interface {
	Ready(ctx context.Context) error
}

// Options configures a Handler. Every field's zero value is usable.
type Options struct {
	// Default names the generator served at /api/v1/ids. Empty means the
	// only generator when there is one, else DefaultName.
	Default string
	// MaxCount is the largest count a request may ask for. Zero means
	// DefaultMaxCount (10,000).
	MaxCount int
	// Timeout bounds how long a request may wait for its IDs (a sequence
	// exhausted, a clock rollback under the wait policy, a store round
	// trip); past it the request gets 503. Zero means no bound but the
	// request's own context, which ends when the client goes away.
	Timeout time.Duration
	// WriteTimeout is the WriteTimeout of the http.Server that serves the
	// Handler. A streamed response (a count above ChunkIDs) moves its write
	// deadline to WriteTimeout from now before each chunk it writes, so that
	// the time allowed follows the count: each chunk of ChunkIDs IDs must be
	// written within WriteTimeout, not the whole response. Zero means the
	// deadline is left as the server set it (a server without a write
	// timeout, or one whose largest response fits in its timeout).
	WriteTimeout time.Duration
	// ReadyTimeout bounds each readiness check of /readyz. Zero means
	// DefaultReadyTimeout (1 s).
	ReadyTimeout time.Duration
	// Logger receives panics and 5xx errors, and one record per request at
	// slog.LevelDebug. Nil means slog.Default().
	Logger *slog.Logger
	// Registry is where the handler registers its metrics, served at
	// /metrics; one Handler per registry, or New fails on the duplicate
	// metrics. Nil means a new registry holding the handler's metrics and
	// the Go and process collectors.
	Registry *prometheus.Registry
}

// ErrConfig reports Options or a generator set that New refuses; the
// wrapping error names the field at fault.
var ErrConfig = errclass.Invalid("httpapi: invalid configuration")

// A Handler serves generators over HTTP; see the package documentation for
// the routes. It is safe for concurrent use.
type Handler struct {
	set      *serving.Set
	draining atomic.Bool // Shutdown was called: /readyz answers 503
	gens     map[string]*genRoute
	names    []string // sorted
	def      *genRoute
	maxCount int
	timeout  time.Duration
	writeTO  time.Duration
	readyTO  time.Duration
	log      *slog.Logger
	metrics  *metrics
	promh    http.Handler
	openAPI  []byte                    // openapi.json with the limits in force
	pool     sync.Pool                 // *reqState
	stamps   atomic.Pointer[stampText] // the latest second's end of a JSON answer
}

var _ http.Handler = (*Handler)(nil)

// genRoute is one generator served under a name.
type genRoute struct {
	name   string
	gen    idgen.Generator
	scheme *idgen.Scheme
	enc    *idEncoder

	issued           atomic.Uint64  // IDs sent to clients
	rollbackFailures *atomic.Uint64 // requests failed with a clock rollback: serving.Collector's
	errs             [numErrKinds]atomic.Uint64
}

// New returns a Handler serving gens by name. The map must hold at least
// one generator; names match [A-Za-z0-9][A-Za-z0-9_.-]* (at most 64 characters)
// and must not be "ids", "generators" or "openapi.json", the rule package
// grpcapi applies too. Errors wrap ErrConfig.
func New(gens map[string]idgen.Generator, opts Options) (*Handler, error) {
	if opts.ReadyTimeout < 0 || opts.WriteTimeout < 0 || opts.Timeout < 0 {
		return nil, fmt.Errorf("%w: Timeout %v, ReadyTimeout %v and WriteTimeout %v must not be negative", ErrConfig, opts.Timeout, opts.ReadyTimeout, opts.WriteTimeout)
	}
	set, err := serving.NewSet(gens, serving.Config{Default: opts.Default, MaxCount: opts.MaxCount, Timeout: opts.Timeout})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	h := &Handler{
		set:      set,
		gens:     make(map[string]*genRoute, len(gens)),
		maxCount: set.MaxCount(),
		timeout:  set.Timeout(),
		writeTO:  opts.WriteTimeout,
		readyTO:  cmp.Or(opts.ReadyTimeout, DefaultReadyTimeout),
		log:      cmp.Or(opts.Logger, slog.Default()),
	}
	for _, g := range set.Gens() {
		h.gens[g.Name] = &genRoute{name: g.Name, gen: g.Gen, scheme: g.Scheme, enc: encoderFor(g.Scheme)}
	}
	h.names = set.Names()
	h.def = h.gens[set.Default()]
	reg := opts.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := newMetrics(h)
	if err := m.register(reg, gens); err != nil {
		return nil, fmt.Errorf("%w: registering metrics: %w", ErrConfig, err)
	}
	h.metrics = m
	h.promh = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(h.log.Handler(), slog.LevelError)})
	h.openAPI = openAPIFor(h.maxCount)
	h.pool.New = func() any { return &reqState{buf: make([]byte, 0, 1024)} }
	return h, nil
}

// Names returns the names of the generators served, sorted.
func (h *Handler) Names() []string { return slices.Clone(h.names) }

// Shutdown makes /readyz answer 503 ("shutting down") from now on, so that
// load balancers drain the server before it stops; /healthz and the IDs
// are still served. Call it before http.Server.Shutdown.
func (h *Handler) Shutdown() { h.draining.Store(true) }

// Default returns the name of the default generator.
func (h *Handler) Default() string { return h.def.name }

// reqState is the per-request scratch space, pooled.
type reqState struct {
	buf   []byte
	ids   []idgen.ID
	dl    serving.Deadline // Options.Timeout's bound on the issue, no allocation
	start time.Time        // when the request arrived; generated_at
	route routeKind
	code  int
	wrote bool // the status line is out; a panic can no longer answer 500
	abort bool // end the response without its last chunk (http.ErrAbortHandler)
}

// maxPooled and maxPooledIDs bound what a request returns to the pool.
const (
	maxPooled    = 4 << 20
	maxPooledIDs = 1 << 14
)

// ServeHTTP serves one request; see the package documentation.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := h.pool.Get().(*reqState)
	st.route, st.code, st.wrote, st.abort, st.start = routeNotFound, 0, false, false, time.Now()
	defer h.finish(w, r, st)
	h.route(w, r, st)
}

// finish recovers a panic, observes the request's latency and returns st to
// the pool. It is deferred by ServeHTTP. A response to cut short (st.abort)
// ends with http.ErrAbortHandler: net/http then closes the connection
// without the terminating chunk (HTTP/1.1) or resets the stream (HTTP/2).
func (h *Handler) finish(w http.ResponseWriter, r *http.Request, st *reqState) {
	if v := recover(); v != nil {
		if v == http.ErrAbortHandler {
			panic(v)
		}
		h.log.Error("httpapi: panic serving request", "method", clip(r.Method), "path", clip(r.URL.Path),
			"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		h.metrics.panics.Add(1)
		if !st.wrote {
			h.writeError(w, st, http.StatusInternalServerError, "internal error; see the server log")
		} else {
			st.code = http.StatusInternalServerError
		}
		st.buf = nil // it may be in any state
	}
	d := time.Since(st.start)
	h.metrics.observe(st.route, st.code, d)
	if h.log.Enabled(r.Context(), slog.LevelDebug) {
		h.log.LogAttrs(r.Context(), slog.LevelDebug, "request", slog.String("method", clip(r.Method)),
			slog.String("uri", clip(r.RequestURI)), slog.Int("status", st.code), slog.Duration("duration", d))
	}
	if cap(st.buf) > maxPooled {
		st.buf = nil
	}
	if cap(st.ids) > maxPooledIDs {
		st.ids = nil
	}
	if st.buf == nil {
		st.buf = make([]byte, 0, 1024)
	}
	abort := st.abort
	h.pool.Put(st)
	if abort {
		h.metrics.cut.Add(1)
		panic(http.ErrAbortHandler)
	}
}

const apiPrefix = "/api/v1/"

func (h *Handler) route(w http.ResponseWriter, r *http.Request, st *reqState) {
	path := r.URL.Path
	if path == "/api/v1/ids" { // the hot path first
		st.route = routeIDs
		if h.allow(w, r, st) {
			h.serveIDs(w, r, st, h.def)
		}
		return
	}
	switch path {
	case "/healthz":
		st.route = routeHealth
		if h.allow(w, r, st) {
			h.write(w, st, http.StatusOK, ctJSON, append(st.buf[:0], `{"status":"ok"}`+"\n"...))
		}
		return
	case "/readyz":
		st.route = routeReady
		if h.allow(w, r, st) {
			h.serveReady(w, r, st)
		}
		return
	case "/metrics":
		st.route = routeMetrics
		if h.allow(w, r, st) {
			st.wrote, st.code = true, http.StatusOK
			h.promh.ServeHTTP(w, r)
		}
		return
	case "/api/v1/openapi.json":
		st.route = routeOpenAPI
		if h.allow(w, r, st) {
			h.write(w, st, http.StatusOK, ctJSON, append(st.buf[:0], h.openAPI...))
		}
		return
	case "/api/v1/generators":
		st.route = routeGenerators
		if h.allow(w, r, st) {
			h.serveGenerators(w, st)
		}
		return
	}
	rest, ok := strings.CutPrefix(path, apiPrefix)
	if !ok {
		h.writeError(w, st, http.StatusNotFound, fmt.Sprintf("no route %q; see /api/v1/openapi.json", clip(path)))
		return
	}
	// ids/{id}, {name}/ids or {name}/ids/{id}
	first, tail, _ := strings.Cut(rest, "/")
	g := h.def
	if first != "ids" {
		if g = h.gens[first]; g == nil {
			a := serving.Classify(h.set.Unknown(first))
			h.writeError(w, st, a.Class.HTTP, a.Msg)
			return
		}
		switch {
		case tail == "ids":
			st.route = routeIDs
			if h.allow(w, r, st) {
				h.serveIDs(w, r, st, g)
			}
			return
		case strings.HasPrefix(tail, "ids/"):
			tail = tail[len("ids/"):]
		default:
			h.writeError(w, st, http.StatusNotFound, fmt.Sprintf("no route %q; want /api/v1/%s/ids or /api/v1/%s/ids/{id}", clip(path), first, first))
			return
		}
	}
	if tail == "" || strings.Contains(tail, "/") {
		h.writeError(w, st, http.StatusNotFound, fmt.Sprintf("no route %q; want /api/v1/ids/{id}", clip(path)))
		return
	}
	st.route = routeDecode
	if h.allow(w, r, st) {
		h.serveDecode(w, st, g, tail)
	}
}

// allow answers 405 unless the method is GET or HEAD.
func (h *Handler) allow(w http.ResponseWriter, r *http.Request, st *reqState) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header()["Allow"] = allowGetHead
	h.writeError(w, st, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed; use GET", clip(r.Method)))
	return false
}

var (
	ctJSON       = []string{"application/json"}
	ctText       = []string{"text/plain; charset=utf-8"}
	noStore      = []string{"no-store"}
	nosniff      = []string{"nosniff"}
	allowGetHead = []string{"GET, HEAD"}
)

// write sends body with status code. Header values are shared slices: a
// map assignment costs no allocation, unlike Header().Set.
func (h *Handler) write(w http.ResponseWriter, st *reqState, code int, ct []string, body []byte) {
	hdr := w.Header()
	hdr["Content-Type"] = ct
	hdr["Cache-Control"] = noStore
	hdr["X-Content-Type-Options"] = nosniff
	if len(body) > 2048 {
		// Above net/http's buffer the length is not known in time and the
		// answer would be chunked.
		hdr["Content-Length"] = []string{itoa(len(body))}
	}
	st.code, st.wrote = code, true
	w.WriteHeader(code)
	w.Write(body) // an error here is the client gone; nothing to do
	st.buf = body
}

// writeError sends {"error": msg}.
func (h *Handler) writeError(w http.ResponseWriter, st *reqState, code int, msg string) {
	b := append(st.buf[:0], `{"error":`...)
	b = appendJSONString(b, msg)
	b = append(b, "}\n"...)
	h.write(w, st, code, ctJSON, b)
}

// clip cuts s, an input echoed in an error or log, to about 64 bytes.
func clip(s string) string { return echo.Cut(s) }

func itoa(n int) string {
	var b [20]byte
	return string(appendUint(b[:0], uint64(n)))
}
