package grpcapi

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/internal/errclass"
	"github.com/idgenkit/idgen/internal/serving"
	"github.com/idgenkit/idgen/snowflake"
)

// Options configures a Server. Every field's zero value is usable; MaxCount
// and Timeout mean what they mean in httpapi.Options.
type Options struct {
	// Default names the generator used when a request names none. Empty
	// means the only generator when there is one, else serving.DefaultName.
	Default string
	// MaxCount is the largest count of a Next call and the largest batch
	// of NextStream. Zero means serving.DefaultMaxCount (10,000).
	MaxCount int
	// Timeout bounds how long a call may wait for one batch of IDs; past
	// it the call ends Unavailable. Zero means no bound but the call's own
	// deadline.
	Timeout time.Duration
	// Logger receives issuing failures. Nil means slog.Default().
	Logger *slog.Logger
	// Registry is where the server registers its metrics: the call
	// metrics, and the generators' counters (their idgen.Stats, exported
	// as httpapi exports them), shared with an httpapi.Handler registered
	// on the same registry over the same generators. Nil means none are
	// registered (they are still counted).
	Registry prometheus.Registerer
}

// ErrConfig reports Options or a generator set that New refuses.
var ErrConfig = errclass.Invalid("grpcapi: invalid configuration")

// A Server implements idgen.v1.IDService over a set of named generators.
// It is safe for concurrent use.
type Server struct {
	idgenv1.UnimplementedIDServiceServer

	set      *serving.Set
	gens     map[string]*generator
	names    []string // sorted
	def      *generator
	maxCount int
	timeout  time.Duration
	log      *slog.Logger
	metrics  *grpcprom.ServerMetrics
	issued   *prometheus.CounterVec
	health   *health.Server
	track    *serving.Tracker // IDService calls in flight, for Drain
	calls    sync.Pool        // *callState
}

// callState is a Next call's scratch space, pooled: the IDs before they
// become the answer, and the lazy Options.Timeout bound (no timer unless
// the generator waits).
type callState struct {
	ids []idgen.ID
	dl  serving.Deadline
}

// maxPooledIDs bounds the IDs a call returns to the pool.
const maxPooledIDs = 1024

func (s *Server) putCall(st *callState) {
	if cap(st.ids) > maxPooledIDs {
		st.ids = nil
	}
	s.calls.Put(st)
}

type generator struct {
	name     string
	gen      idgen.Generator
	scheme   *idgen.Scheme
	layout   string           // a Snowflake scheme's layout text; "" for other schemes
	sf       snowflake.Layout // a Snowflake scheme's layout
	issued   prometheus.Counter
	spans    []snowflake.Span // a 64-bit Snowflake layout's fields, high to low, as Decompose gives them; nil for other schemes
	decimal  bool             // the scheme's text is the layout codec's own decimal (not an encoding= wrapper's)
	nextMax  int              // the most IDs a Next answer holds: MaxNextCount
	batchMax int              // the most IDs an IDBatch holds: MaxBatch, and MaxCount

	rollbackFailures *atomic.Uint64 // calls failed with a clock rollback: serving.Collector's counter; nil without a Registry
}

// New returns a Server of gens by name. The map must hold at least one
// generator; names follow httpapi's rule ([A-Za-z0-9][A-Za-z0-9_.-]*, at
// most 64 characters, not "ids", "generators" or "openapi.json"), so that
// one set serves alike on both. Errors wrap ErrConfig.
func New(gens map[string]idgen.Generator, opts Options) (*Server, error) {
	set, err := serving.NewSet(gens, serving.Config{Default: opts.Default, MaxCount: opts.MaxCount, Timeout: opts.Timeout})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	s := &Server{set: set, gens: make(map[string]*generator, len(gens)), maxCount: set.MaxCount(), timeout: set.Timeout(),
		log: cmp.Or(opts.Logger, slog.Default())}
	s.issued = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "idgen_grpc_ids_issued_total", Help: "IDs sent to gRPC clients, by generator.",
	}, []string{"generator"})
	for _, sg := range set.Gens() {
		gr := &generator{name: sg.Name, gen: sg.Gen, scheme: sg.Scheme, issued: s.issued.WithLabelValues(sg.Name),
			nextMax: MaxNextCount(sg.Scheme), batchMax: min(MaxBatch(sg.Scheme.Size), s.maxCount)}
		if l, ok := snowflake.LayoutOf(gr.scheme); ok {
			gr.layout, gr.sf = l.String(), l
			if gr.scheme.Size == 8 {
				gr.spans = l.Spans()
				_, wrapped := gr.scheme.Codec.(interface{ Unwrap() idgen.Codec })
				gr.decimal = !wrapped
			}
		}
		s.gens[sg.Name] = gr
	}
	s.names = set.Names()
	s.def = s.gens[set.Default()]
	s.metrics = grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
	if opts.Registry != nil {
		for _, c := range []prometheus.Collector{s.metrics, s.issued} {
			if err := opts.Registry.Register(c); err != nil {
				return nil, fmt.Errorf("%w: registering metrics: %w", ErrConfig, err)
			}
		}
		sc, err := serving.RegisterCollector(opts.Registry, gens)
		if err != nil {
			return nil, fmt.Errorf("%w: registering metrics: %w", ErrConfig, err)
		}
		for name, g := range s.gens {
			g.rollbackFailures = sc.RollbackFailures(name)
		}
	}
	s.health = health.NewServer()
	s.track = serving.NewTracker()
	s.calls.New = func() any { return new(callState) }
	return s, nil
}

// StreamWindow is the HTTP/2 flow-control window, in bytes, of the
// servers NewGRPCServer builds and of package client's connections: a
// NextStream batch of 10,000 64-bit IDs is 80 KB, past the 64 KiB default.
// It is idgenv1.StreamWindow.
const StreamWindow = idgenv1.StreamWindow

// NewGRPCServer returns a grpc.Server, built with StreamWindow, 4 ×
// GOMAXPROCS stream workers (grpc.NumStreamWorkers), the proto codec with
// Next's messages encoded by hand (grpc.ForceServerCodecV2), opts (which
// may override all three) and the metric interceptors, that serves s, the
// health service (SERVING) and reflection. Stop it with Drain (or call
// Shutdown before stopping it).
func (s *Server) NewGRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	opts = append([]grpc.ServerOption{grpc.InitialWindowSize(StreamWindow), grpc.InitialConnWindowSize(StreamWindow),
		grpc.NumStreamWorkers(streamWorkers()), grpc.ForceServerCodecV2(newCodec())}, opts...)
	opts = append(opts, grpc.ChainUnaryInterceptor(s.metrics.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(s.metrics.StreamServerInterceptor()))
	gs := grpc.NewServer(opts...)
	idgenv1.RegisterIDServiceServer(gs, s)
	healthpb.RegisterHealthServer(gs, s.health)
	reflection.Register(gs)
	s.metrics.InitializeMetrics(gs)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(idgenv1.IDService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	return gs
}

// streamWorkers is the count of grpc.NumStreamWorkers: goroutines that
// live across calls, so that a call runs on a stack already grown instead
// of a new goroutine's, whose growth (morestack, copystack) cost a quarter
// of the instructions of a count=1 Next. A call that finds every worker
// busy gets a goroutine of its own, as without workers.
func streamWorkers() uint32 { return uint32(4 * runtime.GOMAXPROCS(0)) }

// Shutdown sets every health status to NOT_SERVING, so that load balancers
// drain the server before it stops: health watchers are told at once.
func (s *Server) Shutdown() { s.health.Shutdown() }

// Drain stops gs, a server NewGRPCServer built: it sets health to
// NOT_SERVING (Shutdown), stops taking calls (grpc.Server.GracefulStop)
// and lets the IDService calls in flight finish until ctx ends; then it
// stops gs (grpc.Server.Stop), which ends what is left: health watches
// and reflection streams, which never end by themselves, and the calls
// ctx cut off. It returns how many unary calls (Next, Decode,
// ListGenerators) and NextStream streams were still running when ctx
// ended: 0, 0 when all finished in time.
func (s *Server) Drain(ctx context.Context, gs *grpc.Server) (calls, streams int) {
	s.Shutdown()
	stopped := make(chan struct{})
	go func() { gs.GracefulStop(); close(stopped) }()
	calls, streams = s.track.Wait(ctx)
	gs.Stop()
	<-stopped
	return calls, streams
}

// lookup returns the generator named name, the default when name is empty.
func (s *Server) lookup(name string) (*generator, error) {
	if name == "" {
		return s.def, nil
	}
	if g := s.gens[name]; g != nil {
		return g, nil
	}
	return nil, answer(serving.Classify(s.set.Unknown(name)))
}

// checkCount returns n, or 1 when n is 0, if it lies in [1, MaxCount].
func (s *Server) checkCount(what string, n uint64) (int, error) {
	if n == 0 {
		return 1, nil
	}
	if n > uint64(s.maxCount) {
		return 0, answer(serving.Classify(serving.Invalid(fmt.Sprintf("%s %d outside [1, %d]", what, n, s.maxCount))))
	}
	return int(n), nil
}

// withTimeout bounds ctx by Options.Timeout.
func (s *Server) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout > 0 {
		return context.WithTimeout(ctx, s.timeout)
	}
	return ctx, func() {}
}

// Next issues req.Count IDs, with their breakdown unless
// req.OmitBreakdown. A count whose answer
// would pass MaxMessageBytes (MaxNextCount) is InvalidArgument, naming the
// largest that fits: NextStream carries more.
func (s *Server) Next(ctx context.Context, req *idgenv1.NextRequest) (*idgenv1.NextResponse, error) {
	s.track.Start(false)
	defer s.track.End(false)
	start := time.Now()
	g, err := s.lookup(req.GetGenerator())
	if err != nil {
		return nil, err
	}
	n, err := s.checkCount("count", uint64(req.GetCount()))
	if err != nil {
		return nil, err
	}
	if n > g.nextMax {
		return nil, status.Errorf(codes.InvalidArgument, "idgen: count %d: a Next answer of generator %q holds at most %d IDs "+
			"(grpc-go's %d MiB message limit); use NextStream for more", n, g.name, g.nextMax, MaxMessageBytes>>20)
	}
	st := s.calls.Get().(*callState)
	defer s.putCall(st)
	if cap(st.ids) < n {
		st.ids = make([]idgen.ID, n)
	}
	ids := st.ids[:n]
	if s.timeout > 0 {
		st.dl.Reset(ctx, start.Add(s.timeout))
		defer st.dl.Release()
		ctx = &st.dl
	}
	if _, err := idgen.NextN(ctx, g.gen, ids); err != nil {
		return nil, s.issueError(g, err)
	}
	g.issued.Add(float64(n))
	return g.answer(ids, start.UnixMilli(), !req.GetOmitBreakdown()), nil
}

// answer builds the Next answer of ids in a few allocations whatever their
// count (one when it is 1): one block of ID messages, one of Field
// messages, one buffer for every value and text; a Snowflake breakdown
// and timestamp come from the layout's spans, not Decompose and Time, and
// a decimal Snowflake text from strconv. breakdown false leaves
// timestamp_ms and fields out.
func (g *generator) answer(ids []idgen.ID, at int64, breakdown bool) *idgenv1.NextResponse {
	n := len(ids)
	k := 0 // fields per ID from the spans
	if breakdown && g.spans != nil {
		k = len(g.spans)
	}
	if n == 1 && k == 0 {
		a := &bareAnswer{}
		g.fill(a.init(at), ids[0], a.buf[:0], nil, breakdown)
		return &a.resp
	}
	if n == 1 && k <= maxOneFields {
		a := &oneAnswer{}
		for j := range k {
			a.fptrs[j] = &a.fields[j]
		}
		g.fill(a.init(at), ids[0], a.buf[:0], a.fptrs[:k:k], breakdown)
		return &a.resp
	}
	resp := &idgenv1.NextResponse{Ids: make([]*idgenv1.ID, n), GeneratedAtMs: at}
	msgs := make([]idgenv1.ID, n)
	buf := make([]byte, 0, n*(g.scheme.Size+20)) // the value and a 64-bit ID's decimal text; UUIDs' longer text grows it
	var fptrs []*idgenv1.Field
	if k > 0 {
		fields := make([]idgenv1.Field, n*k)
		fptrs = make([]*idgenv1.Field, n*k)
		for j := range fields {
			fptrs[j] = &fields[j]
		}
	}
	for i, id := range ids {
		p := &msgs[i]
		resp.Ids[i] = p
		buf = g.fill(p, id, buf, fptrs[i*k:(i+1)*k:(i+1)*k], breakdown)
	}
	return resp
}

// maxOneFields is the most span fields a one-ID answer holds in its one
// block; a layout with more takes answer's general path.
const maxOneFields = 6

// bareAnswer is a one-ID Next answer without span fields (omit_breakdown,
// or a scheme without spans) in one allocation of 240 bytes: the messages
// point into it, and the value and text into buf (a text longer than buf's
// rest grows a slice of its own).
type bareAnswer struct {
	resp idgenv1.NextResponse
	ptr  [1]*idgenv1.ID
	msg  idgenv1.ID
	buf  [48]byte
}

// init links a's answer to its one ID message, which it returns, and sets
// the answer's time to at.
func (a *bareAnswer) init(at int64) *idgenv1.ID {
	a.resp.GeneratedAtMs = at
	a.ptr[0] = &a.msg
	a.resp.Ids = a.ptr[:]
	return &a.msg
}

// oneAnswer is a one-ID Next answer with up to maxOneFields span fields
// in one allocation (720 bytes), as bareAnswer with the Field messages.
type oneAnswer struct {
	bareAnswer
	fields [maxOneFields]idgenv1.Field
	fptrs  [maxOneFields]*idgenv1.Field
}

// fill sets p to id: its value and text appended to buf (returned) and,
// with breakdown, its timestamp and fields; fptrs holds len(g.spans)
// Field messages for a Snowflake layout (nil otherwise).
func (g *generator) fill(p *idgenv1.ID, id idgen.ID, buf []byte, fptrs []*idgenv1.Field, breakdown bool) []byte {
	start := len(buf)
	v, is64 := id.Uint64()
	if is64 {
		buf = binary.BigEndian.AppendUint64(buf, v)
	} else {
		buf = append(buf, id.Bytes()...)
	}
	p.Value = buf[start:len(buf):len(buf)]
	start = len(buf)
	if g.decimal {
		buf = strconv.AppendUint(buf, v, 10)
	} else {
		buf, _ = id.AppendText(buf)
	}
	// The bytes behind a text are never written again: a later append
	// writes past them, or to a new array.
	p.Text = unsafe.String(unsafe.SliceData(buf[start:]), len(buf)-start)
	if !breakdown {
		return buf
	}
	if g.spans == nil {
		if t := id.Time(); !t.IsZero() {
			p.TimestampMs = t.UnixMilli()
		}
		p.Fields = breakdownOf(id)
		return buf
	}
	p.Fields = fptrs
	for j, sp := range g.spans {
		f := fptrs[j]
		f.Name, f.Value, f.Bits = sp.Name, sp.Value(v), uint32(sp.Width)
		if sp.Name == snowflake.FieldTime {
			p.TimestampMs = g.sf.TickTime(int64(f.Value)).UnixMilli()
		}
	}
	return buf
}

// NextStream sends req.Count IDs (until the client cancels when 0) in
// packed batches of at most req.BatchSize IDs: the server lowers a batch
// size to MaxCount and to what fits in MaxMessageBytes (MaxBatch), and 0
// means as many as those allow. Its buffer holds min(count, batch) IDs.
func (s *Server) NextStream(req *idgenv1.NextStreamRequest, stream grpc.ServerStreamingServer[idgenv1.IDBatch]) error {
	s.track.Start(true)
	defer s.track.End(true)
	g, err := s.lookup(req.GetGenerator())
	if err != nil {
		return err
	}
	batch := g.batchMax
	if b := req.GetBatchSize(); b != 0 && uint64(b) < uint64(batch) {
		batch = int(b)
	}
	left, forever := req.GetCount(), req.GetCount() == 0
	if !forever && left < uint64(batch) {
		batch = int(left)
	}
	size := g.scheme.Size
	ids := make([]idgen.ID, batch)
	msg := &idgenv1.IDBatch{IdSize: uint32(size)}
	ctx := stream.Context()
	for forever || left > 0 {
		n := batch
		if !forever && left < uint64(n) {
			n = int(left)
		}
		bctx, cancel := s.withTimeout(ctx)
		_, err := idgen.NextN(bctx, g.gen, ids[:n])
		cancel()
		if err != nil {
			return s.issueError(g, err)
		}
		msg.Packed = pack(msg.Packed[:0], ids[:n], size)
		if err := stream.Send(msg); err != nil {
			return err
		}
		g.issued.Add(float64(n))
		left -= uint64(n)
	}
	return nil
}

// pack appends ids to b, size bytes each, big-endian.
func pack(b []byte, ids []idgen.ID, size int) []byte {
	if size == 8 {
		b = slices.Grow(b, 8*len(ids))
		for _, id := range ids {
			v, _ := id.Uint64()
			b = binary.BigEndian.AppendUint64(b, v)
		}
		return b
	}
	for _, id := range ids {
		b = append(b, id.Bytes()...)
	}
	return b
}

// Decode takes req.Id apart by the generator's scheme, checked as HTTP's
// /ids/{id} checks it (serving.Decode): a UUID of another version than the
// generator's is InvalidArgument, with HTTP's words.
func (s *Server) Decode(_ context.Context, req *idgenv1.DecodeRequest) (*idgenv1.ID, error) {
	s.track.Start(false)
	defer s.track.End(false)
	g, err := s.lookup(req.GetGenerator())
	if err != nil {
		return nil, err
	}
	id, err := serving.Decode(g.scheme, g.name, req.GetId())
	if err != nil {
		return nil, answer(serving.Classify(err))
	}
	return toProto(id), nil
}

// ListGenerators lists the generators in name order.
func (s *Server) ListGenerators(context.Context, *idgenv1.ListGeneratorsRequest) (*idgenv1.ListGeneratorsResponse, error) {
	s.track.Start(false)
	defer s.track.End(false)
	resp := &idgenv1.ListGeneratorsResponse{Default: s.def.name}
	for _, name := range s.names {
		g := s.gens[name]
		resp.Generators = append(resp.Generators, &idgenv1.Generator{Name: name, Scheme: g.scheme.Name,
			Size: uint32(g.scheme.Size), TimeOrdered: g.scheme.TimeOrdered, Layout: g.layout})
	}
	return resp, nil
}

// toProto returns id with its breakdown.
func toProto(id idgen.ID) *idgenv1.ID {
	p := &idgenv1.ID{Value: id.Bytes(), Text: id.String(), Fields: breakdownOf(id)}
	if t := id.Time(); !t.IsZero() {
		p.TimestampMs = t.UnixMilli()
	}
	return p
}

// breakdownOf returns id's fields (Scheme.Decompose) as messages.
func breakdownOf(id idgen.ID) []*idgenv1.Field {
	fields := id.Scheme().Decompose(id)
	out := make([]*idgenv1.Field, len(fields))
	for i, f := range fields {
		out[i] = &idgenv1.Field{Name: f.Name, Value: f.Value, Bits: uint32(f.Bits)}
	}
	return out
}

// issueError answers an issuing error by its class (serving.Classify):
// Unavailable with RetryInfo for what passes, FailedPrecondition for what
// waiting does not mend (a clock outside the layout's lifetime, a biz tag
// exhausted), Internal otherwise. A call its client canceled ends
// Canceled, unlogged.
func (s *Server) issueError(g *generator, err error) error {
	if errors.Is(err, context.Canceled) {
		return status.FromContextError(err).Err()
	}
	a := serving.Classify(err)
	if g.rollbackFailures != nil && errors.As(err, new(*idgen.ClockRollbackError)) {
		g.rollbackFailures.Add(1)
	}
	a.Msg = fmt.Sprintf("generator %q: %s", g.name, strings.TrimPrefix(a.Msg, "idgen: "))
	s.log.Error("grpcapi: issuing IDs failed", "generator", g.name, "code", codes.Code(a.Class.GRPC).String(), "err", err)
	return answer(a)
}

// answer is a's status: its code and text (with one leading "idgen: "),
// and RetryInfo when its class has a retry.
func answer(a serving.Answer) error {
	st := status.New(codes.Code(a.Class.GRPC), "idgen: "+strings.TrimPrefix(a.Msg, "idgen: "))
	if a.Class.Retry {
		p := st.Proto()
		p.Details = append(p.Details, retryInfo(a.Retry))
		st = status.FromProto(p)
	}
	return st.Err()
}

// retryInfoURL is the type URL of google.rpc.RetryInfo, the detail an
// Unavailable status carries.
const retryInfoURL = "type.googleapis.com/google.rpc.RetryInfo"

// retryInfo returns google.rpc.RetryInfo{retry_delay: d} as an Any, its
// one field (1, a google.protobuf.Duration) encoded by hand, as the
// genproto errdetails package would encode it, so that the module does not
// require genproto for one message.
func retryInfo(d time.Duration) *anypb.Any {
	dur, _ := proto.Marshal(durationpb.New(d))
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	return &anypb.Any{TypeUrl: retryInfoURL, Value: protowire.AppendBytes(b, dur)}
}
