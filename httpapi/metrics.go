package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/segstats"
)

// Counters a Generator may expose for /metrics, detected with a type
// assertion at each scrape. They are plain methods, so that a library
// implements them without importing httpapi. A segment generator's IDs in
// memory are read from its Stats() segstats.Stats.
type (
	// A RollbackCounter counts the clock rollbacks a generator met: those
	// it waited out (policies wait and wait-then-fail) and those it failed
	// on. Without it the handler counts the failures its own requests got,
	// and cannot see waits.
	RollbackCounter interface {
		ClockRollbackWaits() uint64
		ClockRollbackFailures() uint64
	}
	// A SequenceWaitCounter counts the times a generator waited for the
	// next tick because the tick's sequence was used up.
	SequenceWaitCounter interface {
		SequenceWaits() uint64
	}
	// A ClockAheadReporter tells how far ahead of its clock a generator
	// issues: the start of the last tick issued minus the clock's reading,
	// 0 when not ahead (a Snowflake generator under rollback=hold after a
	// rollback or a restart behind its high-water mark).
	ClockAheadReporter interface {
		ClockAhead() time.Duration
	}
	// A ClockDriftReporter tells how far the system wall clock is from a
	// generator's clock, > 0 when the wall clock is ahead (NTP steps the
	// default Snowflake clock does not follow).
	ClockDriftReporter interface {
		ClockDrift() time.Duration
	}
	// A ClockStallCounter counts the stalls of a generator's clock: a
	// reading that stayed the same for many ticks while IDs were asked for
	// (snowflake.StallTicks).
	ClockStallCounter interface {
		ClockStalls() uint64
	}
	// A HighWaterReporter tells how far its clock is behind the high-water
	// mark read at start (a restart) or at a new lease identity, and that
	// mark; 0 once the clock has passed it.
	HighWaterReporter interface {
		BehindHighWater() (behind time.Duration, mark time.Time)
	}
	// A MaxAheadReporter tells how far ahead of its clock a generator may
	// issue (snowflake's max_ahead under rollback=hold or bump), 0 when it
	// never issues ahead.
	MaxAheadReporter interface {
		MaxAhead() time.Duration
	}
	// A LayoutEnder tells when its layout's time field runs out.
	LayoutEnder interface {
		LayoutEnd() time.Time
	}
	// A LeaseReporter tells the status of the worker-ID lease it issues
	// under; ok is false when its worker ID is not leased from a store.
	LeaseReporter interface {
		LeaseStatus() (st idgen.LeaseStatus, ok bool)
	}
	// A TicketServersReporter tells how many of its ticket servers are
	// down and how many it has (segment.Tickets).
	TicketServersReporter interface {
		ServersDown() (down, total int)
	}
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
// per-generator counters are exported at scrape time by collect.
type metrics struct {
	h           *Handler
	latencyDesc *prometheus.Desc
	hist        [numRoutes][len(codes)]latencyHist
	latency     *prometheus.HistogramVec // the status codes not in codes, rare
	panics      atomic.Uint64
	cut         atomic.Uint64 // responses ended without their last chunk

	issuedDesc, rbFailDesc, rbWaitDesc, seqWaitDesc, remainingDesc, aheadDesc, driftDesc, stallsDesc, errorsDesc, panicsDesc, cutDesc *prometheus.Desc
	behindDesc, maxAheadDesc, endDesc, leaseHeldDesc, leaseAgeDesc, leaseLostAfterDesc                                                *prometheus.Desc
	segWaitDesc, segFetchErrDesc, ticketServersDesc, ticketDownDesc                                                                   *prometheus.Desc
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
	m.rbFailDesc = prometheus.NewDesc("idgen_clock_rollback_failures_total",
		"Clock rollbacks that failed an issue, by generator: from the generator's own counter when it has one, else the requests answered 503 for a rollback.", gen, nil)
	m.rbWaitDesc = prometheus.NewDesc("idgen_clock_rollback_waits_total",
		"Clock rollbacks the generator waited out; present only for generators that count them.", gen, nil)
	m.seqWaitDesc = prometheus.NewDesc("idgen_sequence_exhaustion_waits_total",
		"Waits for the next tick because a tick's sequence was used up; present only for generators that count them.", gen, nil)
	m.remainingDesc = prometheus.NewDesc("idgen_segment_ids_remaining",
		"IDs a segment generator holds in memory, issuable without a store round trip.", gen, nil)
	m.aheadDesc = prometheus.NewDesc("idgen_clock_ahead_seconds",
		"How far ahead of its clock a generator issues (rollback=hold), in seconds; present only for generators that report it.", gen, nil)
	m.driftDesc = prometheus.NewDesc("idgen_clock_drift_seconds",
		"The system wall clock minus a generator's clock, in seconds (NTP steps since start); present only for generators that report it.", gen, nil)
	m.stallsDesc = prometheus.NewDesc("idgen_clock_stalls_total",
		"Stalls of a generator's clock: a reading that stayed the same for many ticks while IDs were asked for; present only for generators that count them.", gen, nil)
	m.errorsDesc = prometheus.NewDesc("idgen_issue_errors_total",
		"Requests that failed to get their IDs, by generator and kind (clock_rollback, lease_lost, unavailable, timeout, other).",
		[]string{"generator", "kind"}, nil)
	m.behindDesc = prometheus.NewDesc("idgen_clock_behind_high_water_seconds",
		"How far the clock is behind the high-water mark read at start or at a new lease identity, in seconds; 0 once passed. Present only for generators that keep a mark.", gen, nil)
	m.maxAheadDesc = prometheus.NewDesc("idgen_clock_max_ahead_seconds",
		"How far ahead of its clock a generator may issue (max_ahead under rollback=hold or bump), in seconds; 0 under the policies that never issue ahead.", gen, nil)
	m.endDesc = prometheus.NewDesc("idgen_layout_end_timestamp_seconds",
		"When the generator's layout runs out of time bits, as a Unix time in seconds: from then on it issues nothing.", gen, nil)
	m.leaseHeldDesc = prometheus.NewDesc("idgen_lease_held",
		"1 while the generator holds its worker-ID lease, 0 while it is lost (no ID is issued). Present only for leased worker IDs.", gen, nil)
	m.leaseAgeDesc = prometheus.NewDesc("idgen_lease_renewal_age_seconds",
		"Seconds since the start of the worker-ID lease's last good renewal; the node stops issuing when it reaches idgen_lease_lost_after_seconds.", gen, nil)
	m.leaseLostAfterDesc = prometheus.NewDesc("idgen_lease_lost_after_seconds",
		"The renewal age at which the node counts its worker-ID lease lost (LostAfter, ttl/2 by default).", gen, nil)
	m.segWaitDesc = prometheus.NewDesc("idgen_segment_waits_total",
		"Calls that found both segments of a segment generator empty and waited for a store fetch.", gen, nil)
	m.segFetchErrDesc = prometheus.NewDesc("idgen_segment_fetch_errors_total",
		"Failed segment fetches from the store.", gen, nil)
	m.ticketServersDesc = prometheus.NewDesc("idgen_ticket_servers",
		"Ticket servers a ticket generator round-robins over.", gen, nil)
	m.ticketDownDesc = prometheus.NewDesc("idgen_ticket_servers_down",
		"Ticket servers down now: not joined yet, or skipped for the cooldown after a failure.", gen, nil)
	m.panicsDesc = prometheus.NewDesc("idgen_http_panics_total", "Panics recovered while serving a request.", nil, nil)
	m.cutDesc = prometheus.NewDesc("idgen_http_responses_cut_total",
		"Streamed responses ended without their last chunk after a 200: the generator failed mid-stream, or the client was gone or too slow for the write timeout.", nil, nil)
	return m
}

func (m *metrics) register(reg prometheus.Registerer) error {
	return reg.Register(collector{m})
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

// collector exports the per-generator counters at scrape time.
type collector struct{ m *metrics }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	m := c.m
	for _, d := range []*prometheus.Desc{m.latencyDesc, m.issuedDesc, m.rbFailDesc, m.rbWaitDesc, m.seqWaitDesc, m.remainingDesc, m.aheadDesc, m.driftDesc, m.stallsDesc, m.errorsDesc, m.panicsDesc, m.cutDesc,
		m.behindDesc, m.maxAheadDesc, m.endDesc, m.leaseHeldDesc, m.leaseAgeDesc, m.leaseLostAfterDesc, m.segWaitDesc, m.segFetchErrDesc, m.ticketServersDesc, m.ticketDownDesc} {
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
	gauge := func(d *prometheus.Desc, v float64, name string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, name)
	}
	for _, name := range m.h.names {
		g := m.h.gens[name]
		counter(m.issuedDesc, g.issued.Load(), name)
		if rc, ok := as[RollbackCounter](g.gen); ok {
			counter(m.rbFailDesc, rc.ClockRollbackFailures(), name)
			counter(m.rbWaitDesc, rc.ClockRollbackWaits(), name)
		} else {
			counter(m.rbFailDesc, g.rollbackFailures.Load(), name)
		}
		if sc, ok := as[SequenceWaitCounter](g.gen); ok {
			counter(m.seqWaitDesc, sc.SequenceWaits(), name)
		}
		if s, ok := as[segmentStats](g.gen); ok {
			st := s.Stats()
			gauge(m.remainingDesc, float64(max(0, st.Remaining)), name)
			counter(m.segWaitDesc, uint64(st.Waits), name)
			counter(m.segFetchErrDesc, uint64(st.FetchErrors), name)
		}
		if hr, ok := as[HighWaterReporter](g.gen); ok {
			behind, _ := hr.BehindHighWater()
			gauge(m.behindDesc, behind.Seconds(), name)
		}
		if mr, ok := as[MaxAheadReporter](g.gen); ok {
			gauge(m.maxAheadDesc, mr.MaxAhead().Seconds(), name)
		}
		if le, ok := as[LayoutEnder](g.gen); ok {
			gauge(m.endDesc, float64(le.LayoutEnd().Unix()), name)
		}
		if lr, ok := as[LeaseReporter](g.gen); ok {
			if st, ok := lr.LeaseStatus(); ok {
				held := 0.0
				if st.Held {
					held = 1
				}
				gauge(m.leaseHeldDesc, held, name)
				gauge(m.leaseAgeDesc, st.SinceRenewal.Seconds(), name)
				gauge(m.leaseLostAfterDesc, st.LostAfter.Seconds(), name)
			}
		}
		if tr, ok := as[TicketServersReporter](g.gen); ok {
			down, total := tr.ServersDown()
			gauge(m.ticketServersDesc, float64(total), name)
			gauge(m.ticketDownDesc, float64(down), name)
		}
		if ar, ok := as[ClockAheadReporter](g.gen); ok {
			ch <- prometheus.MustNewConstMetric(m.aheadDesc, prometheus.GaugeValue, ar.ClockAhead().Seconds(), name)
		}
		if dr, ok := as[ClockDriftReporter](g.gen); ok {
			ch <- prometheus.MustNewConstMetric(m.driftDesc, prometheus.GaugeValue, dr.ClockDrift().Seconds(), name)
		}
		if sc, ok := as[ClockStallCounter](g.gen); ok {
			counter(m.stallsDesc, sc.ClockStalls(), name)
		}
		for k := range numErrKinds {
			counter(m.errorsDesc, g.errs[k].Load(), name, errKindNames[k])
		}
	}
	counter(m.panicsDesc, m.panics.Load())
	counter(m.cutDesc, m.cut.Load())
}

// as finds T in g or in a generator g wraps (an Unwrap() idgen.Generator
// method, such as the encoding= wrapper of package strategies), so that a
// wrapped generator keeps its metrics and readiness.
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

// A segmentStats is a generator that reports segment.Stats (segstats.Stats): a
// *segment.Allocator, or a wrapper of one that passes its Stats on.
type segmentStats interface{ Stats() segstats.Stats }
