package idgentest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/idgenkit/idgen"
)

// A DB is the little of a PostgreSQL connection that SQLRoundTrip needs.
// Wrap a *sql.DB with StdDB; a pgx connection or pool needs a three-line
// adapter (see StdDB's source), which keeps pgx out of this package.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) error
	// QueryRow runs a query that returns one row and scans it into dest.
	QueryRow(ctx context.Context, sql string, args []any, dest ...any) error
}

// StdDB adapts a database/sql handle (any driver, such as pgx's stdlib).
func StdDB(db *sql.DB) DB { return stdDB{db} }

type stdDB struct{ db *sql.DB }

func (s stdDB) Exec(ctx context.Context, q string, args ...any) error {
	_, err := s.db.ExecContext(ctx, q, args...)
	return err
}

func (s stdDB) QueryRow(ctx context.Context, q string, args []any, dest ...any) error {
	return s.db.QueryRowContext(ctx, q, args...).Scan(dest...)
}

// SQLRoundTrip checks ids, all of one scheme, through a PostgreSQL table
// whose key column has the scheme's native type (Scheme.Column), in both
// directions:
//
//   - Go to PostgreSQL and back: each ID is inserted as a query argument
//     (driver.Valuer), read back into Scheme.Zero() (sql.Scanner), and must
//     be equal; ORDER BY the column must give the IDs in Compare order.
//   - PostgreSQL to Go: PostgreSQL casts the column type's own text of the
//     ID (decimal for bigint, 8-4-4-4-12 hex for uuid, hex for bytea) and
//     the value read back must equal the ID; the column's ::text must be
//     that same text.
//
// The table has a name of its own (idgentest_<scheme>_<random>) and is
// dropped when the test ends, so concurrent tests do not meet.
func SQLRoundTrip(t testing.TB, db DB, ids []idgen.ID) {
	t.Helper()
	if len(ids) == 0 {
		t.Fatal("SQLRoundTrip: no IDs")
	}
	ctx := context.Background()
	s := ids[0].Scheme()
	var r [6]byte
	rand.Read(r[:])
	table := fmt.Sprintf("idgentest_%s_%x", s.Name, r)
	if err := db.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (id %s PRIMARY KEY)", table, s.Column)); err != nil {
		t.Fatalf("CREATE TABLE %s (id %s): %v", table, s.Column, err)
	}
	t.Cleanup(func() { db.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })

	for _, id := range ids {
		if id.Scheme() != s {
			t.Fatalf("SQLRoundTrip: ID %s of scheme %s among %s IDs", id, id.Scheme(), s)
		}
		if err := db.Exec(ctx, "INSERT INTO "+table+" (id) VALUES ($1)", id); err != nil {
			t.Fatalf("INSERT %s ID %s: %v", s, id, err)
		}
		back := s.Zero()
		if err := db.QueryRow(ctx, "SELECT id FROM "+table+" WHERE id = $1", []any{id}, &back); err != nil || back != id {
			t.Fatalf("SELECT id WHERE id = %s: got %s, %v; want %s", id, back, err, id)
		}
		text := ColumnText(id)
		fromText := s.Zero()
		var pgText string
		q := fmt.Sprintf("SELECT %s, id::text FROM %s WHERE id = %s", cast(s.Column), table, cast(s.Column))
		if err := db.QueryRow(ctx, q, []any{text}, &fromText, &pgText); err != nil || fromText != id {
			t.Fatalf("SELECT %s with %q: got %s, %v; want %s", cast(s.Column), text, fromText, err, id)
		}
		if want := pgColumnText(s.Column, text); pgText != want {
			t.Fatalf("SELECT id::text for %s = %q; want %q", id, pgText, want)
		}
	}

	want := slices.Clone(ids)
	slices.SortFunc(want, idgen.ID.Compare)
	want = slices.Compact(want)
	got := make([]idgen.ID, 0, len(want))
	for i := range want {
		back := s.Zero()
		q := fmt.Sprintf("SELECT id FROM %s ORDER BY id OFFSET %d LIMIT 1", table, i)
		if err := db.QueryRow(ctx, q, nil, &back); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		got = append(got, back)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ORDER BY id = %v; want Compare order %v", got, want)
	}
}

// ColumnText returns the text PostgreSQL reads into id's column type:
// decimal for bigint, 8-4-4-4-12 hex for uuid, plain hex for bytea (to
// pass to decode(..., 'hex')), the canonical text otherwise.
func ColumnText(id idgen.ID) string {
	b := id.Bytes()
	switch id.Scheme().Column {
	case idgen.ColumnBigint:
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(b)), 10)
	case idgen.ColumnUUID:
		return string(idgen.AppendUUIDText(nil, b))
	case idgen.ColumnBytea:
		return hex.EncodeToString(b)
	}
	return id.String()
}

// cast returns the SQL expression turning text parameter $1 into column.
func cast(column string) string {
	if column == idgen.ColumnBytea {
		return "decode($1::text, 'hex')"
	}
	return "$1::text::" + column
}

// pgColumnText is what PostgreSQL's ::text gives for a value of column
// whose ColumnText is text.
func pgColumnText(column, text string) string {
	if column == idgen.ColumnBytea {
		return `\x` + text
	}
	return text
}

// SQLNullRoundTrip checks NULL and id through a nullable PostgreSQL column
// of id's scheme's native type (Scheme.Column), read and written back:
//
//   - a NullID that is not Valid is written as NULL, reads back not Valid
//     (its ID keeping the scheme for the next row), and written back stays
//     NULL;
//   - a Valid NullID of id reads back Valid and equal to id, and written
//     back stays id;
//   - scanning the NULL into a plain ID fails with idgen.ErrNull and leaves
//     the ID as it was.
//
// The tables have names of their own and are dropped when the test ends.
func SQLNullRoundTrip(t testing.TB, db DB, id idgen.ID) {
	t.Helper()
	ctx := context.Background()
	s := id.Scheme()
	var r [6]byte
	rand.Read(r[:])
	table := fmt.Sprintf("idgentest_null_%s_%x", s.Name, r)
	for _, tb := range []string{table, table + "_copy"} {
		if err := db.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (k int PRIMARY KEY, v %s)", tb, s.Column)); err != nil {
			t.Fatalf("CREATE TABLE %s (v %s): %v", tb, s.Column, err)
		}
		t.Cleanup(func() { db.Exec(context.Background(), "DROP TABLE IF EXISTS "+tb) })
	}
	rows := []idgen.NullID{{ID: s.Zero()}, {ID: id, Valid: true}}
	for k, n := range rows {
		if err := db.Exec(ctx, "INSERT INTO "+table+" (k, v) VALUES ($1, $2)", k, n); err != nil {
			t.Fatalf("INSERT %+v: %v", n, err)
		}
	}
	// Read each row into one NullID, as a rows loop does, and write it back.
	back := idgen.NullID{ID: s.Zero()}
	for k, want := range rows {
		var isNull bool
		if err := db.QueryRow(ctx, "SELECT v, v IS NULL FROM "+table+" WHERE k = $1", []any{k}, &back, &isNull); err != nil {
			t.Fatalf("SELECT v of row %d: %v", k, err)
		}
		if back != want || isNull != !want.Valid {
			t.Fatalf("SELECT v of row %d = %+v (IS NULL %v); want %+v", k, back, isNull, want)
		}
		if err := db.Exec(ctx, "INSERT INTO "+table+"_copy (k, v) VALUES ($1, $2)", k, back); err != nil {
			t.Fatalf("INSERT back %+v: %v", back, err)
		}
	}
	for k, want := range rows {
		var isNull bool
		copied := idgen.NullID{ID: s.Zero()}
		if err := db.QueryRow(ctx, "SELECT v, v IS NULL FROM "+table+"_copy WHERE k = $1", []any{k}, &copied, &isNull); err != nil {
			t.Fatalf("SELECT v of copied row %d: %v", k, err)
		}
		if copied != want || isNull != !want.Valid {
			t.Fatalf("written back, row %d = %+v (IS NULL %v); want %+v", k, copied, isNull, want)
		}
	}
	plain := id
	err := db.QueryRow(ctx, "SELECT v FROM "+table+" WHERE k = 0", nil, &plain)
	if !errors.Is(err, idgen.ErrNull) || plain != id {
		t.Fatalf("SELECT NULL into an ID = %v, error %v; want %v unchanged and ErrNull", plain, err, id)
	}
}
