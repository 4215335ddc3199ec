package compare_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/compare/report"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/strategies"
	"github.com/jackc/pgx/v5"
)

// uniqueSchema returns a schema name no concurrent test run uses.
func uniqueSchema(t *testing.T) string {
	var b [6]byte
	rand.Read(b[:])
	return "idgen_cmp_test_" + hex.EncodeToString(b[:])
}

func needStrategies(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, ok := strategies.Lookup(n); !ok {
			t.Fatalf("strategy %q is not registered (have %v)", n, strategies.Names())
		}
	}
}

func schemaExists(t *testing.T, conn *pgx.Conn, schema string) bool {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// TestPhysics checks what every DBA knows about B-trees on a small
// comparison with one writer: keys that arrive in order fill leaf pages to
// the fillfactor (90 %) in physical order, random keys leave them about
// two-thirds full and out of order.
func TestPhysics(t *testing.T) {
	t.Parallel() // a schema of its own on the shared server
	dsn := testenv.PostgresDSN(t)
	needStrategies(t, "snowflake", "uuidv7", "uuidv4")
	schema := uniqueSchema(t)
	rep, err := compare.Run(context.Background(), compare.Config{
		DSN: dsn, Schema: schema, Rows: 20_000, Writers: 1, Batch: 1000, NoReads: true, // the reads are TestReads'
		Strategies: []string{"snowflake", "uuidv7", "uuidv4"},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	var table strings.Builder
	report.WriteTable(&table, rep)
	t.Logf("\n%s", table.String())

	wantRows := []string{compare.Baseline, compare.ClientSeries, compare.Reference, "snowflake", "uuidv7", "uuidv4"}
	if len(rep.Results) != len(wantRows) {
		t.Fatalf("Run gave %d results; want %d (%v)", len(rep.Results), len(wantRows), wantRows)
	}
	for i, w := range wantRows {
		r := rep.Results[i]
		if r.Strategy != w {
			t.Errorf("Results[%d].Strategy = %q; want %q", i, r.Strategy, w)
		}
		if r.Trials != 3 || len(rep.Trials[i]) != 3 || r.RowsPerSecCI == nil || !r.RowsPerSecCI.Contains(r.RowsPerSec) {
			t.Errorf("%s: %d trials (%d kept), rows/s %v in %v; want 3 trials and the median inside its interval",
				w, r.Trials, len(rep.Trials[i]), r.RowsPerSec, r.RowsPerSecCI)
		}
		if r.Rows != 20_000 || r.RowsPerSec <= 0 || r.IndexBytes <= 0 || r.TableBytes <= 0 || r.WALBytes <= 0 {
			t.Errorf("%s: rows %d, rows/s %v, index %d B, table %d B, WAL %d B; want 20000 rows and positive figures",
				w, r.Rows, r.RowsPerSec, r.IndexBytes, r.TableBytes, r.WALBytes)
		}
		if len(r.Unavailable) > 0 {
			t.Errorf("%s: unavailable %v; want every metric (notes: %v)", w, r.Unavailable, rep.Notes)
			continue
		}
		// Cross-check in each trial: one leaf page per leaf split, in the
		// WAL too.
		for _, tr := range rep.Trials[i] {
			if *tr.PageSplits != *tr.WALPageSplits || *tr.PageSplits != *tr.LeafPages-1 {
				t.Errorf("%s round %d: page splits %d, WAL leaf splits %d, leaf pages %d; want splits = WAL splits = leaf pages - 1",
					w, tr.Round, *tr.PageSplits, *tr.WALPageSplits, *tr.LeafPages)
			}
		}
		if len(r.RowsPerSecTenths) != 10 || r.P50Ms == nil || *r.P99Ms < *r.P50Ms {
			t.Errorf("%s: tenths %v, p50 %v, p99 %v; want 10 tenths and p50 ≤ p99", w, r.RowsPerSecTenths, r.P50Ms, r.P99Ms)
		}
	}
	for _, name := range []string{compare.Baseline, "snowflake", "uuidv7"} {
		r := rep.Find(name)
		if r == nil || r.AvgLeafDensity == nil {
			continue
		}
		if *r.AvgLeafDensity < 85 || *r.LeafFragmentation > 10 {
			t.Errorf("%s: density %.1f %%, fragmentation %.1f %%; want ≥ 85 %% and ≤ 10 %% (appends at the right edge)",
				name, *r.AvgLeafDensity, *r.LeafFragmentation)
		}
	}
	v4, bs := rep.Find("uuidv4"), rep.Find(compare.Baseline)
	if v4 != nil && v4.AvgLeafDensity != nil {
		// The density of random keys swings around 69 % (65.2-78.4 % in 25
		// single trials at this size, TestPhysicsPG18's note); ≤ 84 %
		// parts it from the 89.5 % of keys in order.
		if *v4.AvgLeafDensity > 84 || *v4.LeafFragmentation < 30 {
			t.Errorf("uuidv4: density %.1f %%, fragmentation %.1f %%; want ≤ 84 %% and ≥ 30 %% (random inserts split mid-page)",
				*v4.AvgLeafDensity, *v4.LeafFragmentation)
		}
	}
	if v4 == nil || bs == nil || float64(v4.IndexBytes) <= 1.5*float64(bs.IndexBytes) {
		t.Errorf("uuidv4 index vs bigserial index: %v vs %v; want more than 1.5×", v4, bs)
	}
	if v4 != nil && bs != nil && (v4.KeyBytes != 16 || bs.KeyBytes != 8) {
		t.Errorf("key bytes: uuidv4 %d, bigserial %d; want 16, 8", v4.KeyBytes, bs.KeyBytes)
	}
	// The harness check's two rows hold the same keys: the same index.
	cs, ref := rep.Find(compare.ClientSeries), rep.Find(compare.Reference)
	if cs.IndexBytes != ref.IndexBytes || *cs.LeafPages != *ref.LeafPages || rep.Harness == nil ||
		rep.Harness.Threshold != 0.8 || (rep.Harness.Verdict == "pass") != (rep.Harness.Ratio.Median >= 0.8) {
		t.Errorf("harness rows: index %d vs %d B, leaf pages %d vs %d, check %+v; want equal indexes and a verdict at 0.80",
			cs.IndexBytes, ref.IndexBytes, *cs.LeafPages, *ref.LeafPages, rep.Harness)
	}

	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if schemaExists(t, conn, schema) {
		t.Errorf("schema %s still exists after the run; want it dropped", schema)
	}
}

// TestWritersAndKeep checks the workload itself on kept tables: every row
// is in, single-row INSERTs work, and each writer has its own worker ID.
func TestWritersAndKeep(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	schema := uniqueSchema(t)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	t.Cleanup(func() {
		conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	})
	for _, tt := range []struct {
		name    string
		batch   int
		method  string
		preload int
	}{
		{"copy", 50, "copy", 500},
		{"single-row", 1, "insert", 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := schema + "_" + strings.ReplaceAll(tt.name, "-", "_")
			t.Cleanup(func() {
				conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{s}.Sanitize()+" CASCADE")
			})
			// 20 reads of each kind: the reads run on the kept tables, and
			// their figures are TestReads'; the default 1,000 (each kind
			// cut at 0.5 s) took half the test's time.
			rep, err := compare.Run(context.Background(), compare.Config{
				DSN: dsn, Schema: s, Keep: true, Rows: 600, Preload: tt.preload, Writers: 3, Batch: tt.batch, Runs: 1, ReadOps: 20,
				Strategies: []string{"snowflake"},
			})
			if err != nil {
				t.Fatalf("Run = %v", err)
			}
			sf := rep.Find("snowflake")
			if sf == nil || sf.Method != tt.method || sf.WorkerKey != "worker" || sf.Writers != 3 {
				t.Fatalf("snowflake result = %+v; want method %s, worker key, 3 writers", sf, tt.method)
			}
			for _, table := range []string{"t00_bigserial", "t00_client_series", "t00_generate_series", "t01_snowflake"} {
				var n int
				q := fmt.Sprintf("SELECT count(*) FROM %s", pgx.Identifier{s, table}.Sanitize())
				if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil || n != tt.preload+600 {
					t.Errorf("%s: %d rows, %v; want %d", table, n, err, tt.preload+600)
				}
			}
			// The default layout: time 41, datacenter 5, worker 5, sequence 12.
			rows, err := conn.Query(context.Background(), fmt.Sprintf(
				"SELECT DISTINCT (id >> 12) & 31 FROM %s ORDER BY 1", pgx.Identifier{s, "t01_snowflake"}.Sanitize()))
			if err != nil {
				t.Fatal(err)
			}
			// Writers claim batches from a shared counter: a writer the
			// scheduler starves may get none (on a busy machine one writer
			// once took all 600 single-row batches), so how many took part
			// is the scheduler's; no row has a worker ID outside 0..2.
			// TestWriterSpecs holds the three writers' worker IDs.
			workers, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil || len(workers) == 0 || workers[0] < 0 || workers[len(workers)-1] > 2 {
				t.Errorf("worker IDs in the table = %v, %v; want some of [0 1 2] and no other", workers, err)
			}
			if !schemaExists(t, conn, s) {
				t.Errorf("schema %s dropped despite Keep", s)
			}
		})
	}
}

func TestRunExistingSchema(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	schema := uniqueSchema(t)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+".mine (x int)"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	_, err = compare.Run(context.Background(), compare.Config{DSN: dsn, Schema: schema, Rows: 10, Writers: 1, Runs: 1, Strategies: []string{"uuidv4"}})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("Run into an existing schema = %v; want an error saying it exists", err)
	}
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM "+schema+".mine").Scan(&n); err != nil {
		t.Fatalf("the user's table is gone after the refused run: %v", err)
	}
}

// TestRunDuplicateIDs runs a layout with no node field on two writers: both
// generators issue the same IDs, and the run must say so and clean up. The
// day-long tick puts both writers in the same tick, each counting from
// sequence 0, whenever they start.
func TestRunDuplicateIDs(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	schema := uniqueSchema(t)
	spec := "snowflake?layout=time:41,sequence:22;tick=24h"
	rep, err := compare.Run(context.Background(), compare.Config{
		DSN: dsn, Schema: schema, Rows: 4000, Writers: 2, Batch: 1000, Runs: 1, Strategies: []string{spec},
	})
	if err == nil || !strings.Contains(err.Error(), spec+" issued a duplicate ID") {
		t.Fatalf("Run(two writers, no worker field) = %v, %v; want a duplicate-ID error naming %s", rep, err, spec)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if schemaExists(t, conn, schema) {
		t.Errorf("schema %s left behind by the failed run", schema)
	}
	var slots int
	conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE $1", schema+"%").Scan(&slots)
	if slots != 0 {
		t.Errorf("%d replication slots of the failed run left behind", slots)
	}
}
