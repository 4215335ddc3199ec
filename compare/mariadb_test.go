package compare_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/compare/report"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/segment"

	"github.com/go-sql-driver/mysql"
)

func TestRunEngineBadInput(t *testing.T) {
	tests := []struct {
		name string
		cfg  compare.Config
		want string // in the message
	}{
		{"unknown engine", compare.Config{Engine: "oracle"}, `Config.Engine "oracle": want postgres, mariadb or all`},
		{"long engine cut", compare.Config{Engine: strings.Repeat("x", 100)}, strings.Repeat("x", 64) + "…"},
		{"all with a DSN", compare.Config{Engine: compare.EngineAll, DSN: "mysql://root@127.0.0.1:1/x"}, `Config.Engine "all": runs two throwaway servers`},
		{"mariadb with a postgres DSN", compare.Config{Engine: compare.EngineMariaDB, DSN: unreachable}, `Config.Engine "mariadb": with a DSN of another engine`},
		{"postgres with a mysql DSN", compare.Config{Engine: compare.EnginePostgres, DSN: "mysql://root@127.0.0.1:1/x"}, `Config.Engine "postgres": with a DSN of another engine`},
		{"bad buffer pool", compare.Config{Engine: compare.EngineMariaDB, BufferPool: "lots"}, `Config.BufferPool "lots": want a size`},
		{"tiny buffer pool", compare.Config{Engine: compare.EngineMariaDB, BufferPool: "5MB"}, `Config.BufferPool "5MB": want at least 6MB`},
		{"buffer pool with a DSN", compare.Config{DSN: "mysql://root@127.0.0.1:1/x", BufferPool: "5MB"}, `Config.BufferPool "5MB": only the throwaway server's`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := compare.Run(context.Background(), tt.cfg)
			if !errors.Is(err, compare.ErrBadInput) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run(%+v) = %v, %v; want ErrBadInput mentioning %q", tt.cfg, rep, err, tt.want)
			}
			checkField(t, err, tt.want)
		})
	}
}

// TestRunEngineFromDSN: a mysql:// DSN selects MariaDB; nothing listens on
// port 1, so the run fails to connect to MariaDB, not to PostgreSQL.
func TestRunEngineFromDSN(t *testing.T) {
	if got := redact.Spec("mysql://root:s3cret@127.0.0.1:3306/x"); strings.Contains(got, "s3cret") {
		t.Errorf("redact.Spec(mysql://root:s3cret@...) = %q; want the password masked", got)
	}
	_, err := compare.Run(context.Background(), compare.Config{DSN: "mysql://root@127.0.0.1:1/x?timeout=2s", Rows: 10, Runs: 1, Strategies: []string{"uuidv4"}})
	want := "compare: cannot connect to MariaDB at 127.0.0.1:1 (user root, database x): connection refused"
	if !errors.Is(err, compare.ErrConnectMariaDB) || err.Error() != want {
		t.Fatalf("Run(mysql:// DSN, nothing listening) = %v; want ErrConnectMariaDB, %q", err, want)
	}
}

func needMariaDB(t *testing.T) {
	t.Helper()
	for _, b := range []string{"mariadbd", "mariadb-install-db"} {
		if _, err := os.Stat(filepath.Join("/usr/sbin", b)); err == nil {
			continue
		}
		if _, err := os.Stat(filepath.Join("/usr/bin", b)); err == nil {
			continue
		}
		if testenv.CI() {
			t.Fatalf("%s not installed; CI needs MariaDB's server binaries", b)
		}
		t.Skipf("%s not installed", b)
	}
}

// throwawayDirs returns the throwaway MariaDB directories this test
// process owns (their owner file names its PID): other processes' (another
// package's tests, another run on the machine) come and go while the test
// runs, and counting them failed it on a busy machine.
func throwawayDirs(t *testing.T) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "idgen-compare-mariadb-*"))
	var mine []string
	for _, d := range dirs {
		var pid int
		if b, err := os.ReadFile(filepath.Join(d, "owner")); err == nil {
			fmt.Sscan(string(b), &pid)
		}
		if pid == os.Getpid() {
			mine = append(mine, d)
		}
	}
	return mine
}

// TestMariaDBPhysics runs InnoDB on a throwaway server: keys in order
// leave the clustered index's leaf pages about 15/16 full (the MySQL
// manual: "If index records are inserted in a sequential order, the
// resulting index pages are about 15/16 full"), one split per new leaf
// page; random keys leave them clearly emptier, with more splits. Not
// parallel: it counts this process's throwaway directories before and
// after its run, and the parallel tests start theirs.
func TestMariaDBPhysics(t *testing.T) {
	needMariaDB(t)
	before := throwawayDirs(t)
	rep, err := compare.Run(context.Background(), compare.Config{
		Engine: compare.EngineMariaDB, Rows: 20_000, Writers: 1, Batch: 1000, Runs: 2, Seed: 42, NoReads: true, // the reads are TestMariaDBReads'
		Strategies: []string{"snowflake", "uuidv7", "uuidv4"},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	var table strings.Builder
	report.WriteTable(&table, rep)
	t.Logf("\n%s", table.String())
	if rep.Engine != compare.EngineMariaDB || !rep.Throwaway || !strings.HasPrefix(rep.Server, "MariaDB ") || rep.BufferPool != "128MB" {
		t.Errorf("report engine %q, throwaway %v, server %q, buffer pool %q; want mariadb, true, MariaDB ..., 128MB",
			rep.Engine, rep.Throwaway, rep.Server, rep.BufferPool)
	}
	wantRows := []string{compare.Baseline, compare.ClientSeries, compare.Reference, "snowflake", "uuidv7", "uuidv4"}
	if len(rep.Results) != len(wantRows) {
		t.Fatalf("Run gave %d results; want %d (%v)", len(rep.Results), len(wantRows), wantRows)
	}
	for i, w := range wantRows {
		r := rep.Results[i]
		if r.Strategy != w || r.Engine != compare.EngineMariaDB || r.Trials != 2 {
			t.Errorf("Results[%d] = %q, engine %q, %d trials; want %q, mariadb, 2", i, r.Strategy, r.Engine, r.Trials, w)
		}
		if len(r.Unavailable) > 0 {
			t.Errorf("%s: unavailable %v; want every InnoDB metric (notes: %v)", w, r.Unavailable, rep.Notes)
			continue
		}
		if r.RowsPerSec <= 0 || r.IndexBytes <= 0 || r.TableBytes < r.IndexBytes || r.WALBytes <= 0 ||
			*r.SecondaryIndexBytes != 0 || r.LeafFillSource == "" {
			t.Errorf("%s: rows/s %v, index %d B, table %d B, redo %d B, secondary %d B, fill source %q; want positive figures, no secondary index",
				w, r.RowsPerSec, r.IndexBytes, r.TableBytes, r.WALBytes, *r.SecondaryIndexBytes, r.LeafFillSource)
		}
	}
	const fifteenSixteenths = 100 * 15.0 / 16
	for _, name := range []string{compare.Baseline, compare.ClientSeries, "snowflake", "uuidv7"} {
		r := rep.Find(name)
		if r.AvgLeafDensity == nil || *r.AvgLeafDensity < fifteenSixteenths-4 || *r.AvgLeafDensity > fifteenSixteenths+3 {
			t.Errorf("%s: leaf fill %v %%; want about 15/16 (%.1f %%)", name, optDensity(r), fifteenSixteenths)
		}
		// Appends split the last page once per new leaf page.
		for _, tr := range rep.Trials[slices.IndexFunc(rep.Results, func(x compare.Result) bool { return x.Strategy == name })] {
			if *tr.PageSplits != *tr.LeafPages-1 {
				t.Errorf("%s round %d: %d page splits, %d leaf pages; want leaf pages - 1", name, tr.Round, *tr.PageSplits, *tr.LeafPages)
			}
		}
	}
	v4, sf := rep.Find("uuidv4"), rep.Find("snowflake")
	if v4.AvgLeafDensity == nil || *v4.AvgLeafDensity > 78 {
		t.Errorf("uuidv4: leaf fill %v %%; want clearly below 15/16 (≤ 78 %%)", optDensity(v4))
	}
	if *v4.PageSplits < *sf.PageSplits*13/10 {
		t.Errorf("page splits: uuidv4 %d, snowflake %d; want uuidv4's at least 1.3×", *v4.PageSplits, *sf.PageSplits)
	}
	cs, ref := rep.Find(compare.ClientSeries), rep.Find(compare.Reference)
	if *cs.LeafPages != *ref.LeafPages || rep.Harness == nil {
		t.Errorf("harness rows: leaf pages %d vs %d, check %+v; want equal indexes and a verdict", *cs.LeafPages, *ref.LeafPages, rep.Harness)
	}
	if after := throwawayDirs(t); len(after) > len(before) {
		t.Errorf("throwaway directories %v after the run (before: %v); want them removed", after, before)
	}
}

func optDensity(r *compare.Result) any {
	if r == nil || r.AvgLeafDensity == nil {
		return nil
	}
	return *r.AvgLeafDensity
}

// TestMariaDBWithDSN runs on the shared MariaDB in a database of its own,
// which the run drops.
func TestMariaDBWithDSN(t *testing.T) {
	dsn := testenv.MySQLDSN(t)
	db := "idgen_cmp_test_" + strings.TrimPrefix(uniqueSchema(t), "idgen_cmp_test_")
	// 20 reads of each kind: they run on the shared server, their figures
	// are TestMariaDBReads'.
	rep, err := compare.Run(context.Background(), compare.Config{
		DSN: dsn, Schema: db, Rows: 3000, Writers: 2, Batch: 500, Runs: 1, ReadOps: 20, Strategies: []string{"snowflake", "uuidv4"},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	if rep.Engine != compare.EngineMariaDB || rep.Throwaway || rep.Schema != db {
		t.Errorf("report engine %q, throwaway %v, database %q; want mariadb, false, %q", rep.Engine, rep.Throwaway, rep.Schema, db)
	}
	sf := rep.Find("snowflake")
	if sf == nil || sf.Engine != compare.EngineMariaDB || sf.WorkerKey != "worker" || sf.Column != "BIGINT" || rep.Find("uuidv4").Column != "BINARY(16)" {
		t.Errorf("snowflake result = %+v; want engine mariadb, worker key, BIGINT (uuidv4 BINARY(16))", sf)
	}
	cfg, err := segment.MySQLConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sdb := sql.OpenDB(conn)
	defer sdb.Close()
	var n int
	if err := sdb.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", db).Scan(&n); err != nil || n != 0 {
		t.Errorf("database %s: %d left after the run, %v; want it dropped", db, n, err)
	}
}

// TestRunAllEngines runs both throwaway servers: one report, PostgreSQL's
// rows then MariaDB's, each row's ratios to its own engine's baseline.
func TestRunAllEngines(t *testing.T) {
	t.Parallel() // throwaway servers of its own
	needMariaDB(t)
	needBinaries(t)
	// 20 reads of each kind: each engine's reads table shows, its figures
	// are TestReads' and TestMariaDBReads'.
	rep, err := compare.Run(context.Background(), compare.Config{
		Engine: compare.EngineAll, Rows: 3000, Writers: 1, Batch: 500, Runs: 1, Seed: 9, ReadOps: 20, Strategies: []string{"uuidv4"},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	var engines, names []string
	for _, r := range rep.Results {
		engines, names = append(engines, r.Engine), append(names, r.Strategy)
	}
	wantEngines := []string{"postgres", "postgres", "postgres", "postgres", "mariadb", "mariadb", "mariadb", "mariadb"}
	wantNames := []string{compare.Baseline, compare.ClientSeries, compare.Reference, "uuidv4", compare.Baseline, compare.ClientSeries, compare.Reference, "uuidv4"}
	if !slices.Equal(engines, wantEngines) || !slices.Equal(names, wantNames) {
		t.Fatalf("results %v %v; want %v %v", engines, names, wantEngines, wantNames)
	}
	for _, k := range []int{3, 7} {
		v4, bs := rep.Results[k], rep.Results[k-3]
		want := float64(v4.IndexBytes) / float64(bs.IndexBytes)
		if got := v4.RatioToBaseline["index_bytes"].Median; got != want {
			t.Errorf("%s uuidv4 index ratio = %v; want %v (to its own engine's baseline)", v4.Engine, got, want)
		}
	}
	var table strings.Builder
	if err := report.WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"postgres uuidv4", "mariadb uuidv4", "innodb_buffer_pool_size 128MB", "shared_buffers 128MB"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if !strings.Contains(report.Verdict(rep, &rep.Results[7]), "mariadb uuidv4: ") {
		t.Errorf("Verdict(mariadb uuidv4) = %q; want it named with its engine", report.Verdict(rep, &rep.Results[7]))
	}
}

// TestInsertPenaltyOutOfCache is opt-in (IDGEN_COMPARE_PENALTY=1; about
// 4 minutes on 2 cores): with the caches at 6MB, both tables outgrow them,
// and UUIDv4's insert rate against the sequential baseline falls further
// on InnoDB, whose random inserts move whole rows in the clustered index,
// than on PostgreSQL, whose index holds only the keys.
func TestInsertPenaltyOutOfCache(t *testing.T) {
	if os.Getenv("IDGEN_COMPARE_PENALTY") == "" {
		t.Skip("opt-in: set IDGEN_COMPARE_PENALTY=1")
	}
	needMariaDB(t)
	needBinaries(t)
	rep, err := compare.Run(context.Background(), compare.Config{
		Engine: compare.EngineAll, Rows: 200_000, Writers: 1, Runs: 1, Seed: 5,
		SharedBuffers: "6MB", BufferPool: "6MB", Strategies: []string{"uuidv4"},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	var table strings.Builder
	report.WriteTable(&table, rep)
	t.Logf("\n%s", table.String())
	ratio := map[string]float64{}
	for _, r := range rep.Results {
		if r.Strategy == "uuidv4" {
			ratio[r.Engine] = r.RatioToBaseline["rows_per_sec"].Median
		}
	}
	t.Logf("uuidv4 rows/s over the baseline's: postgres %.2f, mariadb %.2f", ratio["postgres"], ratio["mariadb"])
	if ratio["mariadb"] <= 0 || ratio["mariadb"] >= ratio["postgres"] {
		t.Errorf("uuidv4's insert rate over the baseline's: mariadb %.2f, postgres %.2f; want InnoDB's penalty larger (a lower ratio)",
			ratio["mariadb"], ratio["postgres"])
	}
}

// TestMariaDBReads reads back on InnoDB what the writers inserted: every
// row but the harness check's gets lookups of random and of recent keys,
// the rows in creation order ranges too, each with its rate and the
// buffer-pool misses per read (Innodb_buffer_pool_reads).
func TestMariaDBReads(t *testing.T) {
	t.Parallel() // a throwaway server of its own
	needMariaDB(t)
	needStrategies(t, "snowflake", "uuidv4", "ulid")
	rep, err := compare.Run(context.Background(), compare.Config{
		Engine: compare.EngineMariaDB, Rows: 3_000, Preload: 1_000, Writers: 2, Batch: 500, Runs: 1, ReadOps: 50, ReadTime: time.Minute,
		Strategies: []string{"snowflake", "uuidv4", "ulid"},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	var table strings.Builder
	report.WriteTable(&table, rep)
	t.Logf("\n%s", table.String())
	if !strings.Contains(table.String(), "\nreads after the inserts, one connection, innodb_buffer_pool_size 128MB") {
		t.Errorf("WriteTable has no reads table naming the buffer pool:\n%s", table.String())
	}
	for _, r := range rep.Results {
		kinds, ok := readKinds(t, r)
		if !ok {
			continue
		}
		for _, kind := range kinds {
			x := r.Reads[kind]
			if x.Ops != 50 || x.OpsPerSec <= 0 || x.MissesPerOp == nil || x.HitsPerOp == nil || *x.HitsPerOp < 1 {
				t.Errorf("%s %s: %d ops at %v/s, misses %v, hits %v per read; want 50 ops, ops/s > 0, at least one page read per read",
					r.Strategy, kind, x.Ops, x.OpsPerSec, x.MissesPerOp, x.HitsPerOp)
			}
			if kind != compare.ReadRange && x.RowsPerOp != 1 {
				t.Errorf("%s %s: %v rows per read; want 1", r.Strategy, kind, x.RowsPerOp)
			}
		}
		if r.IndexFitsCache == nil || !*r.IndexFitsCache {
			t.Errorf("%s: index fits the buffer pool = %v; want true (a 4,000-row index in 128 MB)", r.Strategy, r.IndexFitsCache)
		}
	}
}

// TestMariaDBSpanPhysics issues the keys over three hours of simulated
// time on InnoDB, as TestSpanPhysics does on PostgreSQL: UUIDv1's
// time_low wraps every 429.5 s and its clustered index's leaves are left
// clearly emptier than the sequence's, while UUIDv6 and the swapped
// UUIDv1 (stored as UUID_TO_BIN(u, 1) stores it) stay about 15/16 full.
func TestMariaDBSpanPhysics(t *testing.T) {
	t.Parallel() // a throwaway server of its own
	needMariaDB(t)
	needStrategies(t, "uuidv1", "uuidv6", "snowflake")
	rep, err := compare.Run(context.Background(), compare.Config{
		Engine: compare.EngineMariaDB, Rows: 20_000, Writers: 1, Batch: 1000, Runs: 1, NoReads: true, Span: 3 * time.Hour,
		Strategies: []string{"uuidv1", "uuidv6", compare.SwappedV1, "snowflake"},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	var table strings.Builder
	report.WriteTable(&table, rep)
	t.Logf("\n%s", table.String())
	density := func(name string) float64 {
		r := rep.Find(name)
		if r == nil || r.AvgLeafDensity == nil {
			t.Fatalf("%s: no leaf fill (notes %v)", name, rep.Notes)
		}
		return *r.AvgLeafDensity
	}
	bs := density(compare.Baseline)
	for _, name := range []string{"uuidv6", compare.SwappedV1, "snowflake"} {
		if d := density(name); d < 85 {
			t.Errorf("%s over 3 h: leaf fill %.1f %%; want ≥ 85 %% (keys in time order)", name, d)
		}
	}
	if d := density("uuidv1"); d > bs-10 {
		t.Errorf("uuidv1 over 3 h: leaf fill %.1f %% (bigserial %.1f %%); want 10 points below (time_low wraps every 429.5 s)", d, bs)
	}
}
