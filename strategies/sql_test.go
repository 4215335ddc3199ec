package strategies_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/strategies"
)

// pgxDB adapts a pgx connection to idgentest.DB.
type pgxDB struct{ c *pgx.Conn }

func (p pgxDB) Exec(ctx context.Context, q string, args ...any) error {
	_, err := p.c.Exec(ctx, q, args...)
	return err
}

func (p pgxDB) QueryRow(ctx context.Context, q string, args []any, dest ...any) error {
	return p.c.QueryRow(ctx, q, args...).Scan(dest...)
}

// sqlSpecs are the strategies checked against PostgreSQL.
var sqlSpecs = []string{
	"uuidv4", "uuidv7", "ulid", "ksuid", "xid", "flake128", "sonyflake?machine=9", "snowflake?worker=9",
}

// sqlIDs returns IDs of spec for the round trip: fresh ones, and for a
// time-ordered scheme backfilled ones from NewAt across years.
func sqlIDs(t *testing.T, spec string) []idgen.ID {
	t.Helper()
	g, err := strategies.NewText(context.Background(), spec)
	if err != nil {
		t.Fatalf("New(%q) = %v", spec, err)
	}
	ids := make([]idgen.ID, 20)
	if _, err := idgen.NextN(context.Background(), g, ids); err != nil {
		t.Fatalf("NextN(%q) = %v", spec, err)
	}
	if at, ok := g.(idgen.AtGenerator); ok {
		for _, ts := range []string{"2026-01-01T00:00:00Z", "2026-06-30T12:00:00.123Z", "2026-06-30T12:00:00.123Z"} {
			tm, _ := time.Parse(time.RFC3339, ts)
			id, err := at.NewAt(tm)
			if err != nil {
				t.Fatalf("%s NewAt(%s) = %v", spec, ts, err)
			}
			ids = append(ids, id)
		}
	}
	return ids
}

func TestSQLRoundTripPgx(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("pgx.Connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	for _, spec := range sqlSpecs {
		t.Run(spec, func(t *testing.T) {
			ids := sqlIDs(t, spec)
			idgentest.SQLRoundTrip(t, pgxDB{conn}, ids)
			idgentest.SQLNullRoundTrip(t, pgxDB{conn}, ids[0])
		})
	}
}

func TestSQLRoundTripDatabaseSQL(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	for _, spec := range sqlSpecs {
		t.Run(spec, func(t *testing.T) {
			ids := sqlIDs(t, spec)
			idgentest.SQLRoundTrip(t, idgentest.StdDB(db), ids)
			idgentest.SQLNullRoundTrip(t, idgentest.StdDB(db), ids[0])
		})
	}
}

// TestPostgresGenerated reads values PostgreSQL itself generates.
func TestPostgresGenerated(t *testing.T) {
	db, err := sql.Open("pgx", testenv.PostgresDSN(t))
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()

	id := strategies.UUIDv4Scheme().Zero()
	var text string
	if err := db.QueryRowContext(ctx, "SELECT u, u::text FROM (SELECT gen_random_uuid() AS u) x").Scan(&id, &text); err != nil {
		t.Fatalf("SELECT gen_random_uuid(): %v", err)
	}
	if id.String() != text {
		t.Fatalf("gen_random_uuid() scanned = %s; want %s", id, text)
	}
	if v, _ := field(id, "ver"); v != 4 {
		t.Fatalf("gen_random_uuid() %s: ver = %d; want 4", id, v)
	}
	if got, err := strategies.Parse(text); err != nil || got != id {
		t.Fatalf("Parse(%q) = %v, %v; want uuidv4 %v", text, got, err, id)
	}

	// A ULID read from a uuid column is the same 128 bits.
	u := strategies.ULIDScheme().MustParse("01ARZ3NDEKTSV4RRFFQ69G5FAV")
	asUUID, _ := strategies.ULIDToUUID(u)
	back := strategies.ULIDScheme().Zero()
	if err := db.QueryRowContext(ctx, "SELECT $1::text::uuid", asUUID.String()).Scan(&back); err != nil || back != u {
		t.Fatalf("SELECT %q::uuid into a ULID = %v, %v; want %v", asUUID, back, err, u)
	}
}
