package idgen_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/strategies"
)

// nullTestUUID is the ID of the NullID tests; strategies' SQL tests run the
// NULL round trip through PostgreSQL (idgentest.SQLNullRoundTrip).
var nullTestUUID = strategies.UUIDv7Scheme().MustParse("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f")

func TestNullIDScanValue(t *testing.T) {
	u := nullTestUUID
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
	id := idgen.Int64Scheme().FromUint64(42)
	if err := id.Scan(nil); !errors.Is(err, idgen.ErrNull) || id != idgen.Int64Scheme().FromUint64(42) {
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
	u := nullTestUUID
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
