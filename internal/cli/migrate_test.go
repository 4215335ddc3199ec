package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/internal/cli"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/migrate"
)

func TestMigrateCommand(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	ctx := context.Background()
	conn, s := migrateSchema(t,
		"CREATE TABLE orders (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO orders (created_at) SELECT now() - i * interval '1 min' FROM generate_series(1, 500) i",
		"CREATE TABLE items (id bigserial PRIMARY KEY, order_id bigint NOT NULL REFERENCES orders (id))",
		"INSERT INTO items (order_id) SELECT id FROM orders",
		"CREATE TABLE nokey (id bigint)")
	table := s + ".orders"
	base := []string{"--dsn", dsn, "--table", table}

	out, errOut, code := run(append([]string{"migrate", "plan", "--to", "snowflake", "--time-column", "created_at"}, base...)...)
	if code != 0 || !strings.Contains(out, "500 rows") || !strings.Contains(out, "items.order_id") || !strings.Contains(out, "holds") {
		t.Fatalf("migrate plan = exit %d, %q, %q; want 500 rows, items.order_id, order holds", code, out, errOut)
	}
	out, errOut, code = run(append([]string{"migrate", "run", "--to", "snowflake", "--time-column", "created_at", "--dry-run"}, base...)...)
	if code != 0 || !strings.Contains(out, "dry run") {
		t.Fatalf("migrate run --dry-run = exit %d, %q, %q", code, out, errOut)
	}
	out, errOut, code = run(append([]string{"migrate", "run", "--to", "snowflake", "--time-column", "created_at", "--batch", "100"}, base...)...)
	if code != 0 || !strings.Contains(out, "phase done") {
		t.Fatalf("migrate run = exit %d, %q, %q; want phase done", code, out, errOut)
	}
	if !strings.Contains(errOut, "backfill orders") {
		t.Errorf("migrate run stderr = %q; want a progress bar", errOut)
	}
	out, errOut, code = run(append([]string{"migrate", "verify"}, base...)...)
	if code != 0 || !strings.Contains(out, "verify  ok") {
		t.Fatalf("migrate verify = exit %d, %q, %q; want ok", code, out, errOut)
	}
	// Break a foreign key: verify fails with exit 1.
	if _, err := conn.Exec(ctx, "ALTER TABLE "+s+".items DROP CONSTRAINT items_order_id_fkey; UPDATE "+s+".items SET order_id = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(append([]string{"migrate", "verify"}, base...)...)
	if code != 1 || !strings.Contains(out, "1 rows reference no orders row") {
		t.Fatalf("migrate verify after breaking a row = exit %d, %q, %q; want exit 1 and the orphan", code, out, errOut)
	}

	bad := []struct {
		name string
		args []string
		msg  string
	}{
		{name: "no primary key", args: []string{"migrate", "plan", "--dsn", dsn, "--table", s + ".nokey", "--to", "snowflake"}, msg: "has no primary key"},
		{name: "unknown column", args: []string{"migrate", "run", "--dsn", dsn, "--table", s + ".items", "--to", "snowflake", "--time-column", "nope"}, msg: `unknown column "nope"`},
		{name: "no table", args: []string{"migrate", "plan", "--dsn", dsn, "--to", "snowflake"}, msg: "--table is required"},
		{name: "no migration", args: []string{"migrate", "verify", "--dsn", dsn, "--table", s + ".items"}, msg: "has no migration"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.msg) {
				t.Fatalf("%v = exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.msg)
			}
		})
	}
}

// migrateSchema creates a unique schema, dropped when the test ends, and
// runs sqls in it (the search_path of conn starts with it).
func migrateSchema(t *testing.T, sqls ...string) (*pgx.Conn, string) {
	t.Helper()
	dsn := testenv.PostgresDSN(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf("idgen_cli_migrate_%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1e6))
	t.Cleanup(func() {
		conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+s+" CASCADE")
		conn.Close(context.Background())
	})
	for _, q := range append([]string{"CREATE SCHEMA " + s, "SET search_path = " + s}, sqls...) {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return conn, s
}

// shellWords splits a command line of plain and single-quoted words, as a
// shell would.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in, started := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			in, started = !in, true
		case r == ' ' && !in:
			if started {
				words = append(words, w.String())
			}
			w.Reset()
			started = false
		default:
			w.WriteRune(r)
			started = true
		}
	}
	if in {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if started {
		words = append(words, w.String())
	}
	return words
}

// TestMigrateUnreferencedCommand migrates a table no other table
// references, as a user would: plan, run, then the verify command run's
// closing hint prints, pasted as it is, then plan again.
func TestMigrateUnreferencedCommand(t *testing.T) {
	// Trust authentication: the server accepts any password, and the
	// password must appear nowhere.
	dsn := strings.Replace(testenv.PostgresDSN(t), "postgres@", "postgres:s3cret-pw@", 1)
	if !strings.Contains(dsn, "s3cret-pw") {
		t.Skipf("IDGEN_TEST_POSTGRES %q is not of the form postgres://postgres@...", testenv.PostgresDSN(t))
	}
	tests := []struct {
		name, idDef, to string
	}{
		{name: "uuid to uuidv7", idDef: "id uuid PRIMARY KEY DEFAULT gen_random_uuid()", to: "uuidv7"},
		{name: "bigint to snowflake", idDef: "id bigserial PRIMARY KEY", to: "snowflake"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s := migrateSchema(t,
				"CREATE TABLE sessions ("+tc.idDef+", created_at timestamptz NOT NULL DEFAULT now())",
				"INSERT INTO sessions (created_at) SELECT now() - i * interval '1 s' FROM generate_series(1, 300) i")
			table := s + ".sessions"
			args := []string{"--dsn", dsn, "--table", table, "--to", tc.to, "--time-column", "created_at"}
			var all strings.Builder
			out, errOut, code := run(append([]string{"migrate", "plan"}, args...)...)
			all.WriteString(out + errOut)
			if code != 0 || !strings.Contains(out, "300 rows") || !strings.Contains(out, "foreign keys none reference sessions") {
				t.Fatalf("migrate plan = exit %d, %q, %q; want 300 rows, no foreign keys", code, out, errOut)
			}
			out, errOut, code = run(append([]string{"migrate", "run"}, args...)...)
			all.WriteString(out + errOut)
			if code != 0 || !strings.Contains(out, "phase done") {
				t.Fatalf("migrate run = exit %d, %q, %q; want phase done", code, out, errOut)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			hint := strings.TrimSpace(lines[len(lines)-2])
			wantHint := "idgen migrate verify --dsn '" + testenv.PostgresDSN(t) + "' --table " + table
			if lines[len(lines)-3] != "done; check it with:" || hint != wantHint ||
				lines[len(lines)-1] != "  (the password is left out: set PGPASSWORD, or put it back into --dsn)" {
				t.Fatalf("migrate run closes with %q; want done; check it with: %s and a note on the password", lines[len(lines)-3:], wantHint)
			}
			words := shellWords(t, hint)
			out, errOut, code = run(words[1:]...)
			all.WriteString(out + errOut)
			if code != 0 || !strings.Contains(out, "phase done): 300 rows, 300 new keys, 300 distinct, 300 of 300 old keys mapped") || !strings.Contains(out, "verify  ok") {
				t.Fatalf("%v = exit %d, %q, %q; want verify ok", words, code, out, errOut)
			}
			out, errOut, code = run(append([]string{"migrate", "plan"}, args...)...)
			all.WriteString(out + errOut)
			if code != 0 || !strings.Contains(out, "migrated     to "+tc.to+" (phase done): no rows to convert") || strings.Contains(out, "0001-01-01") {
				t.Fatalf("migrate plan after the migration = exit %d, %q, %q; want it migrated, no zero time", code, out, errOut)
			}
			if strings.Contains(all.String(), "s3cret-pw") {
				t.Errorf("the password shows in the output:\n%s", all.String())
			}
		})
	}
}

func TestMigrateHintDSN(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	_, s := migrateSchema(t, "CREATE TABLE sessions (id uuid PRIMARY KEY DEFAULT gen_random_uuid())",
		"INSERT INTO sessions SELECT FROM generate_series(1, 10)")
	t.Setenv("DATABASE_URL", dsn)
	out, errOut, code := run("migrate", "run", "--table", s+".sessions", "--to", "uuidv7")
	want := "done; check it with:\n  idgen migrate verify --dsn \"$DATABASE_URL\" --table " + s + ".sessions\n"
	if code != 0 || !strings.HasSuffix(out, want) {
		t.Fatalf("migrate run with $DATABASE_URL = exit %d, %q, %q; want it to end with %q", code, out, errOut, want)
	}
}

// TestMigrateExitCodes: bad input exits 2, a database failure 1, and no
// message shows Go internals or echoes more than about 64 characters of an
// input.
func TestMigrateExitCodes(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	_, s := migrateSchema(t,
		"CREATE TABLE t (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO t DEFAULT VALUES")
	// A state table of another shape: reading it fails.
	_, s2 := migrateSchema(t, "CREATE TABLE broken (id bigserial PRIMARY KEY)", "CREATE TABLE idgen_migrate_state (tbl text)")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	long := strings.Repeat("x", 10000)
	tbl := s + ".t"
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{name: "unknown table", args: []string{"plan", "--dsn", dsn, "--table", s + ".nosuch", "--to", "snowflake"}, code: 2,
			msg: `idgen: migrate: bad input: table "` + s + `.nosuch" not found`},
		{name: "too many dots", args: []string{"plan", "--dsn", dsn, "--table", "a.b.c.d", "--to", "snowflake"}, code: 2,
			msg: `idgen: migrate: bad input: table "a.b.c.d": want name or schema.name`},
		{name: "bad name", args: []string{"run", "--dsn", dsn, "--table", "x y", "--to", "snowflake"}, code: 2,
			msg: `idgen: migrate: bad input: table "x y": want name or schema.name`},
		{name: "long table name", args: []string{"plan", "--dsn", dsn, "--table", long, "--to", "snowflake"}, code: 2,
			msg: `idgen: migrate: bad input: table "` + strings.Repeat("x", 64) + `…" not found`},
		{name: "unknown strategy", args: []string{"plan", "--dsn", dsn, "--table", tbl, "--to", "snowflak"}, code: 2,
			msg: `unknown strategy "snowflak"`},
		{name: "worker not a number", args: []string{"plan", "--dsn", dsn, "--table", tbl, "--to", "snowflake?worker=abc"}, code: 2,
			msg: `idgen: migrate: bad input: --to "snowflake?worker=abc": worker "abc": want an integer in [0, 31]`},
		{name: "worker 1e3", args: []string{"run", "--dsn", dsn, "--table", tbl, "--to", "snowflake?worker=1e3"}, code: 2,
			msg: `idgen: migrate: bad input: --to "snowflake?worker=1e3": worker "1e3": want an integer in [0, 31]`},
		{name: "worker out of range", args: []string{"plan", "--dsn", dsn, "--table", tbl, "--to", "snowflake?worker=32"}, code: 2,
			msg: `idgen: migrate: bad input: --to "snowflake?worker=32": worker "32": want an integer in [0, 31]`},
		{name: "long time column", args: []string{"plan", "--dsn", dsn, "--table", tbl, "--to", "snowflake", "--time-column", long}, code: 2,
			msg: `idgen: migrate: bad input: unknown column "` + strings.Repeat("x", 64) + `…" in table`},
		{name: "bad dsn", args: []string{"plan", "--dsn", "postgres://u:s3cret-pw@127.0.0.1:notaport/db", "--table", tbl, "--to", "snowflake"}, code: 2,
			msg: `idgen: --dsn "postgres://u:xxxxx@127.0.0.1:notaport/db": not a PostgreSQL URL or keyword/value DSN; want e.g. postgres://user@host:5432/db`},
		{name: "bad keyword dsn", args: []string{"verify", "--dsn", "host=x password=s3cret-pw port", "--table", tbl}, code: 2,
			msg: `idgen: --dsn "host=x password=xxxxx port": not a PostgreSQL URL or keyword/value DSN`},
		{name: "connection refused", args: []string{"plan", "--dsn", "postgres://postgres:s3cret-pw@" + closed + "/postgres?connect_timeout=5", "--table", tbl, "--to", "snowflake"}, code: 1,
			msg: "idgen: migrate: cannot connect to PostgreSQL at " + closed + " (user postgres, database postgres): connection refused"},
		{name: "no database", args: []string{"verify", "--dsn", otherDatabase(t, dsn, "idgen_no_such_db"), "--table", tbl}, code: 1,
			msg: `idgen: migrate: cannot connect to PostgreSQL at 127.0.0.1:5432 (user postgres, database idgen_no_such_db): database "idgen_no_such_db" does not exist (SQLSTATE 3D000)`},
		{name: "database failure", args: []string{"run", "--dsn", dsn, "--table", s2 + ".broken", "--to", "snowflake"}, code: 1,
			msg: `idgen: migrate: read the state table "` + s2 + `"."idgen_migrate_state": ERROR: column "phase" does not exist (SQLSTATE 42703)`},
	}
	internals := []string{"strconv", "dial tcp", "dial error", "failed to connect", "cannot parse `", "keyword/value (", "server error:", "%!", "goroutine", "panic", "s3cret-pw"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(append([]string{"migrate"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.msg) {
				t.Fatalf("migrate %.200q = exit %d, stderr %.300q; want exit %d and %q", tc.args, code, errOut, tc.code, tc.msg)
			}
			for _, bad := range internals {
				if strings.Contains(out+errOut, bad) {
					t.Errorf("migrate %.200q output contains %q: %q", tc.args, bad, out+errOut)
				}
			}
			if len(errOut) > 400 {
				t.Errorf("migrate %.200q stderr is %d bytes; want the input cut: %.500q", tc.args, len(errOut), errOut)
			}
		})
	}
}

// otherDatabase returns the URL dsn naming the database db instead.
func otherDatabase(t *testing.T, dsn, db string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	return u.String()
}

// cutOnWrite cuts the proxy at the first write that contains at.
type cutOnWrite struct {
	bytes.Buffer
	at    string
	proxy *testenv.Proxy
	cut   bool
}

func (w *cutOnWrite) Write(b []byte) (int, error) {
	if !w.cut && strings.Contains(string(b), w.at) {
		w.cut = true
		w.proxy.Cut()
	}
	return w.Buffer.Write(b)
}

func (w *cutOnWrite) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// TestMigrateConnectionLost: a connection lost during run exits 1 with a
// message in words that says how to resume, and the same command resumes.
func TestMigrateConnectionLost(t *testing.T) {
	_, s := migrateSchema(t,
		"CREATE TABLE sessions (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO sessions (created_at) SELECT now() - i * interval '1 s' FROM generate_series(1, 2000) i")
	dsn, proxy := testenv.ViaProxy(t, testenv.PostgresDSN(t))
	args := []string{"migrate", "run", "--dsn", dsn, "--table", s + ".sessions", "--to", "snowflake", "--batch", "100"}
	var out bytes.Buffer
	errOut := &cutOnWrite{at: "backfill", proxy: proxy}
	code := cli.Main(args, strings.NewReader(""), &out, errOut)
	host := strings.TrimPrefix(strings.Split(dsn, "/")[2], "postgres@")
	want := "idgen: migrate: lost the connection to PostgreSQL at " + host + " ("
	wantEnd := "); run the same command again to resume\n"
	last := errOut.String()
	if i := strings.LastIndex(last, "idgen: "); i >= 0 {
		last = last[i:]
	}
	if !errOut.cut || code != 1 || !strings.HasPrefix(last, want) || !strings.HasSuffix(last, wantEnd) {
		t.Fatalf("migrate run, its connection cut (cut %v) = exit %d, stderr %q; want exit 1 and %q...%q", errOut.cut, code, last, want, wantEnd)
	}
	for _, bad := range []string{"read tcp", "write tcp", "dial", "conn closed", "failed to"} {
		if strings.Contains(last, bad) {
			t.Errorf("stderr %q contains %q", last, bad)
		}
	}
	proxy.Restore()
	stdout, stderr, code := run(args...)
	if code != 0 || !strings.Contains(stdout, "resuming the migration") || !strings.Contains(stdout, "phase done") {
		t.Fatalf("migrate run again = exit %d, %q, %q; want it to resume and finish", code, stdout, stderr)
	}
}

// TestMigrateControlCommand pauses a migration, reads its status, starts
// run (which waits, paused), and resumes it with a new batch size.
func TestMigrateControlCommand(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	_, s := migrateSchema(t,
		"CREATE TABLE events (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO events (at) SELECT now() - i * interval '1 s' FROM generate_series(1, 2000) i")
	table := s + ".events"
	base := []string{"--dsn", dsn, "--table", table}

	out, errOut, code := run(append([]string{"migrate", "pause"}, base...)...)
	if code != 2 || !strings.Contains(errOut, "has no migration recorded") {
		t.Fatalf("migrate pause before any run = exit %d, %q, %q; want exit 2, no migration recorded", code, out, errOut)
	}
	interruptedRun(t, dsn, migrate.Options{Table: table, To: "snowflake", TimeColumn: "at", Batch: 100}, false)
	if out, errOut, code = run(append([]string{"migrate", "pause"}, base...)...); code != 0 {
		t.Fatalf("migrate pause = exit %d, %q, %q", code, out, errOut)
	}
	out, errOut, code = run(append([]string{"migrate", "status"}, base...)...)
	for _, want := range []string{"phase    backfill, no run going on", "rows     100 of 2000 (5.0%)", "paused   yes", "batch    100 rows, fixed size"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("migrate status = exit %d, %q, %q; want %q", code, out, errOut, want)
		}
	}

	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := run(append([]string{"migrate", "run", "--batch", "100"}, base...)...)
		done <- result{out, errOut, code}
	}()
	out = waitStatus(t, base, "waiting  paused")
	if !strings.Contains(out, "phase    backfill, running") {
		t.Errorf("migrate status of a paused run = %q; want running", out)
	}
	if out, errOut, code = run(append([]string{"migrate", "resume", "--batch", "500"}, base...)...); code != 0 {
		t.Fatalf("migrate resume = exit %d, %q, %q", code, out, errOut)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("migrate run did not finish a minute after resume")
	}
	if r.code != 0 || !strings.Contains(r.errOut, "idgen: waiting: paused") || !strings.Contains(r.errOut, "idgen: going on after") {
		t.Fatalf("migrate run = exit %d, %q, %q; want it to say it waits paused, then goes on", r.code, r.out, r.errOut)
	}
	// A finished migration has nothing to pause or resume (exit 2), and its
	// status says what is left to do.
	for _, c := range []string{"pause", "resume"} {
		out, errOut, code = run(append([]string{"migrate", c}, base...)...)
		if code != 2 || !strings.Contains(errOut, "has no batches left to run (phase done): there is nothing to "+c) {
			t.Errorf("migrate %s after the run = exit %d, %q, %q; want exit 2, nothing to %s", c, code, out, errOut, c)
		}
	}
	out, errOut, code = run(append([]string{"migrate", "status"}, base...)...)
	for _, want := range []string{"phase    done: the keys are swapped (idgen migrate revert swaps back; finish --yes drops the old keys)\n",
		"rows     2000 of 2000", "paused   no", "batch    500 rows"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("migrate status after the run = exit %d, %q, %q; want %q", code, out, errOut, want)
		}
	}
	if strings.Contains(out, "done, done") {
		t.Errorf("migrate status after the run = %q; says done twice", out)
	}
	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"migrate", "finish"}, 2, "revert is no longer possible after it; give --yes"},
		{[]string{"migrate", "revert"}, 0, "reverted " + table + " to its old keys"},
		{[]string{"migrate", "revert"}, 2, "is in phase reverted; revert works after the swap"},
		// After revert, each word says what it does, and status the next.
		{[]string{"migrate", "status"}, 0, "phase    reverted: back on the old keys (next: idgen migrate discard drops the new ones; idgen migrate run --yes starts over)\n"},
		{[]string{"migrate", "finish", "--yes"}, 2, "was reverted: finish drops the old keys of a completed migration; discard drops what the reverted one left"},
		{[]string{"migrate", "run"}, 2, "was reverted; Discard drops what it left (idgen migrate discard), or Run with StartOver (run --yes)"},
		{[]string{"migrate", "run", "--yes", "--to", "snowflake", "--time-column", "at"}, 0, "phase done"},
		{[]string{"migrate", "revert"}, 0, "idgen migrate discard drops them, idgen migrate run --yes starts over"},
		{[]string{"migrate", "discard"}, 0, "discarded the reverted migration of " + table},
		{[]string{"migrate", "discard"}, 2, "has no migration recorded"},
		{[]string{"migrate", "status"}, 2, "has no migration recorded"},
	}
	for _, st := range steps {
		out, errOut, code := run(append(st.args, base...)...)
		if code != st.code || !strings.Contains(out+errOut, st.want) {
			t.Errorf("%v = exit %d, %q, %q; want exit %d and %q", st.args, code, out, errOut, st.code, st.want)
		}
	}
	if n := countRows(t, dsn, "SELECT count(*) FROM "+table+" WHERE id > 2000"); n != 0 {
		t.Errorf("%d rows keep a new key after revert and discard", n)
	}
}

func countRows(t *testing.T, dsn, q string) int64 {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestMigrateInterrupt sends SIGINT to a run waiting while paused: it
// exits 130 (the exit-code rule) saying it resumes, and the same command resumes it.
func TestMigrateInterrupt(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	_, s := migrateSchema(t,
		"CREATE TABLE hits (id bigserial PRIMARY KEY)",
		"INSERT INTO hits SELECT FROM generate_series(1, 1000)")
	table := s + ".hits"
	base := []string{"--dsn", dsn, "--table", table}
	interruptedRun(t, dsn, migrate.Options{Table: table, To: "snowflake", Batch: 100}, true)
	type result struct {
		errOut string
		code   int
	}
	done := make(chan result, 1)
	go func() {
		_, errOut, code := run(append([]string{"migrate", "run"}, base...)...)
		done <- result{errOut, code}
	}()
	waitStatus(t, base, "waiting  paused")
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != 130 || !strings.Contains(r.errOut, "idgen: migrate: interrupted; what is done is kept: run the same command again to resume") {
		t.Fatalf("migrate run interrupted = exit %d, %q; want exit 130 and to resume", r.code, r.errOut)
	}
	if strings.Contains(r.errOut, "100%") {
		t.Errorf("migrate run interrupted at 10%% = %q; want no progress bar at 100%%", r.errOut)
	}
	if out, errOut, code := run(append([]string{"migrate", "resume"}, base...)...); code != 0 {
		t.Fatalf("migrate resume = exit %d, %q, %q", code, out, errOut)
	}
	if out, errOut, code := run(append([]string{"migrate", "run"}, base...)...); code != 0 || !strings.Contains(out, "resuming the migration") {
		t.Fatalf("migrate run again = exit %d, %q, %q; want it to resume", code, out, errOut)
	}
	if n := countRows(t, dsn, "SELECT count(*) FROM "+table+" WHERE id <= 1000"); n != 0 {
		t.Errorf("%d rows without a new key after the resumed run", n)
	}
}

// interruptedRun runs the migration opt until its first batch is done,
// then cancels it, and pauses it when pause is set.
func interruptedRun(t *testing.T, dsn string, opt migrate.Options, pause bool) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	opt.OnBatch = func(done, total int64) { cancel() }
	if _, err := migrate.Run(ctx, conn, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run canceled after a batch = %v; want context.Canceled", err)
	}
	if pause {
		if err := migrate.Set(context.Background(), conn, opt.Table, migrate.Setting{Pause: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitStatus runs migrate status until its output contains want (30 s at
// most), and returns that output.
func waitStatus(t *testing.T, base []string, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _, _ := run(append([]string{"migrate", "status"}, base...)...)
		if strings.Contains(out, want) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("migrate status = %q; want %q", out, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMigrateFlagNames: migrate's errors name its Options and Setting
// fields (*idgen.FieldError); the command prints its flags in their place,
// in the form of a flag that does not parse ("--batch VALUE: want ..."),
// exit 2.
func TestMigrateFlagNames(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	_, s := migrateSchema(t, "CREATE TABLE hits (id bigserial PRIMARY KEY)")
	base := []string{"--dsn", dsn, "--table", s + ".hits"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "run", "--to", "snowflake", "--batch", "-1"}, "idgen: migrate: bad input: --batch -1: want at least 1\n"},
		{[]string{"migrate", "run", "--to", "snowflake", "--chunk-time", "1us"}, "idgen: migrate: bad input: --chunk-time 1µs: want at least 1ms (or 0: fixed batches)\n"},
		{[]string{"migrate", "run", "--to", "snowflake", "--max-lag", "-1s"}, "idgen: migrate: bad input: --max-lag -1s: want a positive duration\n"},
		{[]string{"migrate", "run", "--to", "snowflake", "--max-active", "-1"}, "idgen: migrate: bad input: --max-active -1: want at least 0 (0: no limit)\n"},
		{[]string{"migrate", "plan", "--to", "nosuchscheme"}, `idgen: migrate: bad input: --to: strategies: invalid spec: unknown strategy "nosuchscheme"`},
		{[]string{"migrate", "plan", "--to", "uuidv7"}, `idgen: migrate: bad input: --to "uuidv7": uuidv7 values are 16 bytes (uuid); they do not fit the bigint key hits.id; for integer keys use snowflake` + "\n"},
		{[]string{"migrate", "plan", "--to", "snowflake", "--time-column", "id"}, `idgen: migrate: bad input: --time-column "id": hits.id is bigint; want timestamptz, timestamp or date` + "\n"},
		{[]string{"migrate", "plan"}, "idgen: migrate: bad input: --to: no target scheme given; want e.g. snowflake or uuidv7\n"},
		{[]string{"migrate", "resume", "--batch", "-1"}, "idgen: migrate: bad input: --batch -1: want at least 1\n"},
		{[]string{"migrate", "resume", "--chunk-time", "-1s"}, "idgen: migrate: bad input: --chunk-time -1s: want at least 1ms\n"},
	} {
		_, errOut, code := run(append(tc.args, base...)...)
		if code != 2 || !strings.HasPrefix(errOut, tc.want) || strings.Contains(errOut, "Options.") || strings.Contains(errOut, "Setting.") {
			t.Errorf("%v = exit %d, %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestMigrateAbortCommand aborts an interrupted migration: abort asks for
// --yes, status names it, a session holding the migration lock makes it
// fail with exit 1 naming that session, and abort --yes leaves the tables
// as they were.
func TestMigrateAbortCommand(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	conn, s := migrateSchema(t,
		"CREATE TABLE orders (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO orders (at) SELECT now() - i * interval '1 s' FROM generate_series(1, 1000) i",
		"CREATE TABLE items (id bigserial PRIMARY KEY, order_id bigint NOT NULL REFERENCES orders ON UPDATE CASCADE)",
		"CREATE INDEX items_order ON items (order_id)",
		"INSERT INTO items (order_id) SELECT id FROM orders")
	table := s + ".orders"
	base := []string{"--dsn", dsn, "--table", table}
	columns := func() string {
		var cols []string
		if err := conn.QueryRow(context.Background(), `SELECT array(SELECT c.relname || '.' || a.attname FROM pg_attribute a
			JOIN pg_class c ON c.oid = a.attrelid WHERE c.relnamespace = $1::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
			ORDER BY 1)`, s).Scan(&cols); err != nil {
			t.Fatal(err)
		}
		return strings.Join(cols, " ")
	}
	before := columns()
	interruptedRun(t, dsn, migrate.Options{Table: table, To: "snowflake", Batch: 100}, false)
	out, errOut, code := run(append([]string{"migrate", "status"}, base...)...)
	if code != 0 || !strings.Contains(out, "phase    backfill, no run going on (idgen migrate run resumes it; idgen migrate abort --yes undoes it)") {
		t.Errorf("migrate status of an interrupted run = exit %d, %q, %q; want it to name abort", code, out, errOut)
	}
	out, errOut, code = run(append([]string{"migrate", "abort"}, base...)...)
	if code != 2 || !strings.Contains(errOut, "give --yes") {
		t.Errorf("migrate abort = exit %d, %q, %q; want exit 2 asking for --yes", code, out, errOut)
	}
	holder, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.Background())
	var pid int
	if err := holder.QueryRow(context.Background(), "SELECT pg_backend_pid() FROM (SELECT pg_advisory_lock(hashtext('idgen_migrate'), hashtext($1))) l",
		s+".orders").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(append([]string{"migrate", "abort", "--yes"}, base...)...)
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("holds the migration lock of %q.%q (pid %d", s, "orders", pid)) ||
		!strings.Contains(errOut, fmt.Sprintf("pg_terminate_backend(%d)", pid)) {
		t.Errorf("migrate abort --yes while a session holds the lock = exit %d, %q, %q; want exit 1 naming pid %d", code, out, errOut, pid)
	}
	if _, err := holder.Exec(context.Background(), "SELECT pg_advisory_unlock_all()"); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(append([]string{"migrate", "abort", "--yes"}, base...)...)
	if code != 0 || !strings.Contains(out, "aborted the migration of "+table) {
		t.Fatalf("migrate abort --yes = exit %d, %q, %q", code, out, errOut)
	}
	if got := columns(); got != before {
		t.Errorf("columns after abort:\n%s\nwant as before:\n%s", got, before)
	}
	out, errOut, code = run(append([]string{"migrate", "status"}, base...)...)
	if code != 2 || !strings.Contains(errOut, "has no migration recorded") {
		t.Errorf("migrate status after abort = exit %d, %q, %q; want exit 2, no migration", code, out, errOut)
	}
}

// TestMigratePlanRefused: plan of a shape migrate cannot move prints the
// plan with what it refuses and the workaround, and exits 2; run refuses
// it the same way and changes nothing.
func TestMigratePlanRefused(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	_, s := migrateSchema(t,
		"CREATE TABLE users (id bigserial PRIMARY KEY)",
		"CREATE TABLE profile (user_id bigint PRIMARY KEY REFERENCES users, bio text)")
	args := []string{"--dsn", dsn, "--table", s + ".profile", "--to", "snowflake"}
	out, errOut, code := run(append([]string{"migrate", "plan"}, args...)...)
	if code != 2 || !strings.Contains(out, "REFUSED      key is a foreign key profile.user_id") ||
		!strings.Contains(out, "workaround: migrate "+s+".users instead") || !strings.Contains(errOut, "1 shape(s) refused, listed above") {
		t.Fatalf("migrate plan of a 1:1 table = exit %d, %q, %q; want exit 2 and the refusal naming users", code, out, errOut)
	}
	out, errOut, code = run(append([]string{"migrate", "run"}, args...)...)
	if code != 2 || !strings.Contains(errOut, "key is a foreign key profile.user_id") {
		t.Fatalf("migrate run of a 1:1 table = exit %d, %q, %q; want exit 2 and the refusal", code, out, errOut)
	}
	if n := countRows(t, dsn, "SELECT count(*) FROM pg_attribute WHERE attrelid = '"+s+".profile'::regclass AND attname LIKE '%idgen%'"); n != 0 {
		t.Errorf("a refused run added %d columns", n)
	}
}

// TestMigrateProgressPercent: a progress line (stderr not a terminal)
// says where the count is: 5000 of 20000 rows is 25%, not the tenth it
// crossed (the lines compare prints come from the same code).
func TestMigrateProgressPercent(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	_, s := migrateSchema(t, "CREATE TABLE hits (id bigserial PRIMARY KEY)", "INSERT INTO hits SELECT FROM generate_series(1, 20000)")
	out, errOut, code := run("migrate", "run", "--dsn", dsn, "--table", s+".hits", "--to", "snowflake", "--batch", "5000")
	if code != 0 {
		t.Fatalf("migrate run = exit %d, %q, %q", code, out, errOut)
	}
	for _, want := range []string{"backfill hits:  25% 5000 rows, ", "backfill hits:  50% 10000 rows, ", "backfill hits:  75% 15000 rows, ",
		"backfill hits: done, 20000 rows in "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("migrate run stderr = %q; want %q", errOut, want)
		}
	}
}
