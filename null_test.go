package idgen_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/strategies"
)

// pgxConn adapts a pgx connection to idgentest.DB.
type pgxConn struct{ c *pgx.Conn }

func (p pgxConn) Exec(ctx context.Context, q string, args ...any) error {
	_, err := p.c.Exec(ctx, q, args...)
	return err
}

func (p pgxConn) QueryRow(ctx context.Context, q string, args []any, dest ...any) error {
	return p.c.QueryRow(ctx, q, args...).Scan(dest...)
}

// nullIDs are the IDs checked beside NULL: a bigint and a uuid column.
var nullIDs = []idgen.ID{
	idgen.Int64Scheme.FromUint64(1541815603606036480),
	strategies.UUIDv7Scheme.MustParse("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f"),
}

func TestNullIDPgx(t *testing.T) {
	conn, err := pgx.Connect(context.Background(), testenv.PostgresDSN(t))
	if err != nil {
		t.Fatalf("pgx.Connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	for _, id := range nullIDs {
		t.Run(id.Scheme().Column, func(t *testing.T) { idgentest.SQLNullRoundTrip(t, pgxConn{conn}, id) })
	}
}

func TestNullIDDatabaseSQL(t *testing.T) {
	db, err := sql.Open("pgx", testenv.PostgresDSN(t))
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	for _, id := range nullIDs {
		t.Run(id.Scheme().Column, func(t *testing.T) { idgentest.SQLNullRoundTrip(t, idgentest.StdDB(db), id) })
	}
}

func TestNullIDScanValue(t *testing.T) {
	u := nullIDs[1]
	n := idgen.NullID{ID: u.Scheme().Zero()}
	if err := n.Scan(u.String()); err != nil || !n.Valid || n.ID != u {
		t.Fatalf("Scan(%q) = %+v, %v; want Valid %v", u.String(), n, err, u)
	}
	if v, err := n.Value(); err != nil || v != u.String() {
		t.Fatalf("Value() of %+v = %v, %v; want %q", n, v, err, u.String())
	}
	if err := n.Scan(nil); err != nil || n.Valid || n.ID != u.Scheme().Zero() {
		t.Fatalf("Scan(nil) = %+v, %v; want not Valid, ID %s's zero", n, err, u.Scheme().Name)
	}
	if v, err := n.Value(); err != nil || v != nil {
		t.Fatalf("Value() of NULL = %v, %v; want nil", v, err)
	}
	if err := n.Scan("zz"); !errors.Is(err, idgen.ErrSyntax) || n.Valid {
		t.Fatalf("Scan(%q) = %+v, %v; want not Valid, ErrSyntax", "zz", n, err)
	}
}

func TestIDScanNull(t *testing.T) {
	id := idgen.Int64Scheme.FromUint64(42)
	if err := id.Scan(nil); !errors.Is(err, idgen.ErrNull) || id != idgen.Int64Scheme.FromUint64(42) {
		t.Fatalf("Scan(nil) = %v, %v; want 42 unchanged and ErrNull", id, err)
	}
	if v, err := (idgen.ID{}).Value(); v != nil || err != nil {
		t.Fatalf("zero ID Value() = %v, %v; want NULL", v, err)
	}
}

func TestNullIDJSON(t *testing.T) {
	type row struct {
		Parent idgen.NullID `json:"parent"`
	}
	u := nullIDs[1]
	tests := []struct {
		name string
		in   row
		json string
	}{
		{"null", row{idgen.NullID{ID: u.Scheme().Zero()}}, `{"parent":null}`},
		{"value", row{idgen.NullID{ID: u, Valid: true}}, `{"parent":"` + u.String() + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := json.Marshal(tt.in)
			if err != nil || string(js) != tt.json {
				t.Fatalf("Marshal(%+v) = %s, %v; want %s", tt.in, js, err, tt.json)
			}
			back := row{idgen.NullID{ID: u, Valid: true}} // null must clear it
			if err := json.Unmarshal(js, &back); err != nil || back != tt.in {
				t.Fatalf("Unmarshal(%s) = %+v, %v; want %+v", js, back, err, tt.in)
			}
		})
	}
}
