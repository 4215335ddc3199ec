package cli_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/internal/testenv"
)

func TestMigrateCommand(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	s := fmt.Sprintf("idgen_cli_migrate_%d", time.Now().UnixNano()%1e9)
	t.Cleanup(func() { conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+s+" CASCADE") })
	for _, q := range []string{
		"CREATE SCHEMA " + s,
		"CREATE TABLE " + s + ".orders (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO " + s + ".orders (created_at) SELECT now() - i * interval '1 min' FROM generate_series(1, 500) i",
		"CREATE TABLE " + s + ".items (id bigserial PRIMARY KEY, order_id bigint NOT NULL REFERENCES " + s + ".orders (id))",
		"INSERT INTO " + s + ".items (order_id) SELECT id FROM " + s + ".orders",
		"CREATE TABLE " + s + ".nokey (id bigint)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
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
