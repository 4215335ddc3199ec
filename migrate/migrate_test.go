package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/migrate"
)

// parentRows is the live migration's parent size: 20 batches of
// liveBatch (100,000 rows in batches of 5000 showed the same, in 5 times
// as long, and so did 20,000 in batches of 1000, in twice as long).
const (
	parentRows = 10_000
	liveBatch  = 500
)

// schema creates a unique schema, dropped when the test ends, and returns
// a connection whose search_path starts with it.
func schema(t *testing.T) (*pgx.Conn, string) {
	t.Helper()
	return schemaAt(t, testenv.PostgresDSN(t), "idgen_migrate")
}

// schemaAt creates a schema named prefix_<unique> on the server at dsn,
// dropped when the test ends, and returns a connection whose search_path
// starts with it.
func schemaAt(t *testing.T, dsn, prefix string) (*pgx.Conn, string) {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("%s_%d_%d", prefix, time.Now().UnixNano()%1e9, rand.IntN(1e6))
	conn := connect(t, dsn, "")
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Errorf("cleanup: drop schema %s: %v", name, err)
		}
	})
	conn.Close(ctx)
	return connect(t, dsn, name), name
}

func connect(t *testing.T, dsn, schema string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if schema != "" {
		cfg.RuntimeParams["search_path"] = schema
	}
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func exec(t *testing.T, conn *pgx.Conn, sqls ...string) {
	t.Helper()
	for _, s := range sqls {
		if _, err := conn.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// fixture creates parent (parentRows rows, created_at one ms apart, in id
// order except for a shuffled tail) and two children: child_a (NOT NULL
// FK, indexed, one row per parent) and child_b (nullable FK, ON DELETE
// CASCADE, a row for every other parent and 1000 NULLs).
func fixture(t *testing.T, conn *pgx.Conn, keyType string) {
	t.Helper()
	idDef := "id bigserial PRIMARY KEY"
	fkType := "bigint"
	if keyType == "uuid" {
		idDef, fkType = "id uuid PRIMARY KEY DEFAULT gen_random_uuid()", "uuid"
	}
	exec(t, conn,
		"CREATE TABLE parent ("+idDef+", name text, created_at timestamptz NOT NULL DEFAULT clock_timestamp())",
		fmt.Sprintf(`INSERT INTO parent (name, created_at) SELECT 'p' || i, now() - interval '1 day' + i * interval '1 ms'
			FROM generate_series(1, %d) i`, parentRows),
		"CREATE TABLE child_a (id bigserial PRIMARY KEY, parent_id "+fkType+" NOT NULL REFERENCES parent (id), note text)",
		"CREATE INDEX ON child_a (parent_id)",
		"INSERT INTO child_a (parent_id, note) SELECT id, name FROM parent",
		"CREATE TABLE child_b (id bigserial PRIMARY KEY, parent_id "+fkType+" REFERENCES parent (id) ON DELETE CASCADE)",
		"INSERT INTO child_b (parent_id) SELECT id FROM parent WHERE right(name, 1) IN ('0', '2', '4', '6', '8')",
		"INSERT INTO child_b (parent_id) SELECT NULL FROM generate_series(1, 1000)",
		"ANALYZE parent, child_a, child_b",
	)
}

// inserter inserts a parent and a row in each child per transaction until
// stopped; ok counts the committed transactions.
type inserter struct {
	ok, failed atomic.Int64
	errs       []error
	mu         sync.Mutex
	stop       chan struct{}
	done       chan struct{}
}

func startInserter(t *testing.T, dsn, schema string) *inserter {
	t.Helper()
	conn := connect(t, dsn, schema)
	in := &inserter{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(in.done)
		ctx := context.Background()
		for i := 0; ; i++ {
			select {
			case <-in.stop:
				return
			default:
			}
			err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				var id string
				if err := tx.QueryRow(ctx, "INSERT INTO parent (name) VALUES ($1) RETURNING id::text", fmt.Sprint("live", i)).Scan(&id); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, "INSERT INTO child_a (parent_id, note) SELECT id, 'live' FROM parent WHERE id::text = $1", id); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, "INSERT INTO child_b (parent_id) SELECT id FROM parent WHERE id::text = $1", id)
				return err
			})
			if err != nil {
				in.failed.Add(1)
				in.mu.Lock()
				in.errs = append(in.errs, err)
				in.mu.Unlock()
				continue
			}
			in.ok.Add(1)
			time.Sleep(time.Millisecond)
		}
	}()
	return in
}

// waitFor waits until the inserter has committed n more transactions.
func (in *inserter) waitFor(t *testing.T, n int64) {
	t.Helper()
	want := in.ok.Load() + n
	for in.ok.Load() < want {
		if in.failed.Load() > 100 {
			t.Fatalf("inserter failing: %v", in.errs[0])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (in *inserter) halt(t *testing.T) int64 {
	t.Helper()
	close(in.stop)
	<-in.done
	if n := in.failed.Load(); n > 0 {
		t.Errorf("inserter: %d transactions failed; first: %v", n, in.errs[0])
	}
	return in.ok.Load()
}

func count(t *testing.T, conn *pgx.Conn, q string) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// migrateLive runs the migration to spec with a concurrent inserter,
// interrupting it once by canceling its context when interrupt says so,
// and checks the result.
func migrateLive(t *testing.T, keyType, spec, timeColumn string, interrupt func(done, total int64) bool) (*pgx.Conn, int64) {
	conn, name := schema(t)
	dsn := testenv.PostgresDSN(t)
	fixture(t, conn, keyType)
	childA0 := count(t, conn, "SELECT count(*) FROM child_a")
	childB0 := count(t, conn, "SELECT count(*) FROM child_b")

	in := startInserter(t, dsn, name)
	in.waitFor(t, 20)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := false
	opt := migrate.Options{Table: "parent", To: spec, TimeColumn: timeColumn, Batch: liveBatch,
		OnBatch: func(done, total int64) {
			if !interrupted && interrupt(done, total) {
				interrupted = true
				cancel()
			}
		}}
	runConn := connect(t, dsn, name)
	_, err := migrate.Run(ctx, runConn, opt)
	if !interrupted || err == nil {
		t.Fatalf("Run with a canceled context = %v (interrupted %v); want an error", err, interrupted)
	}
	in.waitFor(t, 20)
	// A different target for the migration in progress is refused.
	runConn = connect(t, dsn, name)
	other := opt
	other.To = spec + "?epoch=2025-01-01"
	if spec == "uuidv7" {
		other.To = "ulid"
	}
	if _, err := migrate.Run(context.Background(), runConn, other); !errors.Is(err, migrate.ErrInput) || !strings.Contains(err.Error(), "is being migrated to") {
		t.Fatalf("Run(--to %q) during a migration to %q = %v; want ErrInput naming the migration in progress", other.To, spec, err)
	}
	// Resume in a new connection, as a new process would.
	var log bytes.Buffer
	// Without --to and --time-column: as recorded in the state table.
	opt.To, opt.TimeColumn = "", ""
	opt.OnBatch, opt.Log = nil, msgLog(io.MultiWriter(&log, stampWriter{t, time.Now()}))
	runConn = connect(t, dsn, name)
	if _, err := migrate.Run(context.Background(), runConn, opt); err != nil {
		t.Fatalf("Run (resumed) = %v; log:\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "resuming the migration") {
		t.Errorf("resumed Run log = %q; want it to say it resumes", log.String())
	}
	in.waitFor(t, 20) // inserts after the swap
	inserted := in.halt(t)

	r, err := migrate.Verify(context.Background(), conn, "parent")
	if err != nil {
		t.Fatalf("Verify = %v", err)
	}
	if !r.OK() || r.Phase != "done" {
		var b bytes.Buffer
		r.Write(&b)
		t.Fatalf("Verify found problems:\n%s", b.String())
	}
	if got, want := count(t, conn, "SELECT count(*) FROM parent"), parentRows+inserted; got != want {
		t.Errorf("parent has %d rows; want %d (%d + %d inserted)", got, want, parentRows, inserted)
	}
	if got, want := count(t, conn, "SELECT count(*) FROM child_a"), childA0+inserted; got != want {
		t.Errorf("child_a has %d rows; want %d", got, want)
	}
	if got, want := count(t, conn, "SELECT count(*) FROM child_b"), childB0+inserted; got != want {
		t.Errorf("child_b has %d rows; want %d", got, want)
	}
	// Every child row's parent_id is its parent's new key: the old key
	// through the mapping table, or, for rows inserted live, a parent row.
	for _, child := range []string{"child_a", "child_b"} {
		if n := count(t, conn, "SELECT count(*) FROM "+child+" c LEFT JOIN parent p ON p.id = c.parent_id WHERE c.parent_id IS NOT NULL AND p.id IS NULL"); n != 0 {
			t.Errorf("%s: %d rows reference no parent", child, n)
		}
		if n := count(t, conn, "SELECT count(*) FROM "+child+" c JOIN parent p ON p.id = c.parent_id WHERE c.parent_id_old IS NOT NULL AND p.id_old <> c.parent_id_old"); n != 0 {
			t.Errorf("%s: %d rows moved to another parent", child, n)
		}
		var validated bool
		if err := conn.QueryRow(context.Background(), `SELECT bool_and(convalidated) FROM pg_constraint
			WHERE conrelid = $1::regclass AND contype = 'f'`, child).Scan(&validated); err != nil || !validated {
			t.Errorf("%s: foreign key validated = %v, %v; want true", child, validated, err)
		}
	}
	// Rows inserted after the swap keep an old key (the old column's
	// default) for revert.
	if n := count(t, conn, "SELECT count(*) FROM parent WHERE id_old IS NULL"); n != 0 {
		t.Errorf("%d parent rows have no old key", n)
	}
	if n := count(t, conn, "SELECT count(*) FROM parent_idgen_map"); n < parentRows {
		t.Errorf("mapping table has %d rows; want at least %d", n, parentRows)
	}
	// The application keeps inserting with the new key's default.
	exec(t, conn, "INSERT INTO parent (name) VALUES ('after')")
	return conn, inserted
}

func TestMigrateBigintToSnowflake(t *testing.T) {
	// Interrupted during the parent backfill, after 6 batches.
	conn, _ := migrateLive(t, "bigint", "snowflake", "created_at", func(done, total int64) bool { return done >= 6*parentRows/20 })
	// Backfilled keys follow creation order and sort after every old key.
	if n := count(t, conn, fmt.Sprintf(`SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY created_at, id_old) AS prev
		FROM parent WHERE id_old <= %d) s WHERE id <= prev`, parentRows)); n != 0 {
		t.Errorf("%d backfilled keys out of creation order", n)
	}
	if n := count(t, conn, fmt.Sprintf("SELECT count(*) FROM parent WHERE id <= %d", parentRows)); n != 0 {
		t.Errorf("%d new keys are not above the old maximum %d", n, parentRows)
	}
	// Keys issued by the trigger carry the reserved worker ID 31; the
	// backfill's carry 30 (default layout: worker is bits 12-16).
	if n := count(t, conn, fmt.Sprintf("SELECT count(*) FROM parent WHERE id_old <= %d AND (id >> 12) & 31 <> 30", parentRows)); n != 0 {
		t.Errorf("%d backfilled keys without worker ID 30", n)
	}
	if n := count(t, conn, fmt.Sprintf("SELECT count(*) FROM parent WHERE name = 'after' AND (id >> 12) & 31 = 31 AND id_old > %d", parentRows)); n != 1 {
		t.Errorf("%d rows inserted after the swap with worker ID 31 and an old key from the sequence; want 1", n)
	}
	if n := count(t, conn, "SELECT count(*) FROM parent WHERE (id >> 12) & 31 NOT IN (30, 31)"); n != 0 {
		t.Errorf("%d keys with a worker ID other than 30 and 31", n)
	}
	if n := count(t, conn, "SELECT count(*) FROM parent WHERE id_old IS NOT NULL AND (id >> 12) & 31 = 31"); n == 0 {
		t.Errorf("no row inserted during the migration got its key from the trigger")
	}
}

func TestMigrateUUIDv4ToUUIDv7(t *testing.T) {
	// No time column: keys follow the old key order. Interrupted during
	// the children phase.
	calls := 0
	conn, _ := migrateLive(t, "uuid", "uuidv7", "", func(done, total int64) bool {
		calls++
		return calls > 20+3 // 20 parent batches, then 3 child batches
	})
	if n := count(t, conn, "SELECT count(*) FROM parent WHERE substr(id::text, 15, 1) <> '7'"); n != 0 {
		t.Errorf("%d keys are not UUIDv7", n)
	}
	if n := count(t, conn, `SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY id_old) AS prev
		FROM parent_idgen_map m JOIN parent p ON p.id = m.new_key WHERE p.name NOT LIKE 'live%' AND p.name <> 'after') s WHERE id <= prev`); n != 0 {
		t.Errorf("%d backfilled keys out of the old key order", n)
	}
}

func TestPlan(t *testing.T) {
	conn, _ := schema(t)
	exec(t, conn,
		"CREATE TABLE parent (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO parent (created_at) SELECT now() - i * interval '1 s' FROM generate_series(1, 1000) i",
		"CREATE TABLE child (id int PRIMARY KEY, parent_id bigint REFERENCES parent (id) ON DELETE CASCADE)",
	)
	p, err := migrate.Inspect(context.Background(), conn, migrate.Options{Table: "parent", To: "snowflake", TimeColumn: "created_at"})
	if err != nil {
		t.Fatalf("Inspect = %v", err)
	}
	if p.Rows != 1000 || p.KeyType != "bigint" || p.MaxKey != "1000" || !p.OrderHolds || len(p.FKs) != 1 || p.FKs[0].OnDelete != "CASCADE" {
		t.Fatalf("Inspect = rows %d, key %s, max %s, order %v, FKs %+v; want 1000, bigint, 1000, true, child CASCADE",
			p.Rows, p.KeyType, p.MaxKey, p.OrderHolds, p.FKs)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1000 rows", "primary key id bigint", "child.parent_id", "created_at", "order ", "holds", "index size", "swap in one transaction"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan output lacks %q:\n%s", want, b.String())
		}
	}
	// Dry run: prints the DDL, changes nothing.
	var log bytes.Buffer
	dry, err := migrate.Run(context.Background(), conn, migrate.Options{Table: "parent", To: "snowflake", DryRun: true})
	if err != nil {
		t.Fatalf("Run(DryRun) = %v", err)
	}
	if err := dry.WriteDryRun(&log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "CREATE OR REPLACE FUNCTION") || !strings.Contains(log.String(), "dry run") {
		t.Errorf("dry run output lacks the DDL:\n%s", log.String())
	}
	unchanged(t, conn)
}

// unchanged checks that no migration object exists in the schema.
func unchanged(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	if n := count(t, conn, `SELECT count(*) FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname LIKE '%idgen%'`); n != 0 {
		t.Errorf("%d idgen objects exist; want none", n)
	}
	if n := count(t, conn, `SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE c.relnamespace = current_schema()::regnamespace AND a.attname LIKE '%idgen%'`); n != 0 {
		t.Errorf("%d idgen columns exist; want none", n)
	}
}

func TestBadInput(t *testing.T) {
	conn, _ := schema(t)
	exec(t, conn,
		"CREATE TABLE nokey (id bigint, created_at timestamptz)",
		"CREATE TABLE pair (a int, b int, PRIMARY KEY (a, b))",
		"CREATE TABLE big (id bigint PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO big (id) VALUES (1), (2)",
		"CREATE TABLE u (id uuid PRIMARY KEY DEFAULT gen_random_uuid())",
		"CREATE TABLE huge (id bigint PRIMARY KEY)",
		"INSERT INTO huge VALUES (9000000000000000000)",
		"CREATE TABLE texty (id text PRIMARY KEY)",
	)
	tests := []struct {
		name  string
		opt   migrate.Options
		want  error
		msg   string
		field string // of the *idgen.FieldError it carries, if any
	}{
		{name: "no primary key", opt: migrate.Options{Table: "nokey", To: "snowflake"}, want: migrate.ErrInput, msg: "has no primary key"},
		{name: "composite primary key", opt: migrate.Options{Table: "pair", To: "snowflake"}, want: migrate.ErrShape, msg: "its primary key is (a, b)"},
		{name: "unknown table", opt: migrate.Options{Table: "nosuch", To: "snowflake"}, want: migrate.ErrInput, msg: `table "nosuch" not found`},
		{name: "unknown column", opt: migrate.Options{Table: "big", To: "snowflake", TimeColumn: "created"}, want: migrate.ErrInput, msg: `unknown column "created" in table`},
		{name: "uuidv7 into bigint", opt: migrate.Options{Table: "big", To: "uuidv7"}, want: migrate.ErrInput, msg: "do not fit the bigint key big.id", field: "Options.To"},
		{name: "64-bit layout into bigint", opt: migrate.Options{Table: "big", To: "snowflake?preset=discord"}, want: migrate.ErrInput, msg: "above 2^63-1, which do not fit the bigint key", field: "Options.To"},
		{name: "snowflake into uuid", opt: migrate.Options{Table: "u", To: "snowflake"}, want: migrate.ErrInput, msg: "do not fit the uuid key u.id", field: "Options.To"},
		{name: "text key", opt: migrate.Options{Table: "texty", To: "snowflake"}, want: migrate.ErrInput, msg: "primary key texty.id is text"},
		{name: "bad spec", opt: migrate.Options{Table: "big", To: "snowflak"}, want: migrate.ErrInput, msg: `unknown strategy "snowflak"`, field: "Options.To"},
		{name: "order does not hold", opt: migrate.Options{Table: "huge", To: "snowflake"}, want: migrate.ErrOrder, msg: "maximum key is 9000000000000000000", field: "Options.To"},
		{name: "before the epoch", opt: migrate.Options{Table: "big", To: "snowflake?epoch=2100-01-01", TimeColumn: "created_at"}, want: migrate.ErrInput, msg: "before the epoch", field: "Options.To"},
		{name: "batch", opt: migrate.Options{Table: "big", To: "snowflake", Batch: -1}, want: migrate.ErrInput, msg: "Options.Batch -1", field: "Options.Batch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := migrate.Run(context.Background(), conn, tc.opt)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Run(%+v) = %v; want %v with %q", tc.opt, err, tc.want, tc.msg)
			}
			var fe *idgen.FieldError
			if errors.As(err, &fe) != (tc.field != "") || tc.field != "" && fe.Field != tc.field {
				t.Errorf("Run(%+v) = %v; want a FieldError of %q (\"\": none)", tc.opt, err, tc.field)
			}
			unchanged(t, conn)
		})
	}
}

type stampWriter struct {
	t     *testing.T
	start time.Time
}

func (w stampWriter) Write(b []byte) (int, error) {
	w.t.Logf("%6.2fs %s", time.Since(w.start).Seconds(), strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// unreferenced creates the table sessions (1000 rows, created_at one
// second apart) with the key idDef, which no other table references.
func unreferenced(t *testing.T, conn *pgx.Conn, idDef string) {
	t.Helper()
	exec(t, conn,
		"CREATE TABLE sessions ("+idDef+", token text, created_at timestamptz NOT NULL DEFAULT clock_timestamp())",
		"INSERT INTO sessions (token, created_at) SELECT 't' || i, now() - interval '1 day' + i * interval '1 s' FROM generate_series(1, 1000) i",
	)
}

func TestMigrateUnreferenced(t *testing.T) {
	const uuidKey, bigintKey = "id uuid PRIMARY KEY DEFAULT gen_random_uuid()", "id bigserial PRIMARY KEY"
	tests := []struct {
		name, idDef, to, timeColumn string
		newKey                      string // a query counting the rows whose key is not of the new scheme
	}{
		{name: "uuid to uuidv7", idDef: uuidKey, to: "uuidv7", timeColumn: "created_at",
			newKey: "SELECT count(*) FROM sessions WHERE substr(id::text, 15, 1) <> '7'"},
		{name: "uuid to uuidv7 without a time column", idDef: uuidKey, to: "uuidv7",
			newKey: "SELECT count(*) FROM sessions WHERE substr(id::text, 15, 1) <> '7'"},
		{name: "bigint to snowflake", idDef: bigintKey, to: "snowflake", timeColumn: "created_at",
			newKey: "SELECT count(*) FROM sessions WHERE id <= 1000 OR (id >> 12) & 31 NOT IN (30, 31)"},
		{name: "bigint to snowflake without a time column", idDef: bigintKey, to: "snowflake?preset=twitter&datacenter=3",
			newKey: "SELECT count(*) FROM sessions WHERE id <= 1000 OR (id >> 12) & 31 NOT IN (30, 31) OR (id >> 17) & 31 <> 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn, _ := schema(t) // a fresh schema: no state table yet
			unreferenced(t, conn, tc.idDef)
			ctx := context.Background()
			opt := migrate.Options{Table: "sessions", To: tc.to, TimeColumn: tc.timeColumn, Batch: 300}
			p, err := migrate.Inspect(ctx, conn, opt)
			if err != nil {
				t.Fatalf("Inspect(%+v) = %v; want a plan", opt, err)
			}
			if len(p.FKs) != 0 || p.Rows != 1000 || !p.OrderHolds {
				t.Fatalf("Inspect = FKs %+v, rows %d, order holds %v; want none, 1000, true", p.FKs, p.Rows, p.OrderHolds)
			}
			var b bytes.Buffer
			if err := p.Write(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "foreign keys none reference sessions") {
				t.Errorf("plan lacks %q:\n%s", "foreign keys none reference sessions", b.String())
			}
			var log bytes.Buffer
			opt.Log = msgLog(&log)
			if _, err := migrate.Run(ctx, conn, opt); err != nil {
				t.Fatalf("Run(%+v) = %v; log:\n%s", opt, err, log.String())
			}
			if !strings.Contains(log.String(), "phase done") {
				t.Errorf("Run log = %q; want phase done", log.String())
			}
			r, err := migrate.Verify(ctx, conn, "sessions")
			if err != nil {
				t.Fatalf("Verify = %v", err)
			}
			if !r.OK() || r.Phase != "done" || r.Rows != 1000 || r.Keys != 1000 || r.Distinct != 1000 || r.Mapped != 1000 || len(r.Children) != 0 {
				b.Reset()
				r.Write(&b)
				t.Fatalf("Verify = %s; want ok, phase done, 1000 rows, keys, distinct keys and mapped old keys, no children", b.String())
			}
			exec(t, conn, "INSERT INTO sessions (token) VALUES ('after')")
			if n := count(t, conn, tc.newKey); n != 0 {
				t.Errorf("%s = %d; want 0", tc.newKey, n)
			}
			if tc.timeColumn != "" {
				if n := count(t, conn, `SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY created_at, id_old) AS prev
					FROM sessions WHERE id_old IS NOT NULL) s WHERE id <= prev`); n != 0 {
					t.Errorf("%d backfilled keys out of creation order", n)
				}
			}
		})
	}
}

// TestPlanNothingToConvert: a plan of an empty table, or of a table
// already migrated, says so and prints no zero time.
func TestPlanNothingToConvert(t *testing.T) {
	conn, _ := schema(t)
	ctx := context.Background()
	exec(t, conn, "CREATE TABLE empty (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())")
	unreferenced(t, conn, "id uuid PRIMARY KEY DEFAULT gen_random_uuid()")
	if _, err := migrate.Run(ctx, conn, migrate.Options{Table: "sessions", To: "uuidv7", TimeColumn: "created_at"}); err != nil {
		t.Fatalf("Run = %v", err)
	}
	tests := []struct {
		name string
		opt  migrate.Options
		want []string
		not  []string
	}{
		{name: "empty table", opt: migrate.Options{Table: "empty", To: "snowflake", TimeColumn: "created_at"},
			want: []string{"0 rows", "time column  created_at timestamp with time zone: no rows to convert", "steps"}},
		{name: "migrated", opt: migrate.Options{Table: "sessions", TimeColumn: "created_at"},
			want: []string{"1000 rows", "migrated     to uuidv7 (phase done): no rows to convert"},
			not:  []string{"in progress", "run resumes it", "steps"}},
		{name: "migrated, with --to", opt: migrate.Options{Table: "sessions", To: "uuidv7", TimeColumn: "created_at"},
			want: []string{"migrated     to uuidv7 (phase done): no rows to convert"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := migrate.Inspect(ctx, conn, tc.opt)
			if err != nil {
				t.Fatalf("Inspect(%+v) = %v", tc.opt, err)
			}
			var b bytes.Buffer
			if err := p.Write(&b); err != nil {
				t.Fatal(err)
			}
			for _, not := range append(tc.not, "0001-01-01") {
				if strings.Contains(b.String(), not) {
					t.Errorf("plan of %s contains %q:\n%s", tc.opt.Table, not, b.String())
				}
			}
			for _, want := range tc.want {
				if !strings.Contains(b.String(), want) {
					t.Errorf("plan of %s lacks %q:\n%s", tc.opt.Table, want, b.String())
				}
			}
		})
	}
	opt := migrate.Options{Table: "sessions", To: "ulid"}
	if _, err := migrate.Inspect(ctx, conn, opt); !errors.Is(err, migrate.ErrInput) || !strings.Contains(err.Error(), `is already migrated to "uuidv7"`) {
		t.Errorf("Inspect(%+v) = %v; want ErrInput saying it is already migrated", opt, err)
	}
}

// TestPlanInProgress: a plan of an interrupted migration says where it
// stopped and prints no zero time.
// TestInspectOtherStateDropped: Inspect reads every schema's state table
// to refuse a table another migration changes; one dropped after Inspect
// listed it (its schema dropped, as each corpus test's is when it ends
// while the others run) records no migration, and Inspect goes on rather
// than failing with "relation does not exist". The drop is held open
// until Inspect waits on its lock, so the two meet every time.
func TestInspectOtherStateDropped(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.PostgresDSN(t)
	conn, name := schema(t)
	unreferenced(t, conn, "id bigserial PRIMARY KEY")
	other, _ := schemaAt(t, dsn, "idgen_migrate_other")
	exec(t, other, "CREATE TABLE idgen_migrate_state (tbl text, phase text, fks jsonb)")
	drop, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer drop.Rollback(ctx)
	if _, err := drop.Exec(ctx, "DROP TABLE idgen_migrate_state"); err != nil {
		t.Fatal(err)
	}
	inspecting := connect(t, dsn, name)
	done := make(chan error, 1)
	go func() {
		_, err := migrate.Inspect(ctx, inspecting, migrate.Options{Table: "sessions", To: "snowflake", TimeColumn: "created_at"})
		done <- err
	}()
	for { // until Inspect waits on the dropped table's lock
		var waiting bool
		if err := conn.QueryRow(ctx, "SELECT coalesce(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1",
			inspecting.PgConn().PID()).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Inspect ended (%v) before it read the other schema's state table", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := drop.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Inspect while another schema's state table is dropped = %v; want nil", err)
	}
}

func TestPlanInProgress(t *testing.T) {
	conn, _ := schema(t)
	unreferenced(t, conn, "id bigserial PRIMARY KEY")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt := migrate.Options{Table: "sessions", To: "snowflake", TimeColumn: "created_at", Batch: 100,
		OnBatch: func(done, total int64) { cancel() }}
	if _, err := migrate.Run(ctx, conn, opt); err == nil {
		t.Fatalf("Run with a context canceled after the first batch = nil; want an error")
	}
	conn = connect(t, testenv.PostgresDSN(t), conn.Config().RuntimeParams["search_path"])
	p, err := migrate.Inspect(context.Background(), conn, migrate.Options{Table: "sessions"})
	if err != nil {
		t.Fatalf("Inspect = %v", err)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"in progress  migration to snowflake, phase backfill (run resumes it; abort undoes it)", "time column  created_at timestamp with time zone\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "0001-01-01") {
		t.Errorf("plan shows a zero time:\n%s", b.String())
	}
}

// TestReservedWorkerField: migrate reserves worker IDs in the layout's
// snowflake.Layout.WorkerField: machine here, where it used to reserve
// the first node field, datacenter (the rule a lease and IDGEN_WORKER_ID
// did not follow).
func TestReservedWorkerField(t *testing.T) {
	conn, _ := schema(t)
	exec(t, conn, "CREATE TABLE orders (id bigserial PRIMARY KEY)")
	to := "snowflake?layout=time:41,datacenter:5,machine:5,sequence:11&datacenter=3"
	p, err := migrate.Inspect(context.Background(), conn, migrate.Options{Table: "orders", To: to})
	if err != nil {
		t.Fatalf("Inspect = %v", err)
	}
	if p.ReservedField != "machine" || p.TriggerWorker != 31 || p.BackfillWorker != 30 || p.Nodes["datacenter"] != 3 || p.Nodes["machine"] != 30 {
		t.Fatalf("Inspect(%s) reserved %s %d and %d, nodes %v; want machine 31 and 30, datacenter 3", to, p.ReservedField, p.TriggerWorker, p.BackfillWorker, p.Nodes)
	}
}
