// Package client is a Go client of the idgen service, over gRPC (package
// grpcapi) or HTTP (package httpapi), that never waits on the network in
// the common case: a Generator keeps a local buffer of IDs, fetched in
// blocks (gRPC NextStream, or GET /api/v1/ids?format=text) and refilled in
// the background, and fails over between servers.
//
// Security: TLS applies to gRPC targets and https:// targets alike, from
// Config.TLS or the files named by CAFile, CertFile, KeyFile and
// ServerName (mutual TLS with a client certificate). A server run with
// --client-ca refuses a client without one at the handshake.
//
// When to refill and how much to fetch is decided by package prefetch
// from the measured consumption rate and the recent p99 fetch latency: a
// refill starts once the IDs buffered fall below rate × p99 × safety, and
// fetches twice that, within [MinBatch, MaxBatch]. While rate × fetch
// latency stays below the buffer, no Next waits for a refill.
//
// Order: IDs from one server keep that server's order (increasing, for the
// time-ordered and segment schemes), and Next hands them out in the order
// fetched. Across servers, after a failover, IDs are k-sorted only: a
// later ID may be smaller than an earlier one from the other server. IDs
// are unique across servers as long as the servers' generators are (distinct
// worker IDs, one segment store).
package client

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/errclass"
	"github.com/idgenkit/idgen/prefetch"
)

// Defaults of Config's zero values.
const (
	DefaultMinBatch     = 1000
	DefaultMaxBatch     = 1_000_000
	DefaultFetchTimeout = 5 * time.Second
	DefaultRetryMin     = 10 * time.Millisecond
	DefaultRetryMax     = time.Second
)

// ErrConfig reports a Config that New refuses; the message names the field.
var ErrConfig = errclass.Invalid("client: invalid configuration")

// Config configures a Generator. Targets is required.
type Config struct {
	// Targets are the servers: gRPC addresses (host:port, or any grpc-go
	// target), or HTTP base URLs (http://host:port, https://host:port), in
	// any mix. The first that answers is used until it fails; then the
	// next, in order, round the list.
	Targets []string
	// Generator is the generator's name on the servers; empty means each
	// server's default.
	Generator string
	// Scheme is the IDs' scheme. Nil means the one the first server lists
	// for Generator, found by idgen.FindScheme among the packages the
	// program links: a Snowflake layout (package snowflake), or a scheme of
	// package strategies (or of a store package such as segment) by name.
	Scheme *idgen.Scheme
	// MinBatch and MaxBatch bound a fetch, in IDs. Zero means 1000 and
	// 1,000,000.
	MinBatch, MaxBatch int64
	// Safety is prefetch.Config.Safety. Zero means 2.
	Safety float64
	// FetchTimeout bounds one fetch from one server. Zero means 5 s.
	FetchTimeout time.Duration
	// RetryMin and RetryMax bound the backoff after every server failed,
	// doubling from RetryMin. Zero means 10 ms and 1 s.
	RetryMin, RetryMax time.Duration
	// TLS secures the connections: gRPC targets are dialled with
	// credentials.NewTLS(TLS), https:// targets use it. Nil means
	// plaintext gRPC and, for https:// targets, Go's defaults (the system's
	// roots), unless a file option below is set.
	TLS *tls.Config
	// CAFile (PEM CA certificates to trust instead of the system's),
	// CertFile and KeyFile (a PEM client certificate and its key, for
	// mutual TLS) and ServerName (the name to verify the servers'
	// certificates against instead of the host dialled) are loaded into a
	// clone of TLS, or a new configuration, at New; setting any turns TLS
	// on. Errors loading them wrap ErrConfig and name the file. TLS 1.2 is
	// the least accepted.
	CAFile, CertFile, KeyFile, ServerName string
	// CertNames names the client certificate's options in New's error
	// when a server wants one and none was sent ("... may want a client
	// certificate: " + CertNames), for a caller whose users set CertFile
	// and KeyFile under other names (idgen gen's "--tls-cert, --tls-key").
	// Empty means "CertFile, KeyFile".
	CertNames string
	// DialOptions are passed to grpc.NewClient after the client's own:
	// transport credentials (TLS, or plaintext when TLS is off) and
	// idgenv1.StreamWindow flow-control windows. A later option wins.
	DialOptions []grpc.DialOption
	// HTTPClient fetches from http:// and https:// targets. Nil means a
	// client of its own with the TLS configuration above.
	HTTPClient *http.Client
}

// Stats are a Generator's counters.
type Stats struct {
	Fetches     int64 // successful fetches
	FetchErrors int64 // failed fetches from one server
	Failovers   int64 // switches to another server
	Waits       int64 // Next or NextN calls that found the buffer empty and waited
	Buffered    int64 // IDs in the buffer now
	Target      string
}

// A Generator issues IDs from its buffer; see the package documentation.
// It is an idgen.Generator and an idgen.Batcher, safe for concurrent use.
type Generator struct {
	cfg     Config
	scheme  *idgen.Scheme
	planner *prefetch.Planner
	targets []transport // one a Config.Targets entry

	cur atomic.Pointer[block] // the block being handed out

	mu       sync.Mutex
	ready    []*block // fetched blocks after cur
	buffered int64    // IDs in ready
	lastErr  error    // the last attempt's error when every server failed
	attempt  chan struct{}
	fetched  int64 // IDs fetched in all
	usedAt   time.Time
	usedMark int64 // IDs handed out by usedAt

	active    atomic.Int32
	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	fetches, fetchErrors, failovers, waits atomic.Int64
}

// block is one fetch's IDs, handed out by an atomic index as segment's
// spans are: the fast path takes no lock.
type block struct {
	next    atomic.Int64 // the index of the next ID to hand out; past the end when used up
	trigger atomic.Int64 // the index whose issue starts the refill; -1: none due
	ids     []idgen.ID
}

func newBlock(ids []idgen.ID) *block {
	b := &block{ids: ids}
	b.trigger.Store(-1)
	return b
}

// closedBlock replaces the current block at Close: it holds no ID, which
// sends every caller to advance and ErrClosed without a check on the fast
// path.
var closedBlock = newBlock(nil)

// left returns the IDs of b not yet handed out.
func (b *block) left() int64 { return int64(len(b.ids)) - min(b.next.Load(), int64(len(b.ids))) }

var (
	_ idgen.Generator = (*Generator)(nil)
	_ idgen.Batcher   = (*Generator)(nil)
)

// New connects to cfg.Targets, learns the scheme when cfg.Scheme is nil,
// fills the buffer once (so that an unreachable set of servers fails here)
// and starts the background refill. Errors wrap ErrConfig or
// idgen.ErrUnavailable; with TLS on, the latter says why each server's
// handshake fails, when it does (a client certificate refused: none,
// expired, of a CA the server does not trust; a server name or CA that
// does not match).
func New(ctx context.Context, cfg Config) (*Generator, error) {
	if len(cfg.Targets) == 0 {
		return nil, fmt.Errorf("%w: no Targets", ErrConfig)
	}
	cfg.MinBatch = cmpOr(cfg.MinBatch, DefaultMinBatch)
	cfg.MaxBatch = cmpOr(cfg.MaxBatch, max(DefaultMaxBatch, cfg.MinBatch))
	cfg.FetchTimeout = cmpOr(cfg.FetchTimeout, DefaultFetchTimeout)
	cfg.RetryMin = cmpOr(cfg.RetryMin, DefaultRetryMin)
	cfg.RetryMax = cmpOr(cfg.RetryMax, max(DefaultRetryMax, cfg.RetryMin))
	if cfg.FetchTimeout < 0 || cfg.RetryMin < 0 || cfg.RetryMax < 0 {
		return nil, fmt.Errorf("%w: FetchTimeout %v, RetryMin %v, RetryMax %v: want durations >= 0", ErrConfig, cfg.FetchTimeout, cfg.RetryMin, cfg.RetryMax)
	}
	pl, err := prefetch.New(prefetch.Config{Min: cfg.MinBatch, Max: cfg.MaxBatch, Safety: cfg.Safety})
	if err != nil {
		return nil, fmt.Errorf("%w: MinBatch, MaxBatch, Safety: %w", ErrConfig, err)
	}
	g := &Generator{cfg: cfg, scheme: cfg.Scheme, planner: pl, attempt: make(chan struct{}),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	var tc *tls.Config
	if g.targets, tc, err = dialAll(cfg); err != nil {
		return nil, err
	}
	if g.scheme == nil {
		if g.scheme, err = g.learnScheme(ctx); err != nil {
			g.closeConns()
			return nil, explainTLS(err, cfg, tc)
		}
	}
	ids, err := g.fetchAny(ctx, cfg.MinBatch)
	if err != nil {
		g.closeConns()
		return nil, explainTLS(err, cfg, tc)
	}
	g.cur.Store(newBlock(ids))
	g.fetched, g.usedAt = int64(len(ids)), time.Now()
	g.mu.Lock()
	g.setTrigger()
	g.mu.Unlock()
	go g.run()
	return g, nil
}

func cmpOr[T int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// learnScheme asks the servers, in order, for the generator's scheme.
func (g *Generator) learnScheme(ctx context.Context) (*idgen.Scheme, error) {
	var errs []error
	for i, c := range g.targets {
		cctx, cancel := context.WithTimeout(ctx, g.cfg.FetchTimeout)
		def, gens, err := c.generators(cctx)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", g.cfg.Targets[i], err))
			continue
		}
		name := cmp.Or(g.cfg.Generator, def)
		for _, gen := range gens {
			if gen.name != name {
				continue
			}
			s, err := idgen.FindScheme(gen.scheme, gen.layout)
			if err != nil {
				return nil, fmt.Errorf("client: generator %q: %w; set Config.Scheme", name, err)
			}
			return s, nil
		}
		return nil, fmt.Errorf("%w: generator %q is not served by %s", ErrConfig, echo.Cut(name), g.cfg.Targets[i])
	}
	return nil, fmt.Errorf("%w: no server answered: %w", idgen.ErrUnavailable, errors.Join(errs...))
}

// Scheme returns the IDs' scheme.
func (g *Generator) Scheme() *idgen.Scheme { return g.scheme }

// Next returns the next ID of the buffer. When the buffer is empty it
// waits for the refill under way (honouring ctx), or returns an error
// wrapping idgen.ErrUnavailable when every server failed the last attempt.
// After Close it returns idgen.ErrClosed.
func (g *Generator) Next(ctx context.Context) (idgen.ID, error) {
	for {
		b := g.cur.Load()
		v := b.next.Add(1) - 1
		if v < int64(len(b.ids)) {
			if v == b.trigger.Load() {
				g.startRefill(b)
			}
			return b.ids[v], nil
		}
		if err := g.advance(ctx, b); err != nil {
			return idgen.ID{}, err
		}
	}
}

// NextN fills dst from the buffer, in the order fetched. It returns
// n < len(dst) only with an error, as Next's.
func (g *Generator) NextN(ctx context.Context, dst []idgen.ID) (int, error) {
	i := 0
	for i < len(dst) {
		b := g.cur.Load()
		want := int64(len(dst) - i)
		hi := b.next.Add(want)
		lo := hi - want
		if end := int64(len(b.ids)); lo < end {
			top := min(hi, end)
			if t := b.trigger.Load(); lo <= t && t < top {
				g.startRefill(b)
			}
			i += copy(dst[i:], b.ids[lo:top])
			continue
		}
		if err := g.advance(ctx, b); err != nil {
			return i, err
		}
	}
	return i, nil
}

// advance moves past the used-up block old: to the next fetched block
// when there is one, else it waits for the refill under way.
func (g *Generator) advance(ctx context.Context, old *block) error {
	g.mu.Lock()
	for {
		if g.closed() {
			g.mu.Unlock()
			return idgen.ErrClosed
		}
		if g.cur.Load() != old {
			g.mu.Unlock()
			return nil
		}
		if len(g.ready) > 0 {
			b := g.ready[0]
			g.ready[0] = nil
			g.ready = g.ready[1:]
			g.buffered -= int64(len(b.ids))
			g.cur.Store(b)
			g.setTrigger()
			g.mu.Unlock()
			return nil
		}
		if err := g.lastErr; err != nil {
			g.mu.Unlock()
			return fmt.Errorf("%w: every server failed the last fetch: %w", idgen.ErrUnavailable, err)
		}
		g.startRefill(old)
		ch := g.attempt
		g.mu.Unlock()
		g.waits.Add(1)
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-g.stop:
			return idgen.ErrClosed
		}
		g.mu.Lock()
	}
}

func (g *Generator) closed() bool {
	select {
	case <-g.stop:
		return true
	default:
		return false
	}
}

// startRefill disarms b's trigger and wakes the fetcher without blocking.
func (g *Generator) startRefill(b *block) {
	b.trigger.Store(-1)
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// setTrigger arms the current block's trigger where the IDs left (in it
// and in ready) fall to the planner's threshold, starting the refill now
// when they already have. Called with mu held.
func (g *Generator) setTrigger() {
	b := g.cur.Load()
	left := b.left() + g.buffered
	th := max(g.planner.Threshold(), 1)
	if left <= th {
		g.startRefill(b)
		return
	}
	b.trigger.Store(min(b.next.Load(), int64(len(b.ids))) + left - th) // past the end when ready holds enough
}

// run is the background fetcher: on each kick it fetches blocks until
// the IDs left reach the threshold, failing over between servers and
// backing off while all fail, until Close.
func (g *Generator) run() {
	defer close(g.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-g.stop; cancel() }()
	backoff := g.cfg.RetryMin
	for {
		select {
		case <-g.stop:
			return
		case <-g.kick:
		}
		for {
			g.mu.Lock()
			now := time.Now()
			left := g.cur.Load().left() + g.buffered
			if used := g.fetched - left; now.Sub(g.usedAt) >= time.Millisecond { // shorter spans say little of the rate
				g.planner.ObserveUse(used-g.usedMark, now.Sub(g.usedAt))
				g.usedMark, g.usedAt = used, now
			}
			need := left <= max(g.planner.Threshold(), 1)
			g.mu.Unlock()
			if !need {
				g.mu.Lock()
				g.setTrigger()
				g.mu.Unlock()
				break
			}
			ids, err := g.fetchAny(ctx, g.planner.Size())
			g.mu.Lock()
			g.lastErr = err
			if err == nil {
				g.ready = append(g.ready, newBlock(ids))
				g.buffered += int64(len(ids))
				g.fetched += int64(len(ids))
			}
			close(g.attempt)
			g.attempt = make(chan struct{})
			g.mu.Unlock()
			if err == nil {
				backoff = g.cfg.RetryMin
				continue
			}
			t := time.NewTimer(backoff)
			select {
			case <-g.stop:
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, g.cfg.RetryMax)
		}
	}
}

// fetchAny fetches n IDs from the active server, failing over to the
// others in order when it fails. Errors wrap idgen.ErrUnavailable.
func (g *Generator) fetchAny(ctx context.Context, n int64) ([]idgen.ID, error) {
	start := int(g.active.Load())
	var errs []error
	for k := range g.targets {
		i := (start + k) % len(g.targets)
		t0 := time.Now()
		fctx, cancel := context.WithTimeout(ctx, g.cfg.FetchTimeout)
		ids, err := g.targets[i].fetch(fctx, g.cfg.Generator, g.scheme, n)
		cancel()
		if len(ids) > 0 { // a stream cut short still gave valid IDs
			g.planner.ObserveFetch(time.Since(t0))
			g.fetches.Add(1)
			if i != start {
				g.active.Store(int32(i))
				g.failovers.Add(1)
			}
			return ids, nil
		}
		g.fetchErrors.Add(1)
		errs = append(errs, fmt.Errorf("%s: %w", g.cfg.Targets[i], err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("%w: %w", idgen.ErrUnavailable, errors.Join(errs...))
}

// Stats returns the Generator's counters.
func (g *Generator) Stats() Stats {
	g.mu.Lock()
	buffered := g.cur.Load().left() + g.buffered
	g.mu.Unlock()
	return Stats{Fetches: g.fetches.Load(), FetchErrors: g.fetchErrors.Load(), Failovers: g.failovers.Load(),
		Waits: g.waits.Load(), Buffered: buffered, Target: g.cfg.Targets[g.active.Load()]}
}

// Close stops the refill and closes the connections. The IDs left in the
// buffer are dropped: a gap, never a duplicate. From then on Next and NextN
// return idgen.ErrClosed at once, as a segment.Allocator's do. A second
// Close returns nil.
func (g *Generator) Close() error {
	g.closeOnce.Do(func() {
		g.mu.Lock()
		close(g.stop)
		g.cur.Store(closedBlock)
		g.ready, g.buffered = nil, 0
		g.mu.Unlock()
		<-g.done
		g.closeConns()
	})
	return nil
}

func (g *Generator) closeConns() {
	for _, t := range g.targets {
		t.close()
	}
}
