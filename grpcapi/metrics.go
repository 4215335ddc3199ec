package grpcapi

import (
	"context"
	"maps"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// serverMetrics are go-grpc-middleware's server metrics (its providers/
// prometheus ServerMetrics with the handling-time histogram): the same
// names, help, labels and buckets, counted the same way, but a unary call
// of a registered method increments counters resolved once per method
// (initialize) instead of hashing its labels five times per call.
type serverMetrics struct {
	started, handled, received, sent *prometheus.CounterVec
	handling                         *prometheus.HistogramVec
	methods                          atomic.Pointer[map[string]*methodMetrics] // the unary methods by full name; replaced, never written, by initialize
}

// methodMetrics are one method's series.
type methodMetrics struct {
	started, received, sent prometheus.Counter
	handled                 [codes.Unauthenticated + 1]prometheus.Counter
	handling                prometheus.Observer
}

func newServerMetrics() *serverMetrics {
	labels := []string{"grpc_type", "grpc_service", "grpc_method"}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	return &serverMetrics{
		started: counter("grpc_server_started_total", "Total number of RPCs started on the server.", labels),
		handled: counter("grpc_server_handled_total", "Total number of RPCs completed on the server, regardless of success or failure.",
			append(labels[:3:3], "grpc_code")),
		received: counter("grpc_server_msg_received_total", "Total number of RPC stream messages received on the server.", labels),
		sent:     counter("grpc_server_msg_sent_total", "Total number of gRPC stream messages sent by the server.", labels),
		handling: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "grpc_server_handling_seconds",
			Help:    "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
			Buckets: prometheus.DefBuckets}, labels),
	}
}

func (m *serverMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
}

func (m *serverMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
}

func (m *serverMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.started, m.handled, m.received, m.sent, m.handling}
}

// initialize creates every series of gs's methods at zero, as
// go-grpc-middleware's InitializeMetrics does, and resolves the unary
// methods' counters.
func (m *serverMetrics) initialize(gs *grpc.Server) {
	methods := map[string]*methodMetrics{}
	if old := m.methods.Load(); old != nil {
		maps.Copy(methods, *old)
	}
	defer m.methods.Store(&methods)
	for service, info := range gs.GetServiceInfo() {
		for _, mi := range info.Methods {
			typ := methodType(mi.IsClientStream, mi.IsServerStream)
			mm := &methodMetrics{
				started:  m.started.WithLabelValues(typ, service, mi.Name),
				received: m.received.WithLabelValues(typ, service, mi.Name),
				sent:     m.sent.WithLabelValues(typ, service, mi.Name),
				handling: m.handling.WithLabelValues(typ, service, mi.Name),
			}
			for c := range mm.handled {
				mm.handled[c] = m.handled.WithLabelValues(typ, service, mi.Name, codes.Code(c).String())
			}
			if typ == "unary" {
				methods["/"+service+"/"+mi.Name] = mm
			}
		}
	}
}

// methodType is go-grpc-middleware's grpc_type label.
func methodType(clientStream, serverStream bool) string {
	switch {
	case clientStream && serverStream:
		return "bidi_stream"
	case clientStream:
		return "client_stream"
	case serverStream:
		return "server_stream"
	}
	return "unary"
}

// splitMethod returns the service and method of a full method name,
// "/service/method", as go-grpc-middleware splits it.
func splitMethod(full string) (string, string) {
	full = strings.TrimPrefix(full, "/")
	if i := strings.Index(full, "/"); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "unknown", "unknown"
}

// code is the status code go-grpc-middleware records for err: a context
// error's as the server sends it.
func code(err error) codes.Code {
	s, ok := status.FromError(err)
	if !ok {
		s = status.FromContextError(err)
	}
	return s.Code()
}

// unary counts a unary call: started, one message received, the handler,
// one message sent (whatever the error), handled by code, and the time. A
// method initialize resolved takes no label lookup.
func (m *serverMetrics) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	var mm *methodMetrics
	if methods := m.methods.Load(); methods != nil {
		mm = (*methods)[info.FullMethod]
	}
	if mm == nil { // a method registered after NewGRPCServer
		return m.call(ctx, req, info, handler)
	}
	start := time.Now()
	mm.started.Inc()
	mm.received.Inc()
	resp, err := handler(ctx, req)
	mm.sent.Inc()
	if c := code(err); int(c) < len(mm.handled) {
		mm.handled[c].Inc()
	} else { // a code past grpc-go's
		l := m.labels("unary", info.FullMethod)
		m.handled.WithLabelValues(l[0], l[1], l[2], c.String()).Inc()
	}
	mm.handling.Observe(time.Since(start).Seconds())
	return resp, err
}

// call is unary by label lookups, for a method initialize did not see.
func (m *serverMetrics) call(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	l := m.labels("unary", info.FullMethod)
	m.started.WithLabelValues(l[:]...).Inc()
	m.received.WithLabelValues(l[:]...).Inc()
	resp, err := handler(ctx, req)
	m.sent.WithLabelValues(l[:]...).Inc()
	m.finish(l, err, start)
	return resp, err
}

// stream counts a streaming call by label lookups: started, each message
// received and sent (whatever the error), handled by code, and the time.
func (m *serverMetrics) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	l := m.labels(methodType(info.IsClientStream, info.IsServerStream), info.FullMethod)
	m.started.WithLabelValues(l[:]...).Inc()
	err := handler(srv, &countedStream{ServerStream: ss, m: m, l: l})
	m.finish(l, err, start)
	return err
}

// labels returns the grpc_type, grpc_service and grpc_method of a call.
func (m *serverMetrics) labels(typ, full string) [3]string {
	service, method := splitMethod(full)
	return [3]string{typ, service, method}
}

// finish counts a call handled with err, started at start.
func (m *serverMetrics) finish(l [3]string, err error, start time.Time) {
	m.handled.WithLabelValues(l[0], l[1], l[2], code(err).String()).Inc()
	m.handling.WithLabelValues(l[:]...).Observe(time.Since(start).Seconds())
}

// countedStream counts a stream's messages.
type countedStream struct {
	grpc.ServerStream
	m *serverMetrics
	l [3]string
}

func (s *countedStream) SendMsg(msg any) error {
	err := s.ServerStream.SendMsg(msg)
	s.m.sent.WithLabelValues(s.l[:]...).Inc()
	return err
}

func (s *countedStream) RecvMsg(msg any) error {
	err := s.ServerStream.RecvMsg(msg)
	s.m.received.WithLabelValues(s.l[:]...).Inc()
	return err
}
