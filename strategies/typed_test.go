package strategies_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// Kinds of schemes that depend on a spec's keys: a program declares its
// own, as these do. typeIDKind's scheme is the prefix's (one per prefix);
// publicKind's is the generator's own, kept once it is built, since every
// public generator's scheme carries its keys.
type (
	typeIDKind struct{}
	publicKind struct{}
)

func (typeIDKind) Scheme() *idgen.Scheme { return strategies.TypeIDScheme("order") }

var publicScheme *idgen.Scheme // set by the public row before its IDs decode

func (publicKind) Scheme() *idgen.Scheme { return publicScheme }

// typedCase is one registry strategy: how to build its spec (with the
// store or key it needs) and the round trip through its typed form.
type typedCase struct {
	spec  func(t *testing.T) (string, strategies.Options)
	trip  func(t *testing.T, db *sql.DB, conn *pgx.Conn, ids []idgen.ID)
	after func(g idgen.Generator) // runs once the generator is built
}

func bare(spec string) func(*testing.T) (string, strategies.Options) {
	return func(*testing.T) (string, strategies.Options) { return spec, strategies.Options{} }
}

// TestTypedRoundTrip is issue 29's test: for every strategy in the
// registry, 100 IDs round-trip through JSON (struct fields, a slice, a map)
// and PostgreSQL (the scheme's column: bigint, uuid, bytea or text, through
// database/sql and pgx) into zero values of their TypedID, each == to the
// original; into the untyped idgen.ID, every element fails with
// idgen.ErrNoScheme, whose message names the TypedID and Scheme.Zero()
// forms: never an ID that differs silently. Each generator is an
// io.Closer, and after Close its Next and NextN return idgen.ErrClosed.
func TestTypedRoundTrip(t *testing.T) {
	t.Parallel() // tables, sequences and ticket names of its own
	ctx := context.Background()
	pg := testenv.PostgresDSN(t)
	db, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatalf("pgx.Connect = %v", err)
	}
	defer conn.Close(ctx)

	cases := map[string]typedCase{
		"snowflake": {spec: bare("snowflake?worker=3"), trip: trip[snowflake.Default]},
		"sonyflake": {spec: bare("sonyflake?machine=3"), trip: trip[strategies.Sonyflake]},
		"flake128":  {spec: bare("flake128?worker=3"), trip: trip[strategies.Flake128]},
		"uuidv1":    {spec: bare("uuidv1"), trip: trip[strategies.UUIDv1]},
		"uuidv4":    {spec: bare("uuidv4"), trip: trip[strategies.UUIDv4]},
		"uuidv6":    {spec: bare("uuidv6"), trip: trip[strategies.UUIDv6]},
		"uuidv7":    {spec: bare("uuidv7"), trip: trip[strategies.UUIDv7]},
		"ulid":      {spec: bare("ulid"), trip: trip[strategies.ULID]},
		"ksuid":     {spec: bare("ksuid"), trip: trip[strategies.KSUID]},
		"xid":       {spec: bare("xid"), trip: trip[strategies.XID]},
		"typeid":    {spec: bare("typeid?prefix=order"), trip: trip[typeIDKind]},
		"public": {spec: func(*testing.T) (string, strategies.Options) {
			return "public?inner=snowflake%3Fworker%3D3", strategies.Options{LookupKey: func(string) (string, bool) { return testPublicKey, true }}
		}, trip: trip[publicKind], after: func(g idgen.Generator) { publicScheme = g.Scheme() }},
		"segment": {spec: func(t *testing.T) (string, strategies.Options) {
			tag := uniqueSuffix("typed_rt")
			st, err := segment.Open(ctx, pg)
			if err != nil {
				t.Fatalf("segment.Open = %v", err)
			}
			defer st.Close()
			if _, _, err := st.Init(ctx, tag, 1000, ""); err != nil {
				t.Fatalf("Init(%q) = %v", tag, err)
			}
			return withDSN("segment", pg).With("tag", tag).String(), strategies.Options{}
		}, trip: trip[segment.Segment]},
		"ticket": {spec: func(t *testing.T) (string, strategies.Options) {
			name := uniqueSuffix("typed_rt_tickets")
			if _, err := segment.InitTickets(ctx, []string{pg}, name, false); err != nil {
				t.Fatalf("InitTickets = %v", err)
			}
			return withDSN("ticket", pg).With("name", name).String(), strategies.Options{}
		}, trip: trip[segment.Ticket]},
		"instagram": {spec: func(t *testing.T) (string, strategies.Options) {
			seq := uniqueSuffix("typed_rt_seq")
			if err := segment.InstallInstagram(ctx, pg, seq); err != nil {
				t.Fatalf("InstallInstagram = %v", err)
			}
			t.Cleanup(func() { db.Exec("DROP SEQUENCE IF EXISTS " + seq) })
			return withDSN("instagram?shard=5", pg).With("seq", seq).String(), strategies.Options{}
		}, trip: trip[segment.InstagramKind]},
	}
	for _, name := range strategies.Names() {
		t.Run(name, func(t *testing.T) {
			tc, ok := cases[name]
			if !ok {
				t.Fatalf("strategy %q has no row in TestTypedRoundTrip: give it a Kind and a row", name)
			}
			spec, opts := tc.spec(t)
			g, err := opts.NewText(ctx, spec)
			if err != nil {
				t.Fatalf("New(%q) = %v", spec, err)
			}
			c, ok := g.(io.Closer)
			if !ok {
				t.Fatalf("New(%q) = %T: not an io.Closer", spec, g)
			}
			defer c.Close()
			if tc.after != nil {
				tc.after(g)
			}
			ids := make([]idgen.ID, 100)
			if n, err := idgen.NextN(ctx, g, ids); err != nil {
				t.Fatalf("NextN(100) = %d, %v", n, err)
			}
			tc.trip(t, db, conn, ids)
			// The Close contract, for every strategy.
			if err := c.Close(); err != nil {
				t.Fatalf("Close() = %v", err)
			}
			if id, err := g.Next(ctx); !errors.Is(err, idgen.ErrClosed) {
				t.Fatalf("Next() after Close = %v, %v; want idgen.ErrClosed", id, err)
			}
			if n, err := idgen.NextN(ctx, g, ids[:5]); n != 0 || !errors.Is(err, idgen.ErrClosed) {
				t.Fatalf("NextN(5) after Close = %d, %v; want 0, idgen.ErrClosed", n, err)
			}
		})
	}
}

// trip round-trips ids, of K's scheme, into zero TypedID[K] values through
// JSON and PostgreSQL, and checks that the untyped idgen.ID refuses each.
func trip[K idgen.Kind](t *testing.T, db *sql.DB, conn *pgx.Conn, ids []idgen.ID) {
	t.Helper()
	want := make([]idgen.TypedID[K], len(ids))
	for i, id := range ids {
		var ok bool
		if want[i], ok = idgen.Typed[K](id); !ok || want[i].ID() != id {
			t.Fatalf("Typed(%v of %v) = %v, %v; want the same ID of K's scheme %v", id, id.Scheme(), want[i], ok, want[i].Scheme())
		}
	}
	check := func(how string, got []idgen.TypedID[K]) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d IDs back; want %d", how, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] || got[i].ID() != ids[i] {
				t.Fatalf("%s: ID %d = %v; want %v (==)", how, i, got[i], want[i])
			}
		}
	}

	// JSON: struct fields, a slice, a map, each into zero values.
	type row struct {
		ID     idgen.TypedID[K] `json:"id"`
		Parent idgen.TypedID[K] `json:"parent"`
	}
	rows := make([]row, len(want))
	for i := range want {
		rows[i] = row{ID: want[i], Parent: want[len(want)-1-i]}
	}
	var rowsBack []row
	jsonTrip(t, rows, &rowsBack)
	var fromRows []idgen.TypedID[K]
	for i, r := range rowsBack {
		if r.Parent != want[len(want)-1-i] {
			t.Fatalf("JSON struct: parent %d = %v; want %v", i, r.Parent, want[len(want)-1-i])
		}
		fromRows = append(fromRows, r.ID)
	}
	check("JSON struct fields", fromRows)
	var sliceBack []idgen.TypedID[K]
	jsonTrip(t, want, &sliceBack)
	check("JSON slice", sliceBack)
	m := map[string]idgen.TypedID[K]{}
	for i, w := range want {
		m[fmt.Sprint(i)] = w
	}
	var mapBack map[string]idgen.TypedID[K]
	jsonTrip(t, m, &mapBack)
	fromMap := make([]idgen.TypedID[K], len(want))
	for k, v := range mapBack {
		var i int
		fmt.Sscan(k, &i)
		fromMap[i] = v
	}
	check("JSON map", fromMap)

	// The untyped ID refuses every element, with the documented error.
	for i, id := range ids {
		js, _ := json.Marshal(id)
		var u idgen.ID
		noScheme(t, fmt.Sprintf("JSON element %d (%s) into idgen.ID", i, js), json.Unmarshal(js, &u), u)
		var us []idgen.ID
		err := json.Unmarshal([]byte("["+string(js)+"]"), &us)
		noScheme(t, "JSON slice element into []idgen.ID", err, idgen.ID{})
		var um map[string]idgen.ID
		err = json.Unmarshal([]byte(`{"k":`+string(js)+"}"), &um)
		noScheme(t, "JSON map value into map[string]idgen.ID", err, um["k"])
		var ur struct{ ID idgen.ID }
		err = json.Unmarshal([]byte(`{"ID":`+string(js)+"}"), &ur)
		noScheme(t, "JSON struct field idgen.ID", err, ur.ID)
	}

	// PostgreSQL, in the scheme's native column.
	ctx := context.Background()
	col := want[0].Scheme().Column
	table := uniqueSuffix("typed_rt")
	if _, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (n int PRIMARY KEY, id %s NOT NULL)", table, col)); err != nil {
		t.Fatalf("CREATE TABLE (%s) = %v", col, err)
	}
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + table) })
	for i, w := range want {
		if i%2 == 0 { // half through database/sql, half through pgx
			_, err := db.Exec(fmt.Sprintf("INSERT INTO %s VALUES ($1, $2)", table), i, w)
			if err != nil {
				t.Fatalf("database/sql INSERT %v = %v", w, err)
			}
		} else if _, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO %s VALUES ($1, $2)", table), i, w); err != nil {
			t.Fatalf("pgx INSERT %v = %v", w, err)
		}
	}
	q := fmt.Sprintf("SELECT id FROM %s ORDER BY n", table)
	sqlRows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	var viaSQL []idgen.TypedID[K]
	for sqlRows.Next() {
		var got idgen.TypedID[K]
		if err := sqlRows.Scan(&got); err != nil {
			t.Fatalf("database/sql Scan into a zero TypedID = %v", err)
		}
		viaSQL = append(viaSQL, got)
	}
	sqlRows.Close()
	check("PostgreSQL "+col+" via database/sql", viaSQL)
	viaPgx, err := pgx.CollectRows(must(conn.Query(ctx, q)), pgx.RowTo[idgen.TypedID[K]])
	if err != nil {
		t.Fatalf("pgx scan into zero TypedIDs = %v", err)
	}
	check("PostgreSQL "+col+" via pgx", viaPgx)
	// Untyped: every row fails, the ID unchanged.
	sqlRows, err = db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for sqlRows.Next() {
		var u idgen.ID
		noScheme(t, fmt.Sprintf("database/sql Scan of row %d into idgen.ID", n), sqlRows.Scan(&u), u)
		n++
	}
	sqlRows.Close()
	if n != len(want) {
		t.Fatalf("untyped scan saw %d rows; want %d", n, len(want))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func jsonTrip(t *testing.T, v, back any) {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("Marshal(%T) = %v", v, err)
	}
	if err := json.Unmarshal(js, back); err != nil {
		t.Fatalf("Unmarshal into %T = %v", back, err)
	}
}

// noScheme checks that err is the documented error of decoding into an
// untyped ID: ErrNoScheme, naming idgen.TypedID and Scheme.Zero(), with no
// ID decoded.
func noScheme(t *testing.T, how string, err error, got idgen.ID) {
	t.Helper()
	if !errors.Is(err, idgen.ErrNoScheme) || !strings.Contains(err.Error(), "idgen.TypedID") || !strings.Contains(err.Error(), "Scheme.Zero()") || got != (idgen.ID{}) {
		t.Fatalf("%s = %v, %v; want idgen.ErrNoScheme naming idgen.TypedID and Scheme.Zero(), no ID", how, got, err)
	}
}

func uniqueSuffix(prefix string) string { return fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano()) }

func withDSN(spec, dsn string) strategies.Spec { return strategies.MustParse(spec).With("dsn", dsn) }
