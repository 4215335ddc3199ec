package idgen_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"testing"

	"github.com/idgenkit/idgen"
)

type uuidKind struct{}

func (uuidKind) Scheme() *idgen.Scheme { return uuidScheme }

var _ flag.Value = (*idgen.TypedID[idgen.Int64])(nil)

// TestTypedIDZeroValue checks that a zero TypedID is the scheme's zero ID,
// encodes as its text and decodes back to itself, and that == is "the same
// ID".
func TestTypedIDZeroValue(t *testing.T) {
	var z idgen.TypedID[uuidKind]
	if !z.IsZero() || z.ID() != uuidScheme.Zero() || z.Scheme() != uuidScheme {
		t.Fatalf("zero TypedID = %v of %v; want %v's zero ID", z, z.Scheme(), uuidScheme)
	}
	js, err := json.Marshal(z)
	if err != nil || string(js) != `"00000000-0000-0000-0000-000000000000"` {
		t.Fatalf("Marshal(zero) = %s, %v", js, err)
	}
	var back idgen.TypedID[uuidKind]
	if err := json.Unmarshal(js, &back); err != nil || back != z {
		t.Fatalf("Unmarshal(%s) = %v, %v; want zero", js, back, err)
	}
	u := uuidScheme.MustParse("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f")
	typed, ok := idgen.Typed[uuidKind](u)
	if !ok || typed.ID() != u || typed.String() != u.String() {
		t.Fatalf("Typed(%v) = %v, %v", u, typed, ok)
	}
	if _, ok := idgen.Typed[idgen.Int64](u); ok {
		t.Fatalf("Typed[Int64](a uuid ID) ok = true; want false")
	}
	if err := json.Unmarshal([]byte(`"zz"`), &typed); !errors.Is(err, idgen.ErrSyntax) || typed.ID() != u {
		t.Fatalf("Unmarshal(bad) = %v, %v; want ErrSyntax and the ID unchanged", typed, err)
	}
	if err := json.Unmarshal([]byte(`null`), &typed); err != nil || typed.ID() != u {
		t.Fatalf("Unmarshal(null) = %v, %v; want the ID unchanged", typed, err)
	}
	if err := typed.Scan(nil); !errors.Is(err, idgen.ErrNull) {
		t.Fatalf("Scan(nil) = %v; want ErrNull", err)
	}
	// A nullable column: sql.Null of a TypedID, zero values throughout.
	var n sql.Null[idgen.TypedID[uuidKind]]
	if err := n.Scan(u.String()); err != nil || !n.Valid || n.V.ID() != u {
		t.Fatalf("sql.Null Scan(%q) = %+v, %v; want %v", u.String(), n, err, u)
	}
	if err := n.Scan(nil); err != nil || n.Valid {
		t.Fatalf("sql.Null Scan(nil) = %+v, %v; want not Valid", n, err)
	}
}

// TestTypedIDFlag checks that a zero *TypedID is a ready flag.Value.
func TestTypedIDFlag(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var after idgen.TypedID[idgen.Int64]
	fs.Var(&after, "after", "an `ID`")
	if err := fs.Parse([]string{"-after", "178294819283726336"}); err != nil {
		t.Fatalf("Parse = %v", err)
	}
	if v, _ := after.Uint64(); v != 178294819283726336 || after.ID() != idgen.Int64Scheme().FromUint64(v) {
		t.Fatalf("-after = %v; want 178294819283726336 of int64", after)
	}
}

// TestJSONNumberAbove2To53 checks the JavaScript rule: a bare JSON number
// above 2^53 is refused, saying why; 2^53 and below, and any string, decode.
func TestJSONNumberAbove2To53(t *testing.T) {
	var id idgen.TypedID[idgen.Int64]
	err := json.Unmarshal([]byte(`9007199254740993`), &id)
	const want = `idgen: value out of range: JSON number 9007199254740993 is above 2^53 (9007199254740992), the largest integer a JavaScript number holds exactly: it may have been rounded from another ID; send 64-bit IDs as JSON strings ("9007199254740993")`
	if !errors.Is(err, idgen.ErrOutOfRange) || !errors.Is(err, idgen.ErrInvalid) || err.Error() != want || !id.IsZero() {
		t.Fatalf("Unmarshal(9007199254740993) = %v, %v; want %s", id, err, want)
	}
	for in, v := range map[string]uint64{`9007199254740992`: 1 << 53, `"9007199254740993"`: 1<<53 + 1, `"18446744073709551615"`: 1<<64 - 1, `0`: 0} {
		var got idgen.TypedID[idgen.Int64]
		if err := json.Unmarshal([]byte(in), &got); err != nil || got.ID() != idgen.Int64Scheme().FromUint64(v) {
			t.Fatalf("Unmarshal(%s) = %v, %v; want %d", in, got, err, v)
		}
	}
}
