package compare_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/compare/report"
	"github.com/idgenkit/idgen/internal/testenv"
)

// TestSpanPhysics issues the keys over three hours of simulated time:
// UUIDv1's time_low wraps every 429.5 s, so its keys fall back 25 times and
// its index fragments like merged runs, while UUIDv6 and the swapped
// UUIDv1 (MySQL's UUID_TO_BIN(u, 1)) stay in order like the sequence.
func TestSpanPhysics(t *testing.T) {
	t.Parallel() // a schema of its own on the shared server
	dsn := testenv.PostgresDSN(t)
	needStrategies(t, "uuidv1", "uuidv6", "snowflake")
	rep, err := compare.Run(context.Background(), compare.Config{
		DSN: dsn, Schema: uniqueSchema(t), Rows: 20_000, Writers: 1, Runs: 1, NoReads: true, Span: 3 * time.Hour,
		Strategies: []string{"uuidv1", "uuidv6", compare.SwappedV1, "snowflake"},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	var table strings.Builder
	report.WriteTable(&table, rep)
	t.Logf("\n%s", table.String())
	get := func(name string) (density, frag float64) {
		r := rep.Find(name)
		if r == nil || r.AvgLeafDensity == nil {
			t.Fatalf("%s: no density (notes %v)", name, rep.Notes)
		}
		return *r.AvgLeafDensity, *r.LeafFragmentation
	}
	bsDensity, _ := get(compare.Baseline)
	for _, name := range []string{"uuidv6", compare.SwappedV1, "snowflake"} {
		if d, f := get(name); d < 85 || f > 10 {
			t.Errorf("%s over 3 h: density %.1f %%, fragmentation %.1f %%; want ≥ 85 %% and ≤ 10 %% (keys in time order)", name, d, f)
		}
	}
	if d, f := get("uuidv1"); d > bsDensity-10 || f <= 0 {
		t.Errorf("uuidv1 over 3 h: density %.1f %% (bigserial %.1f %%), fragmentation %.1f %%; want 10 points below and > 0 (time_low wraps every 429.5 s)", d, bsDensity, f)
	}
	if r := rep.Find(compare.SwappedV1); r.Scheme != "uuidv1" || r.KeyBytes != 16 {
		t.Errorf("%s: scheme %q, key %d B; want uuidv1, 16 B", compare.SwappedV1, r.Scheme, r.KeyBytes)
	}
}

// TestReads checks the reads after the inserts: every row but the harness
// check's is read back with lookups of random and of recent keys, the rows
// in creation order with ranges too; each figure with its interval, its
// ratio to bigserial and the buffer misses per read.
func TestReads(t *testing.T) {
	t.Parallel() // a schema of its own on the shared server
	dsn := testenv.PostgresDSN(t)
	needStrategies(t, "snowflake", "uuidv4")
	rep, err := compare.Run(context.Background(), compare.Config{
		// A minute's bound: on a loaded machine every kind still does its
		// 200 reads. Over a simulated hour, one second's rows are
		// ceil(25,000 / 3,600) = 7.
		DSN: dsn, Schema: uniqueSchema(t), Rows: 20_000, Preload: 5_000, Writers: 2, Runs: 2, ReadOps: 200, ReadTime: time.Minute,
		Span: time.Hour, Strategies: []string{"snowflake", "uuidv4"},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	var table strings.Builder
	report.WriteTable(&table, rep)
	t.Logf("\n%s", table.String())
	if !strings.Contains(table.String(), "\nreads after the inserts, one connection, shared_buffers ") {
		t.Errorf("WriteTable has no reads table:\n%s", table.String())
	}
	if v := report.Verdict(rep, rep.Find("uuidv4")); !strings.Contains(v, ", point lookups ") || !strings.Contains(v, " blocks read per lookup)") {
		t.Errorf("Verdict(uuidv4) = %q; want the point lookups' rate and blocks read", v)
	}
	for _, r := range rep.Results {
		kinds, ok := readKinds(t, r)
		if !ok {
			continue
		}
		for _, kind := range kinds {
			x := r.Reads[kind]
			if x.Ops != 200 || x.OpsPerSec <= 0 || x.OpsPerSecCI == nil || !x.OpsPerSecCI.Contains(x.OpsPerSec) || len(x.OpsPerSecTrials) != 2 {
				t.Errorf("%s %s: %d ops at %v/s in %v over %v; want 200 ops, the median inside its interval, 2 trials",
					r.Strategy, kind, x.Ops, x.OpsPerSec, x.OpsPerSecCI, x.OpsPerSecTrials)
			}
			if x.MissesPerOp == nil || x.HitsPerOp == nil || *x.MissesPerOp+*x.HitsPerOp < 2 {
				t.Errorf("%s %s: misses %v, hits %v per read; want at least two blocks (index and heap) per read", r.Strategy, kind, x.MissesPerOp, x.HitsPerOp)
			}
			if kind != compare.ReadRange && x.RowsPerOp != 1 {
				t.Errorf("%s %s: %v rows per read; want 1", r.Strategy, kind, x.RowsPerOp)
			}
			if kind == compare.ReadRange && x.RowsPerOp != 7 {
				t.Errorf("%s range: %v rows per read; want 7, the rows of one simulated second", r.Strategy, x.RowsPerOp)
			}
			if (x.RatioToBaseline == nil) != (r.Strategy == compare.Baseline) {
				t.Errorf("%s %s: ratio to bigserial %v; want one for every strategy", r.Strategy, kind, x.RatioToBaseline)
			}
		}
		if r.IndexFitsCache == nil || !*r.IndexFitsCache {
			t.Errorf("%s: index fits shared_buffers = %v; want true (a 25,000-row index)", r.Strategy, r.IndexFitsCache)
		}
	}
}

// readKinds checks that r, a row of a run with reads, has the kinds of
// read it should: none for the harness check's rows (ok false), point and
// recent lookups for the others, and ranges for keys in creation order
// (all but uuidv4's). It returns the kinds r has of those.
func readKinds(t *testing.T, r compare.Result) (kinds []string, ok bool) {
	t.Helper()
	if r.Strategy == compare.ClientSeries || r.Strategy == compare.Reference {
		if r.Reads != nil {
			t.Errorf("%s: reads %v; want none (a row of the harness check)", r.Strategy, r.Reads)
		}
		return nil, false
	}
	want := []string{compare.ReadPoint, compare.ReadRecent, compare.ReadRange}
	if r.Strategy == "uuidv4" {
		want = want[:2]
	}
	if len(r.Reads) != len(want) {
		t.Errorf("%s: read kinds %v; want %v", r.Strategy, r.Reads, want)
	}
	for _, kind := range want {
		if r.Reads[kind] == nil {
			t.Errorf("%s: no %s reads", r.Strategy, kind)
			continue
		}
		kinds = append(kinds, kind)
	}
	return kinds, true
}

// TestReadsSingleRowSpan reads back keys sent by single-row INSERTs, the
// preloaded ones among them, issued over a simulated hour: every kept key
// is found (a key not found fails the run).
func TestReadsSingleRowSpan(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	rep, err := compare.Run(context.Background(), compare.Config{
		DSN: dsn, Schema: uniqueSchema(t), Rows: 1_500, Preload: 500, Writers: 2, Batch: 1, Runs: 1, ReadOps: 100, ReadTime: time.Minute,
		Span: time.Hour, Strategies: []string{compare.SwappedV1},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	r := rep.Find(compare.SwappedV1)
	if r == nil || r.Reads[compare.ReadRange] == nil || r.Reads[compare.ReadPoint].Ops != 100 {
		t.Fatalf("%s: reads %v; want 100 lookups and ranges", compare.SwappedV1, r)
	}
	// 2,000 rows over an hour: the rows of one second are one.
	if got := r.Reads[compare.ReadRange].RowsPerOp; got != 1 {
		t.Errorf("%s range over 1 h: %v rows per read; want 1 (2,000 rows in 3,600 s)", compare.SwappedV1, got)
	}
}

// TestSummarizeReads checks the reads' summary on made-up trials: the
// median ops/s, its interval (with 3 trials, their range), the per-round
// ratio to bigserial, the median misses, and the noise warning naming the
// figure.
func TestSummarizeReads(t *testing.T) {
	trial := func(name string, round int, ops, misses float64) compare.Result {
		return compare.Result{Strategy: name, Round: round, Rows: 100, RowsPerSec: 1000,
			Reads: map[string]*compare.Reads{compare.ReadPoint: {Ops: 10, OpsPerSec: ops, RowsPerOp: 1, MissesPerOp: &misses}}}
	}
	rep := &compare.Report{Runs: 3, Seed: 1, Trials: [][]compare.Result{
		{trial(compare.Baseline, 1, 100, 0), trial(compare.Baseline, 2, 100, 0), trial(compare.Baseline, 3, 100, 0)},
		{trial("uuidv4", 1, 50, 2), trial("uuidv4", 2, 80, 3), trial("uuidv4", 3, 20, 1)},
	}}
	rep.Summarize()
	x := rep.Find("uuidv4").Reads[compare.ReadPoint]
	if x == nil || x.OpsPerSec != 50 || *x.OpsPerSecCI != (compare.Interval{20, 80}) || *x.MissesPerOp != 2 || x.Ops != 10 {
		t.Fatalf("uuidv4 point reads = %+v; want 50 ops/s in [20, 80], 2 misses per read, 10 ops", x)
	}
	if e := x.RatioToBaseline; e == nil || e.Median != 0.5 || e.CI != (compare.Interval{0.2, 0.8}) {
		t.Errorf("uuidv4 point reads ratio = %+v; want 0.5 in [0.2, 0.8]", e)
	}
	if bs := rep.Find(compare.Baseline).Reads[compare.ReadPoint]; bs.RatioToBaseline != nil {
		t.Errorf("bigserial point reads ratio = %+v; want none", bs.RatioToBaseline)
	}
	want := "noisy trials: point_reads_per_sec varied across the trials by more than 10 % (coefficient of variation): uuidv4 60 %; " +
		"a busy machine, or trials too short for this figure (more --rows, --read-ops or --runs)"
	found := false
	for _, w := range rep.Warnings {
		found = found || w == want
	}
	if !found {
		t.Errorf("Warnings = %q; want %q", rep.Warnings, want)
	}
}
