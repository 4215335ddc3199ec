package httpapi_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// TestBehindHighWater restarts a generator 5 s behind its high-water file
// (an injected clock; the state sits at the tick before the mark, 4.999 s
// ahead): /readyz says "behind the high-water mark by 5s" in
// words, as a 200 under rollback=hold and in the 503's error under
// wait-then-fail, and idgen_clock_behind_high_water_seconds is 5; once the
// clock passes the mark the words go and the gauge is 0.
func TestBehindHighWater(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	mark := start.Add(5 * time.Second)
	hw := snowflake.FileHighWater{Path: filepath.Join(t.TempDir(), "hw")}
	if err := hw.Store(context.Background(), mark); err != nil {
		t.Fatal(err)
	}
	clk := newFakeClock(start)
	gen := func(policy snowflake.Policy) *snowflake.Generator {
		g, err := snowflake.New(context.Background(), snowflake.Config{Layout: twitter, Clock: clk, Rollback: policy, HighWater: hw})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	words := "the clock is behind the high-water mark by 5s (after a restart, or a worker ID taken over): " +
		"IDs wait, fail or run ahead of the clock by rollback= until 2026-11-22T10:00:05Z"

	srv, _ := serve(t, map[string]idgen.Generator{"default": gen(snowflake.Hold)}, httpapi.Options{})
	r := get(t, srv.URL+"/readyz")
	want := `{"status":"ready","generators":{"default":{"clock_drift_seconds":0,"clock_ahead_seconds":4.999,` +
		`"behind_high_water_seconds":5,"high_water":"` + words + `"}}}` + "\n"
	if r.code != http.StatusOK || string(r.body) != want {
		t.Errorf("GET /readyz under hold = %d %s; want 200 %s", r.code, r.body, want)
	}
	if got := scrape(t, srv.URL, `idgen_clock_behind_high_water_seconds{generator="default"}`); got != 5 {
		t.Errorf("idgen_clock_behind_high_water_seconds = %v; want 5", got)
	}
	if got := scrape(t, srv.URL, `idgen_clock_max_ahead_seconds{generator="default"}`); got != 10 {
		t.Errorf("idgen_clock_max_ahead_seconds = %v; want 10 (the default max_ahead)", got)
	}

	srv2, _ := serve(t, map[string]idgen.Generator{"default": gen(snowflake.WaitThenFail)}, httpapi.Options{})
	checkError(t, get(t, srv2.URL+"/readyz"), http.StatusServiceUnavailable, "; "+words)
	if got := scrape(t, srv2.URL, `idgen_clock_max_ahead_seconds{generator="default"}`); got != 0 {
		t.Errorf("idgen_clock_max_ahead_seconds under wait-then-fail = %v; want 0", got)
	}

	clk.Step(6 * time.Second)
	r = get(t, srv2.URL+"/readyz")
	if want := `{"status":"ready","generators":{"default":{"clock_drift_seconds":0,"clock_ahead_seconds":0}}}` + "\n"; r.code != http.StatusOK || string(r.body) != want {
		t.Errorf("GET /readyz past the mark = %d %s; want 200 %s", r.code, r.body, want)
	}
	if got := scrape(t, srv2.URL, `idgen_clock_behind_high_water_seconds{generator="default"}`); got != 0 {
		t.Errorf("idgen_clock_behind_high_water_seconds past the mark = %v; want 0", got)
	}
}

// opsGen reports ticket servers, a lease when leased, and seg.
type opsGen struct {
	counterGen
	lease  idgen.LeaseStatus
	leased bool
	down   int
	seg    segment.Stats
}

func (g *opsGen) Stats() idgen.Stats {
	st := g.seg
	st.Kinds |= idgen.StatsTickets
	st.TicketServers, st.TicketServersDown = 2, g.down
	if g.leased {
		st.Kinds |= idgen.StatsLease
		st.Lease = g.lease
	}
	return st
}

// TestOpsMetrics: the gauges and counters the alerting rules in
// deploy/prometheus read, under the names the rules use.
func TestOpsMetrics(t *testing.T) {
	lease := &opsGen{leased: true, lease: idgen.LeaseStatus{Held: false, SinceRenewal: 16 * time.Second, LostAfter: 15 * time.Second}, down: 1}
	static := &opsGen{}
	seg := &opsGen{seg: segment.Stats{Kinds: idgen.StatsSegment, Waits: 4, FetchErrors: 3, Remaining: 10}}
	sf := newSnowflake(t, nil, snowflake.Fail, nil)
	srv, _ := serve(t, map[string]idgen.Generator{"lease": lease, "static": static, "seg": seg, "sf": sf}, httpapi.Options{Default: "sf"})
	for _, c := range []struct {
		metric string
		want   float64
	}{
		{`idgen_lease_held{generator="lease"}`, 0},
		{`idgen_lease_renewal_age_seconds{generator="lease"}`, 16},
		{`idgen_lease_lost_after_seconds{generator="lease"}`, 15},
		{`idgen_ticket_servers{generator="lease"}`, 2},
		{`idgen_ticket_servers_down{generator="lease"}`, 1},
		{`idgen_segment_waits_total{generator="seg"}`, 4},
		{`idgen_segment_fetch_errors_total{generator="seg"}`, 3},
		{`idgen_segment_ids_remaining{generator="seg"}`, 10},
		{`idgen_layout_end_timestamp_seconds{generator="sf"}`, float64(twitter.End().Unix())},
		{`idgen_clock_behind_high_water_seconds{generator="sf"}`, 0},
	} {
		if got := scrape(t, srv.URL, c.metric); got != c.want {
			t.Errorf("%s = %v; want %v", c.metric, got, c.want)
		}
	}
	body := string(get(t, srv.URL+"/metrics").body)
	if strings.Contains(body, `idgen_lease_held{generator="static"}`) {
		t.Error("idgen_lease_held is exported for a generator without a leased worker ID")
	}
	if twitter.End().Year() != 2080 {
		t.Errorf("twitter.End() = %v; want 2080", twitter.End())
	}
}

// TestLeaseStatus: a workerid lease's status is what the lease metrics
// export; here the idgentest lease, which has none, exports nothing.
func TestLeaseStatusAbsent(t *testing.T) {
	lease := &idgentest.Lease{}
	lease.Set(&idgen.Identity{WorkerID: 1})
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: twitter, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.LeaseStatus(); ok {
		t.Error("LeaseStatus of a lease that is not a LeaseStatusReporter: ok = true; want false")
	}
}

// TestEncodedGeneratorMetrics: a generator built with encoding= (a
// wrapper of the snowflake generator) keeps the snowflake's gauges and its
// readiness, read through Unwrap.
func TestEncodedGeneratorMetrics(t *testing.T) {
	g, err := strategies.Options{}.NewText(context.Background(), "snowflake?preset=twitter&worker=1&encoding=crockford&rollback=hold")
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{})
	if got := scrape(t, srv.URL, `idgen_layout_end_timestamp_seconds{generator="default"}`); got != float64(twitter.End().Unix()) {
		t.Errorf("idgen_layout_end_timestamp_seconds = %v; want %d", got, twitter.End().Unix())
	}
	if got := scrape(t, srv.URL, `idgen_clock_max_ahead_seconds{generator="default"}`); got != 10 {
		t.Errorf("idgen_clock_max_ahead_seconds = %v; want 10", got)
	}
	r := get(t, srv.URL+"/readyz")
	if r.code != http.StatusOK || !strings.Contains(string(r.body), `"clock_ahead_seconds":`) {
		t.Errorf("GET /readyz = %d %s; want 200 with the clock details", r.code, r.body)
	}
}
