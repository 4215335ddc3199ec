package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/serving"
)

// routeKind labels a request's route in the latency histogram.
type routeKind uint8

const (
	routeIDs routeKind = iota
	routeDecode
	routeGenerators
	routeHealth
	routeReady
	routeMetrics
	routeOpenAPI
	routeNotFound
	numRoutes
)

var routeNames = [numRoutes]string{"ids", "decode", "generators", "healthz", "readyz", "metrics", "openapi", "not_found"}

// codes are the status codes whose latency observers are resolved up front.
var codes = [...]int{http.StatusOK, http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed,
	http.StatusInternalServerError, http.StatusServiceUnavailable}

// latencyBuckets span 25 µs to 2.5 s: the target p99 is under 1 ms.
var latencyBuckets = [...]float64{25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1, 2.5}

// latencyBucketsNs are latencyBuckets in nanoseconds.
var latencyBucketsNs = func() (ns [len(latencyBuckets)]int64) {
	for i, s := range latencyBuckets {
		ns[i] = int64(math.Round(s * 1e9))
	}
	return ns
}()

// A latencyHist is the request-path half of one latency histogram series:
// two atomic adds per request (its bucket, the sum), where a Prometheus
// Histogram takes four and a float compare-and-swap loop. The count is
// the buckets' total, summed at scrape time, when the series is exported
// as a constant histogram. A scrape may see an observation's bucket
// without its sum, or the reverse: off by one request at most.
type latencyHist struct {
	counts [len(latencyBuckets) + 1]atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sumNs  atomic.Int64
}

func (l *latencyHist) observe(d time.Duration) {
	ns := int64(d)
	i := 0
	for i < len(latencyBucketsNs) && ns > latencyBucketsNs[i] {
		i++
	}
	l.counts[i].Add(1)
	l.sumNs.Add(ns)
}

// metric returns l as a Prometheus histogram of desc.
func (l *latencyHist) metric(desc *prometheus.Desc, labels ...string) prometheus.Metric {
	cum := make(map[float64]uint64, len(latencyBuckets))
	var n uint64
	for i, ub := range latencyBuckets {
		n += l.counts[i].Load()
		cum[ub] = n
	}
	n += l.counts[len(latencyBuckets)].Load()
	return prometheus.MustNewConstHistogram(desc, n, float64(l.sumNs.Load())/1e9, cum, labels...)
}

// metrics holds the handler's Prometheus metrics. Request-path updates are
// atomic adds; the latency histograms of the common status codes and the
// per-generator request counters are exported at scrape time by
// collector. The generators' own counters (their idgen.Stats) are
// serving.Collector's, which grpcapi shares.
type metrics struct {
	h           *Handler
	latencyDesc *prometheus.Desc
	hist        [numRoutes][len(codes)]latencyHist
	latency     *prometheus.HistogramVec // the status codes not in codes, rare
	panics      atomic.Uint64
	cut         atomic.Uint64 // responses ended without their last chunk

	issuedDesc, errorsDesc, panicsDesc, cutDesc *prometheus.Desc
}

func newMetrics(h *Handler) *metrics {
	m := &metrics{h: h}
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "idgen_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request of the ID service, by route and status code.",
		Buckets: latencyBuckets[:],
	}, []string{"route", "code"})
	m.latencyDesc = prometheus.NewDesc("idgen_http_request_duration_seconds",
		"Time to answer an HTTP request of the ID service, by route and status code.", []string{"route", "code"}, nil)
	gen := []string{"generator"}
	m.issuedDesc = prometheus.NewDesc("idgen_ids_issued_total", "IDs sent to clients, by generator.", gen, nil)
	m.errorsDesc = prometheus.NewDesc("idgen_issue_errors_total",
		"Requests that failed to get their IDs, by generator and kind (clock_rollback, lease_lost, unavailable, timeout, other).",
		[]string{"generator", "kind"}, nil)
	m.panicsDesc = prometheus.NewDesc("idgen_http_panics_total", "Panics recovered while serving a request.", nil, nil)
	m.cutDesc = prometheus.NewDesc("idgen_http_responses_cut_total",
		"Streamed responses ended without their last chunk after a 200: the generator failed mid-stream, or the client was gone or too slow for the write timeout.", nil, nil)
	return m
}

// register registers m's collector and the generators' (shared with a
// grpcapi.Server on reg over the same generators), whose rollback
// failure counters the handler's requests then count into.
func (m *metrics) register(reg prometheus.Registerer, gens map[string]idgen.Generator) error {
	if err := reg.Register(collector{m}); err != nil {
		return err
	}
	sc, err := serving.RegisterCollector(reg, gens)
	if err != nil {
		reg.Unregister(collector{m})
		return err
	}
	for name, g := range m.h.gens {
		g.rollbackFailures = sc.RollbackFailures(name)
	}
	return nil
}

// observe records one request's latency.
func (m *metrics) observe(r routeKind, code int, d time.Duration) {
	for i, c := range codes {
		if c == code {
			m.hist[r][i].observe(d)
			return
		}
	}
	m.latency.WithLabelValues(routeNames[r], strconv.Itoa(code)).Observe(d.Seconds())
}

// collector exports the latency histograms and the per-generator request
// counters at scrape time.
type collector struct{ m *metrics }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	m := c.m
	for _, d := range []*prometheus.Desc{m.latencyDesc, m.issuedDesc, m.errorsDesc, m.panicsDesc, m.cutDesc} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	for r := range numRoutes {
		for i, code := range codes {
			ch <- m.hist[r][i].metric(m.latencyDesc, routeNames[r], strconv.Itoa(code))
		}
	}
	m.latency.Collect(ch)
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	for _, name := range m.h.names {
		g := m.h.gens[name]
		counter(m.issuedDesc, g.issued.Load(), name)
		for k := range numErrKinds {
			counter(m.errorsDesc, g.errs[k].Load(), name, errKindNames[k])
		}
	}
	counter(m.panicsDesc, m.panics.Load())
	counter(m.cutDesc, m.cut.Load())
}

// as finds T in g or in a generator g wraps (an Unwrap() idgen.Generator
// method, such as the encoding= wrapper of package strategies), as
// idgen.StatsOf and idgen.ReadyOf do, for the optional interfaces of this
// package's own (availability).
func as[T any](g idgen.Generator) (T, bool) {
	for g != nil {
		if t, ok := g.(T); ok {
			return t, true
		}
		u, ok := g.(interface{ Unwrap() idgen.Generator })
		if !ok {
			break
		}
		g = u.Unwrap()
	}
	var zero T
	return zero, false
}
