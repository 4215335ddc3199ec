package serving

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idgenkit/idgen"
)

// A Collector is the Prometheus collector of a named generator set's
// counters, the one both transports (httpapi, grpcapi) register: at each
// scrape it reads each generator's idgen.Stats once (idgen.StatsOf, which
// looks through wrappers such as encoding=) and exports the groups of
// fields the generator fills, by generator name. A generator without
// Stats exports only idgen_clock_rollback_failures_total, counted from the
// requests a transport failed with a clock rollback (RollbackFailures).
//
// The metric names and labels are the ones the alerting rules in
// deploy/prometheus read; keep them.
type Collector struct {
	names []string // sorted
	gens  []idgen.Generator
	// rollbackFailures are the requests failed with a clock rollback, by
	// names' index, for the generators whose Stats do not count them.
	rollbackFailures []atomic.Uint64
}

// NewCollector returns the Collector of gens by name.
func NewCollector(gens map[string]idgen.Generator) *Collector {
	c := &Collector{names: slices.Sorted(maps.Keys(gens))}
	for _, name := range c.names {
		c.gens = append(c.gens, gens[name])
	}
	c.rollbackFailures = make([]atomic.Uint64, len(c.names))
	return c
}

// RegisterCollector registers the Collector of gens on reg and returns it.
// When reg holds one already over the same generators under the same
// names (the other transport of one server registered it), it returns
// that one, so that the two transports share one set of series. A
// Collector over other generators is an error: one registry exports one
// generator set.
func RegisterCollector(reg prometheus.Registerer, gens map[string]idgen.Generator) (*Collector, error) {
	c := NewCollector(gens)
	err := reg.Register(c)
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if prev, ok := are.ExistingCollector.(*Collector); ok && prev.same(c) {
			return prev, nil
		}
		return nil, errors.New("the registry holds the metrics of another generator set")
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// same reports whether c and d serve the same generators under the same
// names. Generators of a type that == cannot compare count as different.
func (c *Collector) same(d *Collector) bool {
	if !slices.Equal(c.names, d.names) {
		return false
	}
	for i, g := range c.gens {
		if reflect.TypeOf(g) != reflect.TypeOf(d.gens[i]) || !reflect.TypeOf(g).Comparable() || g != d.gens[i] {
			return false
		}
	}
	return true
}

// RollbackFailures returns the counter of the requests for generator name
// that a transport failed with a clock rollback (*idgen.ClockRollbackError),
// exported as idgen_clock_rollback_failures_total for a generator whose
// Stats do not count them; nil when c has no generator name.
func (c *Collector) RollbackFailures(name string) *atomic.Uint64 {
	i, ok := slices.BinarySearch(c.names, name)
	if !ok {
		return nil
	}
	return &c.rollbackFailures[i]
}

var (
	genLabel = []string{"generator"}

	rbFailDesc = prometheus.NewDesc("idgen_clock_rollback_failures_total",
		"Clock rollbacks that failed an issue, by generator: from the generator's own counter when it has one, else the requests answered 503 for a rollback.", genLabel, nil)
	rbWaitDesc = prometheus.NewDesc("idgen_clock_rollback_waits_total",
		"Clock rollbacks the generator waited out; present only for generators that count them.", genLabel, nil)
	seqWaitDesc = prometheus.NewDesc("idgen_sequence_exhaustion_waits_total",
		"Waits for the next tick because a tick's sequence was used up; present only for generators that count them.", genLabel, nil)
	aheadDesc = prometheus.NewDesc("idgen_clock_ahead_seconds",
		"How far ahead of its clock a generator issues (rollback=hold), in seconds; present only for generators that report it.", genLabel, nil)
	driftDesc = prometheus.NewDesc("idgen_clock_drift_seconds",
		"The system wall clock minus a generator's clock, in seconds (NTP steps since start); present only for generators that report it.", genLabel, nil)
	stallsDesc = prometheus.NewDesc("idgen_clock_stalls_total",
		"Stalls of a generator's clock: a reading that stayed the same for many ticks while IDs were asked for; present only for generators that count them.", genLabel, nil)
	stepsDesc = prometheus.NewDesc("idgen_clock_steps_total",
		"Wall clock steps a generator's clock followed, by direction (forward, back); after a step back the rollback policy applies. Present only for generators on the Snowflake core.",
		[]string{"generator", "direction"}, nil)
	steppedDesc = prometheus.NewDesc("idgen_clock_stepped_seconds",
		"The sum of the wall clock steps a generator's clock followed, in seconds, > 0 forward. Present only for generators on the Snowflake core.", genLabel, nil)
	behindDesc = prometheus.NewDesc("idgen_clock_behind_high_water_seconds",
		"How far the clock is behind the high-water mark read at start or at a new lease identity, in seconds; 0 once passed. Present only for generators that keep a mark.", genLabel, nil)
	maxAheadDesc = prometheus.NewDesc("idgen_clock_max_ahead_seconds",
		"How far ahead of its clock a generator may issue (max_ahead under rollback=hold or bump), in seconds; 0 under the policies that never issue ahead.", genLabel, nil)
	endDesc = prometheus.NewDesc("idgen_layout_end_timestamp_seconds",
		"When the generator's layout runs out of time bits, as a Unix time in seconds: from then on it issues nothing.", genLabel, nil)
	leaseHeldDesc = prometheus.NewDesc("idgen_lease_held",
		"1 while the generator holds its worker-ID lease, 0 while it is lost (no ID is issued). Present only for leased worker IDs.", genLabel, nil)
	leaseAgeDesc = prometheus.NewDesc("idgen_lease_renewal_age_seconds",
		"Seconds since the start of the worker-ID lease's last good renewal; the node stops issuing when it reaches idgen_lease_lost_after_seconds.", genLabel, nil)
	leaseLostAfterDesc = prometheus.NewDesc("idgen_lease_lost_after_seconds",
		"The renewal age at which the node counts its worker-ID lease lost (LostAfter, ttl/2 by default).", genLabel, nil)
	remainingDesc = prometheus.NewDesc("idgen_segment_ids_remaining",
		"IDs a segment generator holds in memory, issuable without a store round trip.", genLabel, nil)
	segWaitDesc = prometheus.NewDesc("idgen_segment_waits_total",
		"Calls that found both segments of a segment generator empty and waited for a store fetch.", genLabel, nil)
	segFetchErrDesc = prometheus.NewDesc("idgen_segment_fetch_errors_total",
		"Failed segment fetches from the store.", genLabel, nil)
	ticketServersDesc = prometheus.NewDesc("idgen_ticket_servers",
		"Ticket servers a ticket generator round-robins over.", genLabel, nil)
	ticketDownDesc = prometheus.NewDesc("idgen_ticket_servers_down",
		"Ticket servers down now: not joined yet, or skipped for the cooldown after a failure.", genLabel, nil)

	collectorDescs = []*prometheus.Desc{rbFailDesc, rbWaitDesc, seqWaitDesc, aheadDesc, driftDesc, stallsDesc, stepsDesc, steppedDesc,
		behindDesc, maxAheadDesc, endDesc, leaseHeldDesc, leaseAgeDesc, leaseLostAfterDesc, remainingDesc, segWaitDesc, segFetchErrDesc,
		ticketServersDesc, ticketDownDesc}
)

// Describe sends the descriptors of every metric c may export.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range collectorDescs {
		ch <- d
	}
}

// Collect reads each generator's Stats and sends its metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for i, name := range c.names {
		st, _ := idgen.StatsOf(c.gens[i])
		collectStats(ch, name, st, c.rollbackFailures[i].Load())
	}
}

// collectStats sends the metrics of st, generator name's Stats (zero when
// it has none); rollbackFailures is the transports' count, exported when
// st does not count rollbacks.
func collectStats(ch chan<- prometheus.Metric, name string, st idgen.Stats, rollbackFailures uint64) {
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), name)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, name)
	}
	seconds := func(d *prometheus.Desc, v interface{ Seconds() float64 }) { gauge(d, v.Seconds()) }
	if !st.Has(idgen.StatsClock) {
		counter(rbFailDesc, rollbackFailures)
	} else {
		counter(rbFailDesc, st.ClockRollbackFailures)
		counter(rbWaitDesc, st.ClockRollbackWaits)
		counter(seqWaitDesc, st.SequenceWaits)
		counter(stallsDesc, st.ClockStalls)
		ch <- prometheus.MustNewConstMetric(stepsDesc, prometheus.CounterValue, float64(st.ClockStepsForward), name, "forward")
		ch <- prometheus.MustNewConstMetric(stepsDesc, prometheus.CounterValue, float64(st.ClockStepsBack), name, "back")
		seconds(steppedDesc, st.ClockStepped)
		seconds(aheadDesc, st.Ahead)
		seconds(driftDesc, st.Drift)
		seconds(behindDesc, st.BehindHighWater)
		seconds(maxAheadDesc, st.MaxAhead)
		if !st.LayoutEnd.IsZero() {
			gauge(endDesc, float64(st.LayoutEnd.Unix()))
		}
	}
	if st.Has(idgen.StatsLease) {
		held := 0.0
		if st.Lease.Held {
			held = 1
		}
		gauge(leaseHeldDesc, held)
		seconds(leaseAgeDesc, st.Lease.SinceRenewal)
		seconds(leaseLostAfterDesc, st.Lease.LostAfter)
	}
	if st.Has(idgen.StatsSegment) {
		gauge(remainingDesc, float64(max(0, st.Remaining)))
		counter(segWaitDesc, uint64(max(0, st.Waits)))
		counter(segFetchErrDesc, uint64(max(0, st.FetchErrors)))
	}
	if st.Has(idgen.StatsTickets) {
		gauge(ticketServersDesc, float64(st.TicketServers))
		gauge(ticketDownDesc, float64(st.TicketServersDown))
	}
}
