package serving_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/serving"
)

// statsGen is a generator whose Stats are st.
type statsGen struct{ st idgen.Stats }

func (g *statsGen) Scheme() *idgen.Scheme { return idgen.Int64Scheme() }
func (g *statsGen) Next(context.Context) (idgen.ID, error) {
	return idgen.Int64Scheme().FromUint64(1), nil
}
func (g *statsGen) Stats() idgen.Stats { return g.st }

// plainGen is a generator without Stats.
type plainGen struct{}

func (plainGen) Scheme() *idgen.Scheme { return idgen.Int64Scheme() }
func (plainGen) Next(context.Context) (idgen.ID, error) {
	return idgen.Int64Scheme().FromUint64(1), nil
}

// wrap is a wrapper generator.
type wrap struct{ idgen.Generator }

func (w wrap) Unwrap() idgen.Generator { return w.Generator }

// TestCollector: every group of Stats fields a generator fills, read
// through two wrappers, under the names the alerting rules read; a
// generator without Stats exports only the rollback failures a transport
// counted.
func TestCollector(t *testing.T) {
	clock := &statsGen{idgen.Stats{Kinds: idgen.StatsClock | idgen.StatsLease,
		SequenceWaits: 11, ClockRollbackWaits: 7, ClockRollbackFailures: 2, ClockStalls: 3,
		ClockStepsForward: 4, ClockStepsBack: 1, ClockStepped: 2500 * time.Millisecond,
		Ahead: 1500 * time.Millisecond, MaxAhead: 10 * time.Second, Drift: -250 * time.Millisecond, BehindHighWater: 5 * time.Second,
		LayoutEnd: time.Unix(3_000_000_000, 0),
		Lease:     idgen.LeaseStatus{Held: false, SinceRenewal: 16 * time.Second, LostAfter: 15 * time.Second}}}
	seg := &statsGen{idgen.Stats{Kinds: idgen.StatsSegment | idgen.StatsTickets, Remaining: -1, Waits: 4, FetchErrors: 3,
		TicketServers: 2, TicketServersDown: 1}}
	c := serving.NewCollector(map[string]idgen.Generator{"sf": wrap{wrap{clock}}, "seg": seg, "plain": plainGen{}})
	c.RollbackFailures("plain").Add(5)
	c.RollbackFailures("sf").Add(100) // the generator counts its own: not exported
	if c.RollbackFailures("other") != nil {
		t.Error(`RollbackFailures("other") != nil; want nil for a name not served`)
	}
	want := `
# HELP idgen_clock_ahead_seconds How far ahead of its clock a generator issues (rollback=hold), in seconds; present only for generators that report it.
# TYPE idgen_clock_ahead_seconds gauge
idgen_clock_ahead_seconds{generator="sf"} 1.5
# HELP idgen_clock_behind_high_water_seconds How far the clock is behind the high-water mark read at start or at a new lease identity, in seconds; 0 once passed. Present only for generators that keep a mark.
# TYPE idgen_clock_behind_high_water_seconds gauge
idgen_clock_behind_high_water_seconds{generator="sf"} 5
# HELP idgen_clock_drift_seconds The system wall clock minus a generator's clock, in seconds (NTP steps since start); present only for generators that report it.
# TYPE idgen_clock_drift_seconds gauge
idgen_clock_drift_seconds{generator="sf"} -0.25
# HELP idgen_clock_max_ahead_seconds How far ahead of its clock a generator may issue (max_ahead under rollback=hold or bump), in seconds; 0 under the policies that never issue ahead.
# TYPE idgen_clock_max_ahead_seconds gauge
idgen_clock_max_ahead_seconds{generator="sf"} 10
# HELP idgen_clock_rollback_failures_total Clock rollbacks that failed an issue, by generator: from the generator's own counter when it has one, else the requests answered 503 for a rollback.
# TYPE idgen_clock_rollback_failures_total counter
idgen_clock_rollback_failures_total{generator="plain"} 5
idgen_clock_rollback_failures_total{generator="seg"} 0
idgen_clock_rollback_failures_total{generator="sf"} 2
# HELP idgen_clock_rollback_waits_total Clock rollbacks the generator waited out; present only for generators that count them.
# TYPE idgen_clock_rollback_waits_total counter
idgen_clock_rollback_waits_total{generator="sf"} 7
# HELP idgen_clock_stalls_total Stalls of a generator's clock: a reading that stayed the same for many ticks while IDs were asked for; present only for generators that count them.
# TYPE idgen_clock_stalls_total counter
idgen_clock_stalls_total{generator="sf"} 3
# HELP idgen_clock_stepped_seconds The sum of the wall clock steps a generator's clock followed, in seconds, > 0 forward. Present only for generators on the Snowflake core.
# TYPE idgen_clock_stepped_seconds gauge
idgen_clock_stepped_seconds{generator="sf"} 2.5
# HELP idgen_clock_steps_total Wall clock steps a generator's clock followed, by direction (forward, back); after a step back the rollback policy applies. Present only for generators on the Snowflake core.
# TYPE idgen_clock_steps_total counter
idgen_clock_steps_total{direction="back",generator="sf"} 1
idgen_clock_steps_total{direction="forward",generator="sf"} 4
# HELP idgen_layout_end_timestamp_seconds When the generator's layout runs out of time bits, as a Unix time in seconds: from then on it issues nothing.
# TYPE idgen_layout_end_timestamp_seconds gauge
idgen_layout_end_timestamp_seconds{generator="sf"} 3e+09
# HELP idgen_lease_held 1 while the generator holds its worker-ID lease, 0 while it is lost (no ID is issued). Present only for leased worker IDs.
# TYPE idgen_lease_held gauge
idgen_lease_held{generator="sf"} 0
# HELP idgen_lease_lost_after_seconds The renewal age at which the node counts its worker-ID lease lost (LostAfter, ttl/2 by default).
# TYPE idgen_lease_lost_after_seconds gauge
idgen_lease_lost_after_seconds{generator="sf"} 15
# HELP idgen_lease_renewal_age_seconds Seconds since the start of the worker-ID lease's last good renewal; the node stops issuing when it reaches idgen_lease_lost_after_seconds.
# TYPE idgen_lease_renewal_age_seconds gauge
idgen_lease_renewal_age_seconds{generator="sf"} 16
# HELP idgen_segment_fetch_errors_total Failed segment fetches from the store.
# TYPE idgen_segment_fetch_errors_total counter
idgen_segment_fetch_errors_total{generator="seg"} 3
# HELP idgen_segment_ids_remaining IDs a segment generator holds in memory, issuable without a store round trip.
# TYPE idgen_segment_ids_remaining gauge
idgen_segment_ids_remaining{generator="seg"} 0
# HELP idgen_segment_waits_total Calls that found both segments of a segment generator empty and waited for a store fetch.
# TYPE idgen_segment_waits_total counter
idgen_segment_waits_total{generator="seg"} 4
# HELP idgen_sequence_exhaustion_waits_total Waits for the next tick because a tick's sequence was used up; present only for generators that count them.
# TYPE idgen_sequence_exhaustion_waits_total counter
idgen_sequence_exhaustion_waits_total{generator="sf"} 11
# HELP idgen_ticket_servers Ticket servers a ticket generator round-robins over.
# TYPE idgen_ticket_servers gauge
idgen_ticket_servers{generator="seg"} 2
# HELP idgen_ticket_servers_down Ticket servers down now: not joined yet, or skipped for the cooldown after a failure.
# TYPE idgen_ticket_servers_down gauge
idgen_ticket_servers_down{generator="seg"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// TestRegisterCollectorShared: the second transport of a server, on the
// same registry over the same generators, shares the first one's
// Collector (one set of series, one set of rollback counters); another
// generator set on that registry is refused.
func TestRegisterCollectorShared(t *testing.T) {
	g := &statsGen{}
	gens := map[string]idgen.Generator{"a": g, "b": plainGen{}}
	reg := prometheus.NewRegistry()
	first, err := serving.RegisterCollector(reg, gens)
	if err != nil {
		t.Fatal(err)
	}
	second, err := serving.RegisterCollector(reg, map[string]idgen.Generator{"b": plainGen{}, "a": g})
	if err != nil || second != first {
		t.Fatalf("RegisterCollector over the same generators = %p, %v; want the first, %p, nil", second, err, first)
	}
	second.RollbackFailures("b").Add(1)
	want := `
# HELP idgen_clock_rollback_failures_total Clock rollbacks that failed an issue, by generator: from the generator's own counter when it has one, else the requests answered 503 for a rollback.
# TYPE idgen_clock_rollback_failures_total counter
idgen_clock_rollback_failures_total{generator="a"} 0
idgen_clock_rollback_failures_total{generator="b"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "idgen_clock_rollback_failures_total"); err != nil {
		t.Errorf("generator b's rollback failure, counted through the second: %v", err)
	}
	for _, other := range []map[string]idgen.Generator{
		{"a": &statsGen{}, "b": plainGen{}}, // another generator under a name
		{"a": g},                            // fewer names
	} {
		const want = "the registry holds the metrics of another generator set"
		if c, err := serving.RegisterCollector(reg, other); err == nil || err.Error() != want {
			t.Errorf("RegisterCollector over another generator set = %p, %v; want the error %q", c, err, want)
		}
	}
}
