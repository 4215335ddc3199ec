package strategies_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/strategies"
)

// TestBinaryUUIDMariaDB stores UUID-scheme IDs in BINARY(16), as MySQL and
// MariaDB applications do, and scans the 16 bytes back into zero TypedIDs
// and into Scheme.Zero(): each == the original. uuidv1 is stored a second
// time in UUID_TO_BIN(u, 1)'s swapped order (MySQL 8's function where the
// server has it, MariaDB's equivalent expression otherwise): the bytes equal
// strategies.SwapUUIDv1's, their times (the first 8 bytes) never go down
// in issue order, and BIN_TO_UUID(b, 1)'s
// text scans back to the original.
func TestBinaryUUIDMariaDB(t *testing.T) {
	ctx := context.Background()
	cfg, err := segment.MySQLConfig(testenv.MySQLDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	table := uniqueSuffix("binary_uuid")
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (n INT PRIMARY KEY, scheme VARCHAR(16) NOT NULL, id BINARY(16) NOT NULL)"); err != nil {
		t.Fatalf("CREATE TABLE = %v", err)
	}
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + table) })

	t.Run("uuidv7", func(t *testing.T) { binaryTrip[strategies.UUIDv7](t, db, table, "uuidv7", 1000) })
	t.Run("uuidv4", func(t *testing.T) { binaryTrip[strategies.UUIDv4](t, db, table, "uuidv4", 2000) })
	t.Run("ulid", func(t *testing.T) { binaryTrip[strategies.ULID](t, db, table, "ulid", 3000) })
	t.Run("uuidv1", func(t *testing.T) { binaryTrip[strategies.UUIDv1](t, db, table, "uuidv1", 4000) })
	t.Run("uuidv1 swapped", func(t *testing.T) { swappedTrip(t, db, table) })
}

// binaryIDs issues n IDs of spec.
func binaryIDs(t *testing.T, spec string, n int) []idgen.ID {
	t.Helper()
	g, err := strategies.NewText(context.Background(), spec)
	if err != nil {
		t.Fatalf("New(%q) = %v", spec, err)
	}
	ids := make([]idgen.ID, n)
	if _, err := idgen.NextN(context.Background(), g, ids); err != nil {
		t.Fatalf("NextN = %v", err)
	}
	return ids
}

// binaryTrip writes 50 IDs of spec as their 16 raw bytes (Bytes(), and
// UNHEX of the text for half of them) and scans them back.
func binaryTrip[K idgen.Kind](t *testing.T, db *sql.DB, table, spec string, base int) {
	ids := binaryIDs(t, spec, 50)
	for i, id := range ids {
		q, arg := "INSERT INTO "+table+" VALUES (?, ?, ?)", any(id.Bytes())
		if i%2 == 1 {
			v, _ := id.Value() // the 36-char UUID text (a ULID's too: its column is uuid)
			q = "INSERT INTO " + table + " VALUES (?, ?, UNHEX(REPLACE(?, '-', '')))"
			arg = v
		}
		if _, err := db.Exec(q, base+i, spec, arg); err != nil {
			t.Fatalf("INSERT %v = %v", id, err)
		}
	}
	rows, err := db.Query("SELECT id FROM "+table+" WHERE scheme = ? ORDER BY n", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for ; rows.Next(); i++ {
		var typed idgen.TypedID[K]
		untyped := ids[0].Scheme().Zero()
		if err := rows.Scan(&typed); err != nil || typed.ID() != ids[i] {
			t.Fatalf("Scan BINARY(16) row %d into a zero TypedID = %v, %v; want %v", i, typed, err, ids[i])
		}
		if err := rows.Scan(&untyped); err != nil || untyped != ids[i] {
			t.Fatalf("Scan BINARY(16) row %d into Scheme.Zero() = %v, %v; want %v", i, untyped, err, ids[i])
		}
	}
	if i != len(ids) {
		t.Fatalf("read %d rows; want %d", i, len(ids))
	}
}

// swappedTrip stores uuidv1s as UUID_TO_BIN(u, 1) does and reads them back.
func swappedTrip(t *testing.T, db *sql.DB, table string) {
	ids := binaryIDs(t, "uuidv1", 50)
	// UUID_TO_BIN(u, 1) on MySQL 8; on MariaDB, which lacks it, the same
	// bytes: time_high and version, time_mid, time_low, then the rest.
	toBin, fromBin := "UUID_TO_BIN(?, 1)", "BIN_TO_UUID(id, 1)"
	if _, err := db.Exec("DO UUID_TO_BIN(UUID(), 1)"); err != nil {
		toBin = "UNHEX(CONCAT(SUBSTR(REPLACE(?, '-', ''), 13, 4), SUBSTR(REPLACE(?, '-', ''), 9, 4), SUBSTR(REPLACE(?, '-', ''), 1, 8), SUBSTR(REPLACE(?, '-', ''), 17)))"
		fromBin = "LOWER(CONCAT_WS('-', HEX(SUBSTR(id, 5, 4)), HEX(SUBSTR(id, 3, 2)), HEX(SUBSTR(id, 1, 2)), HEX(SUBSTR(id, 9, 2)), HEX(SUBSTR(id, 11, 6))))"
	}
	for i, id := range ids {
		text := id.String()
		args := []any{9000 + i, "uuidv1-swapped", text}
		if toBin != "UUID_TO_BIN(?, 1)" {
			args = append(args, text, text, text)
		}
		if _, err := db.Exec("INSERT INTO "+table+" VALUES (?, ?, "+toBin+")", args...); err != nil {
			t.Fatalf("INSERT swapped %v = %v", id, err)
		}
	}
	rows, err := db.Query(fmt.Sprintf("SELECT id, %s FROM %s WHERE scheme = 'uuidv1-swapped' ORDER BY n", fromBin, table))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	var prev []byte
	for ; rows.Next(); i++ {
		var stored []byte
		var back idgen.TypedID[strategies.UUIDv1]
		if err := rows.Scan(&stored, &back); err != nil {
			t.Fatalf("Scan = %v", err)
		}
		want := ids[i].Bytes()
		strategies.SwapUUIDv1(want)
		if !bytes.Equal(stored, want) {
			t.Fatalf("row %d: stored %x; want SwapUUIDv1's %x", i, stored, want)
		}
		if back.ID() != ids[i] {
			t.Fatalf("row %d: BIN_TO_UUID(b, 1) scanned = %v; want %v", i, back, ids[i])
		}
		if prev != nil && bytes.Compare(prev[:8], stored[:8]) > 0 {
			t.Fatalf("row %d: swapped time %x below %x: not in time order", i, stored[:8], prev[:8])
		}
		prev = stored
	}
	if i != len(ids) {
		t.Fatalf("read %d rows; want %d", i, len(ids))
	}
}
