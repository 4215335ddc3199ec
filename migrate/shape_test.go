package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/migrate"
)

// TestRefusals: each shape Run cannot migrate is refused by Inspect, with
// its name and a workaround, before anything changes; Run refuses it the
// same way.
func TestRefusals(t *testing.T) {
	const base = "CREATE TABLE t (id bigserial PRIMARY KEY, x int); INSERT INTO t (x) SELECT i FROM generate_series(1, 50) i; "
	const child = "CREATE TABLE c (id bigserial PRIMARY KEY, t_id bigint REFERENCES t, note text); INSERT INTO c (t_id) SELECT id FROM t; "
	tests := []struct {
		name, sql, table string
		shape, words     string
	}{
		{name: "check on the key", sql: base + "ALTER TABLE t ADD CONSTRAINT t_id_positive CHECK (id > 0)",
			shape: "check constraint", words: "constraint t_id_positive on table"},
		{name: "check on a foreign key column", sql: base + child + "ALTER TABLE c ADD CONSTRAINT c_t CHECK (t_id <> -7)",
			shape: "check constraint", words: "it uses"},
		{name: "expression index", sql: base + child + "CREATE INDEX c_mod ON c ((t_id % 10))",
			shape: "expression index", words: "c_mod"},
		{name: "partial index", sql: base + child + "CREATE INDEX c_note ON c (note) WHERE t_id > 5",
			shape: "partial index", words: "its WHERE clause uses a moved column"},
		{name: "exclusion constraint", sql: base + child + "ALTER TABLE c ADD CONSTRAINT c_excl EXCLUDE (t_id WITH =)",
			shape: "exclusion constraint", words: "c_excl"},
		{name: "generated column", sql: base + child + "ALTER TABLE c ADD COLUMN g bigint GENERATED ALWAYS AS (t_id * 2) STORED",
			shape: "generated column", words: "default value for column g"},
		{name: "policy", sql: base + "CREATE POLICY t_low ON t USING (id < 100)", shape: "row security policy", words: "t_low"},
		{name: "statistics", sql: base + "CREATE STATISTICS t_stats ON id, x FROM t", shape: "extended statistics", words: "t_stats"},
		{name: "function with an SQL-standard body", sql: base + "CREATE FUNCTION t_max() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT max(id) FROM t; END",
			shape: "function", words: "string body"},
		{name: "function of a dependent view's row type", sql: base + "CREATE VIEW tv AS SELECT id FROM t; CREATE FUNCTION tvs() RETURNS SETOF tv LANGUAGE sql AS 'SELECT * FROM tv'",
			shape: "object on a dependent view", words: "tvs()"},
		{name: "chain through a 1:1 table", sql: base + "CREATE TABLE ext (t_id bigint PRIMARY KEY REFERENCES t); CREATE TABLE g (ext_id bigint REFERENCES ext)",
			shape: "foreign key to a moved column", words: "g_ext_id_fkey"},
		{name: "key is a foreign key", sql: base + "CREATE TABLE ext (t_id bigint PRIMARY KEY REFERENCES t)", table: "ext",
			shape: "key is a foreign key", words: "migrate "},
		{name: "table inheritance", sql: base + "CREATE TABLE t2 (y int) INHERITS (t)", shape: "table inheritance", words: "NO INHERIT"},
		{name: "partition key", sql: base + "CREATE TABLE p (t_id bigint NOT NULL REFERENCES t) PARTITION BY RANGE (t_id); CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (1000)",
			shape: "partition key", words: "partitioned by t_id"},
		{name: "sub-partitioned", sql: base + "CREATE TABLE p (t_id bigint REFERENCES t, k int, d int) PARTITION BY LIST (k);" +
			" CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1) PARTITION BY LIST (d); CREATE TABLE p11 PARTITION OF p1 FOR VALUES IN (1)",
			shape: "sub-partitioned table", words: "one level"},
		{name: "partition without the foreign key", sql: base + "CREATE TABLE p (t_id bigint, k int) PARTITION BY LIST (k);" +
			" CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1); CREATE TABLE p2 PARTITION OF p FOR VALUES IN (2); ALTER TABLE p1 ADD FOREIGN KEY (t_id) REFERENCES t",
			shape: "partition without the foreign key", words: "p2"},
		{name: "unique index on a partitioned table", sql: base + "CREATE TABLE p (t_id bigint REFERENCES t, k int, UNIQUE (t_id, k)) PARTITION BY LIST (k);" +
			" CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1)", shape: "unique index on a partitioned table", words: "USING INDEX"},
		{name: "column in the way", sql: base + "ALTER TABLE t ADD COLUMN id_old bigint", shape: "column in the way", words: "what the swap renames id to"},
		{name: "a partition", sql: base + "CREATE TABLE p (id bigint, k int, PRIMARY KEY (id, k)) PARTITION BY LIST (k); CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1)",
			table: "p1", shape: "partition", words: "it is a partition of"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn, _ := schema(t)
			exec(t, conn, tc.sql)
			table := tc.table
			if table == "" {
				table = "t"
			}
			ctx := context.Background()
			opt := migrate.Options{Table: table, To: "snowflake"}
			p, err := migrate.Inspect(ctx, conn, opt)
			var se *migrate.ShapeError
			if !errors.As(err, &se) || !errors.Is(err, migrate.ErrShape) || !errors.Is(err, migrate.ErrInput) {
				t.Fatalf("Inspect(%s) = %v; want a *ShapeError matching ErrShape and ErrInput", table, err)
			}
			found := false
			for _, r := range se.Refusals {
				if r.Shape == tc.shape && strings.Contains(r.String(), tc.words) && r.Workaround != "" {
					found = true
				}
			}
			if !found {
				t.Fatalf("Inspect(%s) refusals = %v; want %q with %q and a workaround", table, err, tc.shape, tc.words)
			}
			if p == nil {
				t.Fatalf("Inspect(%s) returned no plan with its refusals", table)
			}
			var b bytes.Buffer
			if err := p.Write(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "REFUSED      "+tc.shape) || !strings.Contains(b.String(), "workaround: ") || strings.Contains(b.String(), "steps\n") {
				t.Errorf("plan = %s; want REFUSED %s with a workaround, and no steps", b.String(), tc.shape)
			}
			if _, runErr := migrate.Run(ctx, conn, opt); runErr == nil || runErr.Error() != err.Error() {
				t.Errorf("Run(%s) = %v; want what Inspect said: %v", table, runErr, err)
			}
			unchanged(t, conn)
		})
	}
}

// TestOtherMigration: a table another migration in progress changes (a
// child of both) is refused until that one ends.
func TestOtherMigration(t *testing.T) {
	conn, _ := schema(t)
	exec(t, conn,
		"CREATE TABLE a (id bigserial PRIMARY KEY); CREATE TABLE b (id bigserial PRIMARY KEY)",
		"INSERT INTO a SELECT FROM generate_series(1, 100); INSERT INTO b SELECT FROM generate_series(1, 100)",
		"CREATE TABLE ab (a_id bigint NOT NULL REFERENCES a, b_id bigint NOT NULL REFERENCES b, PRIMARY KEY (a_id, b_id))",
		"INSERT INTO ab SELECT a.id, b.id FROM a JOIN b ON b.id = a.id")
	conn = runOneBatch(t, conn, migrate.Options{Table: "a", To: "snowflake", Batch: 10})
	_, err := migrate.Inspect(context.Background(), conn, migrate.Options{Table: "b", To: "snowflake"})
	var se *migrate.ShapeError
	if !errors.As(err, &se) || se.Refusals[0].Shape != "migration in progress" || !strings.Contains(err.Error(), `"a" (phase backfill) changes it too`) {
		t.Fatalf("Inspect(b) while a's migration runs = %v; want migration in progress", err)
	}
	if err := migrate.Abort(context.Background(), conn, "a", true); err != nil {
		t.Fatalf("Abort(a) = %v", err)
	}
	if _, err := migrate.Inspect(context.Background(), conn, migrate.Options{Table: "b", To: "snowflake"}); err != nil {
		t.Fatalf("Inspect(b) after a's abort = %v", err)
	}
	unchanged(t, conn)
}

// TestKeyUpdateCascade: with ON UPDATE CASCADE, an update of the old key
// during the migration (of a row backfilled and of one not yet) moves its
// mapping row, the row keeps (or gets) its new key, and the referencing
// rows follow into their new column; after the swap an update of the new
// key cascades, and the old columns stay consistent for revert.
func TestKeyUpdateCascade(t *testing.T) {
	conn, _ := schema(t)
	ctx := context.Background()
	exec(t, conn,
		"CREATE TABLE parent (id bigserial PRIMARY KEY, name text NOT NULL)",
		"INSERT INTO parent (name) SELECT 'p' || i FROM generate_series(1, 2000) i",
		"CREATE TABLE child (id bigserial PRIMARY KEY, parent_id bigint NOT NULL REFERENCES parent ON UPDATE CASCADE, name text NOT NULL)",
		"INSERT INTO child (parent_id, name) SELECT id, name FROM parent")
	updated := false
	opt := migrate.Options{Table: "parent", To: "snowflake", Batch: 100, OnBatch: func(done, total int64) {
		if done == 500 && !updated {
			updated = true // p10 is backfilled, p1500 not yet
			exec(t, conn, "UPDATE parent SET id = id + 1000000 WHERE name IN ('p10', 'p1500')")
		}
	}}
	p, err := migrate.Run(ctx, conn, opt)
	if err != nil || !updated {
		t.Fatalf("Run with key updates during the backfill = %v (updated %v)", err, updated)
	}
	if !strings.Contains(p.FKs[0].OnUpdate, "CASCADE") {
		t.Errorf("plan's foreign key ON UPDATE = %q; want CASCADE", p.FKs[0].OnUpdate)
	}
	if r, err := migrate.Verify(ctx, conn, "parent"); err != nil || !r.OK() {
		t.Fatalf("Verify = %+v, %v; want ok", r, err)
	}
	intact := func(when string) {
		t.Helper()
		for _, q := range []string{
			"SELECT count(*) FROM child c JOIN parent p ON p.id = c.parent_id WHERE p.name <> c.name",
			"SELECT count(*) FROM child c LEFT JOIN parent p ON p.id = c.parent_id WHERE p.id IS NULL",
		} {
			if n := count(t, conn, q); n != 0 {
				t.Errorf("%s: %s = %d; want 0", when, q, n)
			}
		}
	}
	intact("after the swap")
	if n := count(t, conn, "SELECT count(*) FROM parent WHERE name IN ('p10', 'p1500') AND id_old > 1000000 AND id > 1000000000"); n != 2 {
		t.Errorf("%d updated rows with their updated old key and a new key; want 2", n)
	}
	if n := count(t, conn, "SELECT count(*) FROM parent_idgen_map WHERE old_key IN (10, 1500)"); n != 0 {
		t.Errorf("%d mapping rows for the keys before the update; want 0", n)
	}
	if n := count(t, conn, "SELECT count(*) FROM child c JOIN parent p ON p.id = c.parent_id WHERE c.parent_id_old <> p.id_old"); n != 0 {
		t.Errorf("%d child rows whose old foreign key is not their parent's old key", n)
	}
	exec(t, conn, "UPDATE parent SET id = (SELECT max(id) + 1 FROM parent) WHERE name = 'p20'")
	intact("after an update of a new key")
	if r, err := migrate.Verify(ctx, conn, "parent"); err != nil || !r.OK() {
		t.Fatalf("Verify after an update of a new key = %+v, %v; want ok", r, err)
	}
	if _, err := migrate.Revert(ctx, conn, "parent"); err != nil {
		t.Fatalf("Revert = %v", err)
	}
	intact("after revert")
	if n := count(t, conn, "SELECT count(*) FROM parent WHERE name IN ('p10', 'p1500') AND id > 1000000"); n != 2 {
		t.Errorf("after revert, %d rows keep their updated old keys; want 2", n)
	}
}

// TestVerifyKeyLeftOnOldColumn reproduces what a 1:1 extension table
// migrated alone came to before Inspect refused it: its foreign key to the
// parent followed the renamed column, onto user_id_old, and every row's
// new key joins no parent. Verify fails, and so Finish refuses (it used to
// drop the foreign key with the column).
func TestVerifyKeyLeftOnOldColumn(t *testing.T) {
	conn, _ := schema(t)
	ctx := context.Background()
	exec(t, conn,
		"CREATE TABLE users (id bigserial PRIMARY KEY)",
		"INSERT INTO users SELECT FROM generate_series(1, 500)",
		"CREATE TABLE ext (user_id bigint PRIMARY KEY, bio text)",
		"INSERT INTO ext SELECT id, 'bio' FROM users")
	if _, err := migrate.Run(ctx, conn, migrate.Options{Table: "ext", To: "snowflake"}); err != nil {
		t.Fatalf("Run(ext) = %v", err)
	}
	if r, err := migrate.Verify(ctx, conn, "ext"); err != nil || !r.OK() {
		t.Fatalf("Verify before the foreign key = %+v, %v; want ok", r, err)
	}
	exec(t, conn, "ALTER TABLE ext ADD CONSTRAINT ext_user_id_fkey FOREIGN KEY (user_id_old) REFERENCES users (id)",
		"CREATE VIEW ext_list AS SELECT user_id_old AS user_id, bio FROM ext")
	r, err := migrate.Verify(ctx, conn, "ext")
	if err != nil {
		t.Fatalf("Verify = %v", err)
	}
	var b bytes.Buffer
	r.Write(&b)
	for _, want := range []string{"foreign key ext_user_id_fkey sits on the old column", "500 of 500 rows are orphaned through the new key user_id",
		"view ", "ext_list still reads the old column"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Verify with the foreign key on user_id_old:\n%s\nwant %q", b.String(), want)
		}
	}
	if _, err := migrate.Finish(ctx, conn, "ext", true); !errors.Is(err, migrate.ErrVerify) {
		t.Errorf("Finish with the foreign key on user_id_old = %v; want ErrVerify (finish would drop the foreign key)", err)
	}
	if n := count(t, conn, "SELECT count(*) FROM pg_constraint WHERE conname = 'ext_user_id_fkey'"); n != 1 {
		t.Errorf("the foreign key is gone after a refused Finish")
	}
}

// TestShapeAddedDuringRun: a shape that appears while a migration is in
// progress (here a BEGIN ATOMIC function on the key) stops the resumed run
// before the swap with a *ShapeError (exit 2, not a fault to retry), and
// Abort still undoes the migration.
func TestShapeAddedDuringRun(t *testing.T) {
	conn, _ := schema(t)
	exec(t, conn, "CREATE TABLE t (id bigserial PRIMARY KEY, x int)", "INSERT INTO t (x) SELECT i FROM generate_series(1, 300) i",
		"CREATE TABLE c (t_id bigint REFERENCES t)", "INSERT INTO c SELECT id FROM t")
	conn = runOneBatch(t, conn, migrate.Options{Table: "t", To: "snowflake", Batch: 50})
	exec(t, conn, "CREATE FUNCTION t_max() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT max(id) FROM t; END")
	_, err := migrate.Run(context.Background(), conn, migrate.Options{Table: "t"})
	var se *migrate.ShapeError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "appeared after run started") || !strings.Contains(err.Error(), "t_max()") {
		t.Fatalf("Run resumed after a BEGIN ATOMIC function on the key appeared = %v; want a *ShapeError naming it", err)
	}
	last := se.Refusals[len(se.Refusals)-1]
	if !last.Abort || !strings.HasSuffix(err.Error(), "workaround: remove them, or undo the migration with Abort") ||
		!strings.HasSuffix(se.Text("the abort command"), "workaround: remove them, or undo the migration with the abort command") {
		t.Errorf("Run's *ShapeError = %q, %+v; want its last workaround to undo the migration with Abort, named as Text is told", err, last)
	}
	if b := se.Brief(); !errors.Is(b, migrate.ErrShape) || !errors.Is(b, migrate.ErrInput) ||
		!strings.HasSuffix(b.Error(), fmt.Sprintf("cannot be migrated as it is: %d shape(s) refused, listed above", len(se.Refusals))) {
		t.Errorf("ShapeError.Brief() = %q; want ErrShape and ErrInput counting the refusals", b)
	}
	exec(t, conn, "DROP FUNCTION t_max()")
	var ce *migrate.ConfirmError
	if err := migrate.Abort(context.Background(), conn, "t", false); !errors.Is(err, migrate.ErrInput) || !strings.Contains(err.Error(), "; call Abort with yes to abort") ||
		!errors.As(err, &ce) || ce.Call != "Abort" || !strings.HasSuffix(ce.What, "leaves the table as it was") {
		t.Errorf("Abort without yes = %v; want ErrInput and a *ConfirmError asking for yes", err)
	}
	if err := migrate.Abort(context.Background(), conn, "t", true); err != nil {
		t.Fatalf("Abort = %v", err)
	}
	unchanged(t, conn)
}

// TestPlanFiringTriggers: a role that may not set
// session_replication_role gets a plan that lists the triggers the
// backfill fires for each row.
func TestPlanFiringTriggers(t *testing.T) {
	conn, name := schema(t)
	role := fmt.Sprintf("i26_migrate_plain_%d", rand.IntN(1e9))
	exec(t, conn, "CREATE TABLE t (id bigserial PRIMARY KEY, touched timestamptz)",
		"CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.touched := now(); RETURN NEW; END $$",
		"CREATE TRIGGER t_touch BEFORE UPDATE ON t FOR EACH ROW EXECUTE FUNCTION touch()",
		"CREATE TRIGGER t_only_id BEFORE UPDATE OF id ON t FOR EACH ROW EXECUTE FUNCTION touch()",
		"CREATE ROLE "+role+" LOGIN", "GRANT USAGE ON SCHEMA "+name+" TO "+role, "GRANT SELECT ON ALL TABLES IN SCHEMA "+name+" TO "+role)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), testenv.PostgresDSN(t))
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer c.Close(context.Background())
		for _, s := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := c.Exec(context.Background(), s); err != nil {
				t.Errorf("cleanup: %s: %v", s, err)
			}
		}
	})
	cfg, err := pgx.ParseConfig(testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.User = role
	cfg.RuntimeParams["search_path"] = name
	plain, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Skipf("cannot connect as a new role (the server does not trust it): %v", err)
	}
	defer plain.Close(context.Background())
	p, err := migrate.Inspect(context.Background(), plain, migrate.Options{Table: "t", To: "snowflake"})
	if err != nil {
		t.Fatalf("Inspect as %s = %v", role, err)
	}
	var b bytes.Buffer
	p.Write(&b)
	if p.Quiet || !strings.Contains(b.String(), "fires        trigger t_touch on") || strings.Contains(b.String(), "fires        trigger t_only_id") {
		t.Errorf("plan as a role without session_replication_role (quiet %v):\n%s\nwant t_touch listed as firing, t_only_id not", p.Quiet, b.String())
	}
	p, err = migrate.Inspect(context.Background(), conn, migrate.Options{Table: "t", To: "snowflake"})
	if err != nil || !p.Quiet || len(p.Fire) != 0 {
		t.Errorf("Inspect as a superuser = quiet %v, fires %v, %v; want quiet, none", p != nil && p.Quiet, p, err)
	}
}

// runOneBatch runs the migration opt until its first batch is done, then
// cancels it, and returns a new connection to the same schema (the
// canceled one is closed), as a new process would have.
func runOneBatch(t *testing.T, conn *pgx.Conn, opt migrate.Options) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt.OnBatch = func(int64, int64) { cancel() }
	if _, err := migrate.Run(ctx, conn, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run(%s) canceled after a batch = %v; want context.Canceled", opt.Table, err)
	}
	return connect(t, conn.Config().ConnString(), conn.Config().RuntimeParams["search_path"])
}
