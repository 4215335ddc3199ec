package cli

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/internal/serving"
	"github.com/idgenkit/idgen/internal/tlsfiles"
	"github.com/idgenkit/idgen/strategies"
	"github.com/idgenkit/idgen/strategies/config"
)

type serveFlags struct {
	config, spec, addr, logLevel, workerSource      string
	grpcAddr, metricsAddr                           string
	tlsCert, tlsKey, clientCA                       string
	insecure                                        bool
	maxCount                                        int
	timeout, readTimeout, writeTimeout, idleTimeout time.Duration
	shutdownTimeout                                 time.Duration
	env                                             *Env
}

func newServeCmd(e *Env) *cobra.Command {
	f := serveFlags{env: e}
	cmd := &cobra.Command{
		Use:   "serve (--config FILE | -s SPEC) [--addr 127.0.0.1:8080] [--tls-cert FILE --tls-key FILE [--client-ca FILE] | --insecure]",
		Short: "Serve IDs over HTTP (JSON or text), with /healthz, /readyz and /metrics",
		Long: `serve runs the ID service: GET /api/v1/ids?count=N answers N IDs of the
default generator as JSON ({"ids":[{"value_string","value_hex","breakdown"}],
"generated_at"}), or one per line with ?format=text. Generators named in a
config file also get /api/v1/{name}/ids. The API is described at
/api/v1/openapi.json; /healthz, /readyz and /metrics (Prometheus) are served
beside it, or on --metrics-addr apart from it. Logs are JSON lines on
stderr. SIGTERM or SIGINT turns readiness off (/readyz 503, gRPC health
NOT_SERVING), stops accepting connections and lets requests and streams in
flight finish on both transports together, up to --shutdown-timeout; what
that cuts off is logged, and serve then exits 1 instead of 0.

It listens on loopback unless told otherwise. An --addr or --grpc-addr
beyond loopback needs TLS (--tls-cert and --tls-key; --client-ca for mutual
TLS, which both transports then require) or --insecure, given on purpose
(behind a service mesh that terminates mutual TLS). The certificate files
are read again when they change, at the next handshake, or on SIGHUP:
connections open keep theirs. A config file's tls table (cert, key,
client_ca) sets the same; the flags win.`,
		Example: `  idgen serve -s 'snowflake?preset=twitter&datacenter=1&worker=7'
  curl 'localhost:8080/api/v1/ids?count=3'
  curl 'localhost:8080/api/v1/ids?count=1000&format=text'
  idgen serve -s 'snowflake?worker=7' --addr 0.0.0.0:8443 --tls-cert server.pem --tls-key server-key.pem --client-ca ca.pem --metrics-addr 0.0.0.0:9100`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd.Context(), f, cmd.ErrOrStderr()) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.config, "config", "c", "", "config file (YAML, TOML or JSON) naming the generators")
	fl.StringVarP(&f.spec, "spec", "s", "", `one generator's spec, served as "default", e.g. 'snowflake?preset=twitter&worker=7'`)
	fl.StringVar(&f.addr, "addr", defaultAddr, "listen address, host:port; beyond loopback it needs --tls-cert and --tls-key, or --insecure")
	fl.StringVar(&f.grpcAddr, "grpc-addr", "", "also serve gRPC (idgen.v1.IDService, health, reflection) on host:port, with --addr's TLS; empty: off")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve /metrics, /healthz and /readyz on host:port instead, plain HTTP without client certificates; empty: on --addr")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate (chain) file: serve HTTPS and gRPC over TLS 1.2+; read again when it changes or on SIGHUP")
	fl.StringVar(&f.tlsKey, "tls-key", "", "PEM private key file of --tls-cert")
	fl.StringVar(&f.clientCA, "client-ca", "", "PEM CA file: require client certificates that chain to it (mutual TLS) on HTTP and gRPC")
	fl.BoolVar(&f.insecure, "insecure", false, "serve plaintext on addresses beyond loopback, on purpose (a service mesh terminates TLS)")
	fl.IntVar(&f.maxCount, "max-count", httpapi.DefaultMaxCount, "largest count a request may ask for")
	fl.DurationVar(&f.timeout, "timeout", time.Second, "longest a request waits for its IDs (clock rollback, store) before 503, summed over a streamed response's chunks; 0: no bound")
	fl.DurationVar(&f.readTimeout, "read-timeout", 5*time.Second, "http.Server ReadTimeout (headers and body)")
	fl.DurationVar(&f.writeTimeout, "write-timeout", 10*time.Second, "http.Server WriteTimeout: the time to write a response, or each chunk of 1,024 IDs of a streamed one (count above 1,024)")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 2*time.Minute, "http.Server IdleTimeout for keep-alive connections")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long requests and streams in flight may take to finish after SIGTERM, HTTP and gRPC together; what it cuts off makes the exit code 1")
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fl.StringVar(&f.workerSource, "worker-source", "", strategies.WorkerSourceDoc+"; sets the -s spec's worker_source (default $"+envWorkerSource+")")
	return cmd
}

func runServe(ctx context.Context, f serveFlags, stderr io.Writer) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return badInput(fmt.Errorf("serve: --log-level %q: want debug, info, warn or error", echo.Cut(f.logLevel)))
	}
	if (f.config == "") == (f.spec == "") {
		return badInput(errors.New("serve: give exactly one of --config FILE or -s SPEC"))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"timeout", f.timeout}, {"read-timeout", f.readTimeout}, {"write-timeout", f.writeTimeout},
		{"idle-timeout", f.idleTimeout}, {"shutdown-timeout", f.shutdownTimeout}} {
		if d.v < 0 {
			return badInput(fmt.Errorf("serve: --%s %v must not be negative", d.name, d.v))
		}
	}
	if f.maxCount < 1 {
		return badInput(fmt.Errorf("serve: --max-count %d: want at least 1", f.maxCount))
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	// What the generators' background work finds for the operator (a
	// segment step bound too small for the rate) goes to log as a warning.
	opts := f.env.specOptions()
	opts.Notify = func(msg string) { log.Warn(msg) }
	var cfg *config.Config
	if f.config != "" {
		if f.workerSource != "" {
			return badInput(errors.New("serve: --worker-source applies to -s; in a config file set each spec's worker_source"))
		}
		var err error
		if cfg, err = config.Load(f.config, opts); err != nil {
			return badInput(fmt.Errorf("serve: %w", err)) // "config file PATH:LINE: ..."
		}
		f.tlsCert, f.tlsKey, f.clientCA = cmp.Or(f.tlsCert, cfg.TLS.Cert), cmp.Or(f.tlsKey, cfg.TLS.Key), cmp.Or(f.clientCA, cfg.TLS.ClientCA)
	}
	if err := checkAddrs(f); err != nil {
		return badInput(fmt.Errorf("serve: %w", err))
	}
	certs, err := loadServerTLS(ctx, f, log)
	if err != nil {
		return err
	}

	gens, def, err := loadGenerators(ctx, f, cfg, opts, log)
	if err != nil {
		return err
	}
	defer closeGenerators(log, gens)
	warnSlowIssue(ctx, log, gens, f)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if certs != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "idgen_tls_certificate_expiry_timestamp_seconds",
			Help: "When the serving certificate in use (--tls-cert, reloaded on change) expires, in Unix seconds."},
			func() float64 { return float64(certs.Leaf().NotAfter.Unix()) }))
	}
	h, err := httpapi.New(gens, httpapi.Options{Default: def, MaxCount: f.maxCount, Timeout: f.timeout, WriteTimeout: f.writeTimeout,
		Logger: log, Registry: reg})
	if err != nil {
		return badInput(fmt.Errorf("serve: %w", err))
	}
	gsrv, err := serveGRPC(f, gens, def, log, reg, certs)
	if err != nil {
		return err
	}
	if gsrv != nil {
		defer gsrv.gs.Stop() // on the failures below; after the drain, a no-op
	}
	var api http.Handler = h
	var ops *httpServer
	if f.metricsAddr != "" {
		api = withoutOps(h)
		if ops, err = listenHTTP(f, "--metrics-addr", f.metricsAddr, onlyOps(h), nil, log); err != nil {
			return err
		}
	}
	track := serving.NewTracker()
	srv, err := listenHTTP(f, "--addr", f.addr, track.Handler(api), certs, log)
	if err != nil {
		if ops != nil {
			ops.close()
		}
		return err
	}
	attrs := []any{"addr", srv.addr, "default", h.Default(), "generators", h.Names(), "max_count", f.maxCount, "tls", certs != nil}
	if certs != nil {
		attrs = append(attrs, "mutual_tls", f.clientCA != "", "cert_not_after", certs.Leaf().NotAfter)
	}
	if gsrv != nil {
		attrs = append(attrs, "grpc_addr", gsrv.addr)
	}
	if ops != nil {
		attrs = append(attrs, "metrics_addr", ops.addr)
	}
	log.Info("serving", attrs...)

	var served error
	select {
	case served = <-srv.served: // the listener failed
	case served = <-ops.failed():
	case <-ctx.Done():
	}
	if served != nil {
		if ops != nil {
			ops.close()
		}
		return fmt.Errorf("serve: %w", served)
	}
	log.Info("shutting down: finishing requests in flight", "timeout", f.shutdownTimeout.String())
	// Readiness off on both transports first (/readyz 503, gRPC health
	// NOT_SERVING), then both drained at once within the one timeout;
	// --metrics-addr keeps answering /readyz meanwhile.
	ts := []serving.Transport{{Name: "http", NotServing: h.Shutdown, Drain: func(ctx context.Context) (int, int) {
		n := serving.DrainHTTP(ctx, srv.srv, track)
		<-srv.served // http.ErrServerClosed
		return n, 0
	}}}
	if gsrv != nil {
		ts = append(ts, serving.Transport{Name: "grpc", NotServing: gsrv.s.Shutdown, Drain: func(ctx context.Context) (int, int) {
			return gsrv.s.Drain(ctx, gsrv.gs)
		}})
	}
	cuts := serving.Shutdown(f.shutdownTimeout, ts...)
	if ops != nil {
		ops.close() // probes and scrapes are not waited for
	}
	var cutWords []string
	for _, c := range cuts {
		log.Error("shutdown cut off work in flight: --shutdown-timeout passed", "transport", c.Transport,
			"requests", c.Requests, "streams", c.Streams, "timeout", f.shutdownTimeout.String())
		cutWords = append(cutWords, fmt.Sprintf("%s: %d requests, %d streams", c.Transport, c.Requests, c.Streams))
	}
	log.Info("stopped")
	if len(cuts) > 0 {
		return fmt.Errorf("serve: %w after --shutdown-timeout %v (%s)", errCutOff, f.shutdownTimeout, strings.Join(cutWords, "; "))
	}
	return nil
}

// errCutOff is serve's error when its shutdown cut off work in flight:
// exit 1, even though a signal stopped it.
var errCutOff = errors.New("shutdown cut off work in flight")

// defaultAddr is --addr's default: loopback only.
const defaultAddr = "127.0.0.1:8080"

// checkAddrs checks the syntax of every address, and refuses an --addr or
// --grpc-addr beyond loopback without TLS unless --insecure says so.
func checkAddrs(f serveFlags) error {
	if err := checkAddr("--addr", f.addr); err != nil {
		return err
	}
	addrs := []struct{ flag, v string }{{"--addr", f.addr}, {"--grpc-addr", f.grpcAddr}, {"--metrics-addr", f.metricsAddr}}
	for i, a := range addrs[1:] {
		if a.v == "" {
			continue
		}
		if err := checkAddr(a.flag, a.v); err != nil {
			return err
		}
		for _, b := range addrs[:i+1] {
			if b.v != "" && samePort(a.v, b.v) {
				return fmt.Errorf("%s %q takes the port of %s %q: give each listener its own port", a.flag, echo.Cut(a.v), b.flag, echo.Cut(b.v))
			}
		}
	}
	tlsOn := f.tlsCert != "" || f.tlsKey != ""
	switch {
	case (f.tlsCert == "") != (f.tlsKey == ""):
		return fmt.Errorf("--tls-cert %q and --tls-key %q: give both files or neither", echo.Cut(f.tlsCert), echo.Cut(f.tlsKey))
	case f.clientCA != "" && !tlsOn:
		return errors.New("--client-ca needs --tls-cert and --tls-key: mutual TLS is TLS with client certificates")
	case f.insecure && tlsOn:
		return errors.New("--insecure serves plaintext; leave it out with --tls-cert and --tls-key")
	case tlsOn || f.insecure:
		return nil
	}
	for _, a := range []struct{ flag, v string }{{"--addr", f.addr}, {"--grpc-addr", f.grpcAddr}} {
		if a.v != "" && !loopback(a.v) {
			return fmt.Errorf("%s %q listens beyond loopback without TLS: anyone who reaches it could issue IDs, draining sequences and segments; "+
				"give --tls-cert and --tls-key (and --client-ca for mutual TLS), or --insecure to serve plaintext on purpose (behind a service mesh that terminates mutual TLS)",
				a.flag, echo.Cut(a.v))
		}
	}
	return nil
}

// samePort reports whether listeners on host:port addresses a and b
// (checked by checkAddr) would take the same port: one that is not 0, on
// the same host, a wildcard host, or two loopback hosts. Without it, the
// second to listen failed naming its own flag, which was not the one that
// took the port.
func samePort(a, b string) bool {
	ha, pa, _ := net.SplitHostPort(a)
	hb, pb, _ := net.SplitHostPort(b)
	na, _ := net.LookupPort("tcp", pa)
	nb, _ := net.LookupPort("tcp", pb)
	if na == 0 || na != nb {
		return false
	}
	wild := func(h string) bool { ip := net.ParseIP(h); return h == "" || ip != nil && ip.IsUnspecified() }
	return strings.EqualFold(ha, hb) || wild(ha) || wild(hb) || loopback(a) && loopback(b)
}

// loopback reports whether addr's host is localhost or a loopback IP: an
// empty host (":8080") is every interface.
func loopback(addr string) bool {
	host, _, _ := net.SplitHostPort(addr)
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loadServerTLS loads --tls-cert, --tls-key and --client-ca, nil without
// them, and reloads them on SIGHUP while ctx lasts; each reload is logged.
func loadServerTLS(ctx context.Context, f serveFlags, log *slog.Logger) (*tlsfiles.Server, error) {
	if f.tlsCert == "" {
		return nil, nil
	}
	s, err := tlsfiles.NewServer(f.tlsCert, f.tlsKey, f.clientCA)
	if err != nil {
		return nil, badInput(fmt.Errorf("serve: --tls-cert, --tls-key, --client-ca: %w", err))
	}
	s.OnReload = func(err error) {
		if err != nil {
			log.Warn("TLS files not reloaded: the files in use stay; tried again when the files change or on SIGHUP", "err", err)
			return
		}
		log.Info("TLS files reloaded", "cert_not_after", s.Leaf().NotAfter, "cert_serial", s.Leaf().SerialNumber.String())
	}
	onHangup(ctx, func() {
		log.Info("SIGHUP: reloading the TLS files")
		s.Reload()
	})
	return s, nil
}

// httpServer is one HTTP listener of serve.
type httpServer struct {
	addr   string
	srv    *http.Server
	served chan error // Serve's error, once
}

// listenHTTP serves h on addr (named by flag in errors), over TLS when
// certs is not nil.
func listenHTTP(f serveFlags, flag, addr string, h http.Handler, certs *tlsfiles.Server, log *slog.Logger) (*httpServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %s %q: %w", flag, addr, err)
	}
	s := &httpServer{addr: ln.Addr().String(), served: make(chan error, 1), srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(f.readTimeout, 5*time.Second),
		ReadTimeout:       f.readTimeout,
		WriteTimeout:      f.writeTimeout,
		IdleTimeout:       f.idleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}
	if certs != nil {
		s.srv.TLSConfig = certs.Config("h2", "http/1.1")
		ln = tls.NewListener(ln, s.srv.TLSConfig)
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s, nil
}

// failed returns the channel of Serve's error; nil (never ready) for a
// nil server.
func (s *httpServer) failed() <-chan error {
	if s == nil {
		return nil
	}
	return s.served
}

// close stops at once.
func (s *httpServer) close() {
	s.srv.Close()
	<-s.served
}

// opsPath reports whether path is one of the routes --metrics-addr serves
// apart from the ID API.
func opsPath(path string) bool {
	switch path {
	case "/metrics", "/healthz", "/readyz":
		return true
	}
	return false
}

// onlyOps serves the ops routes with h, and 404 elsewhere.
func onlyOps(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !opsPath(r.URL.Path) {
			http.Error(w, `{"error":"the metrics listener serves /metrics, /healthz and /readyz only"}`, http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// withoutOps serves h but for the ops routes, which --metrics-addr serves.
func withoutOps(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opsPath(r.URL.Path) {
			http.Error(w, `{"error":"served on --metrics-addr"}`, http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// grpcServer is serve's gRPC service: the IDService and its grpc.Server.
type grpcServer struct {
	addr string
	s    *grpcapi.Server
	gs   *grpc.Server
}

// serveGRPC starts the gRPC service on --grpc-addr, when given (else it
// returns nil), over TLS when certs is not nil.
func serveGRPC(f serveFlags, gens map[string]idgen.Generator, def string, log *slog.Logger, reg *prometheus.Registry, certs *tlsfiles.Server) (*grpcServer, error) {
	if f.grpcAddr == "" {
		return nil, nil
	}
	s, err := grpcapi.New(gens, grpcapi.Options{Default: def, MaxCount: f.maxCount, Timeout: f.timeout, Logger: log, Registry: reg})
	if err != nil {
		return nil, badInput(fmt.Errorf("serve: %w", err))
	}
	ln, err := net.Listen("tcp", f.grpcAddr)
	if err != nil {
		return nil, fmt.Errorf("serve: --grpc-addr %q: %w", f.grpcAddr, err)
	}
	var opts []grpc.ServerOption
	if certs != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(certs.Config())))
	}
	gs := s.NewGRPCServer(opts...)
	go gs.Serve(ln) // returns when stopped
	return &grpcServer{addr: ln.Addr().String(), s: s, gs: gs}, nil
}

// loadGenerators builds the generators of --config or -s, and names the
// default one, with opts (Notify set), and refuses one whose layout's
// lifetime has ended or not begun (config.CheckLifetime). A worker
// source's warning (a hostname hash that can collide) is logged at WARN
// with the generator's name, as gen prints it.
func loadGenerators(ctx context.Context, f serveFlags, cfg *config.Config, opts strategies.Options, log *slog.Logger) (map[string]idgen.Generator, string, error) {
	if cfg != nil {
		if _, named := cfg.Lookup(httpapi.DefaultName); cfg.Default == "" && len(cfg.Generators) > 1 && !named {
			// A file with several generators, no default key and none
			// named httpapi.DefaultName has no default to serve: config's
			// error says so.
			_, err := cfg.New(ctx, "") // builds nothing: there is no default
			return nil, "", badInput(fmt.Errorf("serve: %w", err))
		}
		// Load checked each spec with Warn unset: each warning is logged
		// once, when the generator that serves is built.
		gens, err := cfg.NewAll(ctx, func(name, msg string) { log.Warn(msg, "generator", name) })
		if err != nil {
			return nil, "", fmt.Errorf("serve: --config: %w", err)
		}
		return gens, cfg.Default, nil
	}
	spec, err := strategies.CheckSpec(f.spec) // the one parse of -s
	if err != nil {
		return nil, "", fmt.Errorf("serve: -s %q: %w", echo.Cut(redact.Spec(f.spec)), err)
	}
	spec, origin, err := f.env.withWorkerSource(spec, f.workerSource)
	if err != nil {
		return nil, "", badInput(fmt.Errorf("serve: %w", err))
	}
	opts.Warn = warnLog(log, httpapi.DefaultName)
	g, err := opts.New(ctx, spec)
	if err != nil {
		err, _ = sourceConflict(err, origin)
		return nil, "", fmt.Errorf("serve: -s %q: %w", echo.Cut(redact.Spec(f.spec)), err)
	}
	gens := map[string]idgen.Generator{httpapi.DefaultName: g}
	if _, err := config.CheckLifetime(ctx, gens); err != nil {
		closeGenerators(log, gens)
		return nil, "", badInput(fmt.Errorf("serve: -s %q: %w", echo.Cut(redact.Spec(f.spec)), err))
	}
	return gens, httpapi.DefaultName, nil
}

// closeGenerators closes the generators that hold resources.
func closeGenerators(log *slog.Logger, gens map[string]idgen.Generator) {
	for name, g := range gens {
		if c, ok := g.(io.Closer); ok {
			if err := c.Close(); err != nil {
				log.Warn("closing generator", "generator", name, "err", err)
			}
		}
	}
}

// warnLog returns a strategies.Options.Warn that logs a worker source's
// warning for generator name.
func warnLog(log *slog.Logger, name string) func(string) {
	return func(msg string) { log.Warn(msg, "generator", name) }
}

// warnSlowIssue times one chunk of IDs of each generator
// (serving.EstimateIssue: httpapi.ChunkIDs, or --max-count when fewer) and
// warns when a request of --max-count IDs would take longer than --timeout
// to issue at that pace: it would fail with 503, the IDs it drew lost.
// Ticket servers cost a round trip per batch; generators that issue from
// memory are far from it.
func warnSlowIssue(ctx context.Context, log *slog.Logger, gens map[string]idgen.Generator, f serveFlags) {
	if f.timeout <= 0 {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(gens)) {
		pctx, cancel := context.WithTimeout(ctx, f.timeout)
		est, err := serving.EstimateIssue(pctx, gens[name], f.maxCount, httpapi.ChunkIDs, nil)
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			log.Warn("--max-count cannot be met within --timeout: one chunk of IDs took longer than the timeout; a request of more would fail with 503",
				"generator", name, "max_count", f.maxCount, "timeout", f.timeout.String(), "chunk", min(f.maxCount, httpapi.ChunkIDs))
		case err != nil || est <= f.timeout: // a generator that cannot issue now: /readyz says so
		default:
			log.Warn("--max-count cannot be met within --timeout: a request for that many IDs would fail with 503, the IDs it drew lost; lower --max-count or raise --timeout",
				"generator", name, "max_count", f.maxCount, "timeout", f.timeout.String(), "estimate", est.Round(time.Millisecond).String(),
				"max_count_within_timeout", int(float64(f.maxCount)*float64(f.timeout)/float64(est)))
		}
	}
}

// checkAddr reports whether addr is host:port with a port from 0 to 65535
// (or a service name such as http), before anything listens: a malformed
// address is bad input, a port in use a runtime failure.
func checkAddr(flag, addr string) error {
	bad := fmt.Errorf("%s %q: want host:port with a port from 0 to 65535, e.g. 127.0.0.1:8080 or :8443", flag, echo.Cut(addr))
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return bad
	}
	if n, err := strconv.ParseUint(port, 10, 64); err == nil {
		if n > 65535 {
			return bad
		}
		return nil
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return bad
	}
	return nil
}
