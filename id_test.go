package idgen_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/idgenkit/idgen"
)

// rawCodec is a test codec: the bytes as lowercase hex, or UUID text for 16.
type rawCodec struct{ size int }

func (c rawCodec) AppendText(dst, b []byte) []byte {
	if c.size == 16 {
		return idgen.AppendUUIDText(dst, b)
	}
	return fmt.Appendf(dst, "%x", b)
}

func (c rawCodec) ParseText(b, text []byte) error {
	if c.size == 16 {
		return idgen.ParseUUIDText(b, text)
	}
	if len(text) != 2*c.size {
		return fmt.Errorf("%w: %q", idgen.ErrSyntax, text)
	}
	_, err := fmt.Sscanf(string(text), "%x", &b)
	return err
}
func (rawCodec) Time([]byte) time.Time { return time.Time{} }
func (rawCodec) Decompose(b []byte) []idgen.Field {
	return []idgen.Field{{Name: "first", Value: uint64(b[0]), Bits: 8}}
}

var (
	uuidScheme  = &idgen.Scheme{Name: "test-uuid", Size: 16, Column: idgen.ColumnUUID, Codec: rawCodec{16}}
	byteaScheme = &idgen.Scheme{Name: "test-bytea", Size: 20, Column: idgen.ColumnBytea, Codec: rawCodec{20}}
)

func TestInt64Scheme(t *testing.T) {
	id := idgen.Int64Scheme().FromUint64(178294819283726336)
	if got := id.String(); got != "178294819283726336" {
		t.Fatalf("String() = %q", got)
	}
	if v, ok := id.Int64(); !ok || v != 178294819283726336 {
		t.Fatalf("Int64() = %d, %v", v, ok)
	}
	if b := id.Bytes(); !bytes.Equal(b, []byte{0x02, 0x79, 0x6e, 0x31, 0x88, 0xb2, 0xf0, 0x00}) {
		t.Fatalf("Bytes() = %x; want 02796e3188b2f000", b)
	}
	big := idgen.Int64Scheme().FromUint64(math.MaxUint64)
	if _, ok := big.Int64(); ok {
		t.Errorf("Int64() of 2^64-1 ok = true; want false")
	}
	if _, err := big.Value(); !errors.Is(err, idgen.ErrOutOfRange) {
		t.Errorf("Value() of 2^64-1 error = %v; want ErrOutOfRange", err)
	}
	if _, ok := (idgen.ID{}).Int64(); ok {
		t.Errorf("zero ID Int64 ok = true")
	}
}

func TestJSON(t *testing.T) {
	type row struct {
		ID idgen.ID `json:"id"`
	}
	id := idgen.Int64Scheme().FromUint64(1 << 60)
	js, err := json.Marshal(row{id})
	if err != nil || string(js) != `{"id":"1152921504606846976"}` {
		t.Fatalf("Marshal = %s, %v; want the ID as a string", js, err)
	}
	tests := []struct {
		name, in string
		zero     idgen.ID // the ID decoded into: its scheme, or none
		want     idgen.ID
		err      error
	}{
		{"string", `{"id":"1152921504606846976"}`, idgen.Int64Scheme().Zero(), id, nil},
		{"number", `{"id":123456789}`, idgen.Int64Scheme().Zero(), idgen.Int64Scheme().FromUint64(123456789), nil},
		{"number 2^53", `{"id":9007199254740992}`, idgen.Int64Scheme().Zero(), idgen.Int64Scheme().FromUint64(1 << 53), nil},
		{"number above 2^53", `{"id":9007199254740993}`, idgen.Int64Scheme().Zero(), idgen.Int64Scheme().Zero(), idgen.ErrOutOfRange},
		{"string above 2^53", `{"id":"9007199254740993"}`, idgen.Int64Scheme().Zero(), idgen.Int64Scheme().FromUint64(1<<53 + 1), nil},
		{"null", `{"id":null}`, idgen.ID{}, idgen.ID{}, nil},
		{"negative", `{"id":-5}`, idgen.Int64Scheme().Zero(), idgen.Int64Scheme().Zero(), idgen.ErrSyntax},
		{"float", `{"id":1.5}`, idgen.Int64Scheme().Zero(), idgen.Int64Scheme().Zero(), idgen.ErrSyntax},
		{"not a number", `{"id":"abc"}`, idgen.Int64Scheme().Zero(), idgen.Int64Scheme().Zero(), idgen.ErrSyntax},
		{"no scheme: string", `{"id":"1152921504606846976"}`, idgen.ID{}, idgen.ID{}, idgen.ErrNoScheme},
		{"no scheme: number", `{"id":5}`, idgen.ID{}, idgen.ID{}, idgen.ErrNoScheme},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := row{tt.zero}
			err := json.Unmarshal([]byte(tt.in), &r)
			if !errors.Is(err, tt.err) || r.ID != tt.want {
				t.Fatalf("Unmarshal(%s) = %v, %v; want %v, %v", tt.in, r.ID, err, tt.want, tt.err)
			}
		})
	}
	u := uuidScheme.MustParse("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f")
	r := row{uuidScheme.Zero()}
	if err := json.Unmarshal([]byte(`{"id":12}`), &r); !errors.Is(err, idgen.ErrSyntax) {
		t.Errorf("a 16-byte ID from a JSON number: error %v; want ErrSyntax", err)
	}
	js, _ = json.Marshal(u)
	back := uuidScheme.Zero()
	if err := json.Unmarshal(js, &back); err != nil || back != u {
		t.Errorf("UUID JSON round trip = %v, %v; want %v", back, err, u)
	}
}

// TestJSONEscapes decodes IDs whose JSON strings use escapes: JSON
// strings are decoded before the ID's text is read, and errors quote the
// decoded text.
func TestJSONEscapes(t *testing.T) {
	u := uuidScheme.MustParse("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f")
	tests := []struct {
		name, in string
		zero     idgen.ID // the ID decoded into: its scheme, or none
		want     idgen.ID
		err      error
		errText  string // in the error, when err is set
	}{
		{name: `"\u0039\u0030" is "90"`, in: `"\u0039\u0030"`, zero: idgen.Int64Scheme().Zero(), want: idgen.Int64Scheme().FromUint64(90)},
		{name: "one escaped digit", in: `"115292150460684697\u0036"`, zero: idgen.Int64Scheme().Zero(), want: idgen.Int64Scheme().FromUint64(1 << 60)},
		{name: "escaped dashes in a UUID", in: `"0190f1d2\u002d7a3b\u002D7c4d-8e5f-6a7b8c9d0e1f"`, zero: uuidScheme.Zero(), want: u},
		{name: "escaped solidus refused as text", in: `"12\/3"`, err: idgen.ErrNoScheme, errText: `"12/3"`},
		{name: "decoded text in the error", in: `"\u0039x"`, err: idgen.ErrNoScheme, errText: `"9x"`},
		{name: "invalid escape", in: `"9\q"`, err: idgen.ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.zero
			err := got.UnmarshalJSON([]byte(tt.in))
			if !errors.Is(err, tt.err) || (tt.err == nil && got != tt.want) || (err != nil && !strings.Contains(err.Error(), tt.errText)) {
				t.Fatalf("UnmarshalJSON(%s) = %v, %v; want %v, %v (%s)", tt.in, got, err, tt.want, tt.err, tt.errText)
			}
			if tt.err != nil {
				return
			}
			n := idgen.NullID{ID: tt.zero}
			if err := json.Unmarshal([]byte(tt.in), &n); err != nil || !n.Valid || n.ID != tt.want {
				t.Fatalf("NullID Unmarshal(%s) = %v, %v; want %v", tt.in, n, err, tt.want)
			}
		})
	}
}

func TestSQLValueScan(t *testing.T) {
	u := uuidScheme.MustParse("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f")
	if v, err := u.Value(); err != nil || v != "0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f" {
		t.Fatalf("uuid Value() = %v, %v", v, err)
	}
	raw := u.Bytes()
	for _, src := range []any{"0190F1D2-7A3B-7C4D-8E5F-6A7B8C9D0E1F", []byte("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f"), raw} {
		got := uuidScheme.Zero()
		if err := got.Scan(src); err != nil || got != u {
			t.Errorf("Scan(%v) = %v, %v; want %v", src, got, err, u)
		}
	}
	k := make([]byte, 20)
	k[0], k[19] = 0xab, 0xcd
	kid, _ := byteaScheme.FromBytes(k)
	if v, err := kid.Value(); err != nil || !bytes.Equal(v.([]byte), k) {
		t.Fatalf("bytea Value() = %v, %v", v, err)
	}
	got := byteaScheme.Zero()
	if err := got.Scan(k); err != nil || got != kid {
		t.Fatalf("bytea Scan = %v, %v; want %v", got, err, kid)
	}
	var none idgen.ID
	if err := none.Scan(int64(42)); !errors.Is(err, idgen.ErrNoScheme) || !strings.Contains(err.Error(), "idgen.TypedID") || !strings.Contains(err.Error(), "Scheme.Zero()") || none != (idgen.ID{}) {
		t.Fatalf("Scan(int64) into a zero ID = %v, %v; want ErrNoScheme naming TypedID and Scheme.Zero(), the ID unchanged", none, err)
	}
	plain := idgen.Int64Scheme().Zero()
	if err := plain.Scan(int64(42)); err != nil || plain.Scheme() != idgen.Int64Scheme() || plain.String() != "42" {
		t.Fatalf("Scan(int64) into Int64Scheme.Zero() = %v (%v), %v; want 42 of int64", plain, plain.Scheme(), err)
	}
	if err := plain.Scan(nil); !errors.Is(err, idgen.ErrNull) || plain.Scheme() != idgen.Int64Scheme() || plain.String() != "42" {
		t.Fatalf("Scan(nil) = %v, %v; want 42 unchanged and ErrNull", plain, err)
	}
	if err := none.Scan("abc"); !errors.Is(err, idgen.ErrNoScheme) {
		t.Fatalf("Scan(string) into a zero ID error = %v; want ErrNoScheme", err)
	}
	if err := got.Scan(int64(1)); !errors.Is(err, idgen.ErrSyntax) {
		t.Fatalf("Scan(int64) into a 20-byte ID error = %v; want ErrSyntax", err)
	}
	if err := got.Scan(3.5); err == nil {
		t.Fatalf("Scan(float64) error = nil")
	}
	if v, err := (idgen.ID{}).Value(); v != nil || err != nil {
		t.Fatalf("zero ID Value() = %v, %v; want NULL", v, err)
	}
}

func TestCompareAndEquality(t *testing.T) {
	a := idgen.Int64Scheme().FromUint64(1)
	b := idgen.Int64Scheme().FromUint64(2)
	if a.Compare(b) != -1 || b.Compare(a) != 1 || a.Compare(a) != 0 {
		t.Fatalf("Compare wrong: %d %d %d", a.Compare(b), b.Compare(a), a.Compare(a))
	}
	lo := make([]byte, 16)
	hi := make([]byte, 16)
	lo[15], hi[0] = 0xff, 0x01
	x, _ := uuidScheme.FromBytes(lo)
	y, _ := uuidScheme.FromBytes(hi)
	if x.Compare(y) != -1 {
		t.Fatalf("Compare orders by bytes: %s vs %s = %d; want -1", x, y, x.Compare(y))
	}
	if a == b || a != idgen.Int64Scheme().FromUint64(1) {
		t.Fatalf("== does not follow the value")
	}
	other := &idgen.Scheme{Name: "other", Size: 8, Column: idgen.ColumnBigint, Codec: idgen.Uint64Codec{}}
	if other.FromUint64(1) == a {
		t.Fatalf("IDs of different schemes compare equal")
	}
	m := map[idgen.ID]int{a: 1, b: 2}
	if m[idgen.Int64Scheme().FromUint64(2)] != 2 {
		t.Fatalf("ID as a map key fails")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", idgen.ErrSyntax},
		{"-1", idgen.ErrSyntax},
		{"+1", idgen.ErrSyntax},
		{" 1", idgen.ErrSyntax},
		{"1e3", idgen.ErrSyntax},
		{"18446744073709551616", idgen.ErrOutOfRange},
	}
	for _, tt := range tests {
		if _, err := idgen.Int64Scheme().Parse(tt.in); !errors.Is(err, tt.want) {
			t.Errorf("Parse(%q) error = %v; want %v", tt.in, err, tt.want)
		}
	}
	if _, err := uuidScheme.Parse("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1"); !errors.Is(err, idgen.ErrSyntax) {
		t.Errorf("short UUID error = %v; want ErrSyntax", err)
	}
	if _, err := uuidScheme.Parse("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0exz"); !errors.Is(err, idgen.ErrSyntax) {
		t.Errorf("bad hex UUID error = %v; want ErrSyntax", err)
	}
}

func TestClockRollbackError(t *testing.T) {
	var err error = fmt.Errorf("wrapped: %w", &idgen.ClockRollbackError{Drift: 5 * time.Millisecond})
	var rb *idgen.ClockRollbackError
	if !errors.Is(err, idgen.ErrClockRollback) || !errors.As(err, &rb) || rb.Drift != 5*time.Millisecond {
		t.Fatalf("errors.Is/As on %v failed", err)
	}
	if !strings.Contains(err.Error(), "clock moved backwards by 5ms") {
		t.Fatalf("Error() = %q", err)
	}
}

// counter is a Generator without Batcher.
type counter struct{ n uint64 }

func (c *counter) Next(context.Context) (idgen.ID, error) {
	c.n++
	if c.n > 3 {
		return idgen.ID{}, idgen.ErrUnavailable
	}
	return idgen.Int64Scheme().FromUint64(c.n), nil
}
func (c *counter) Scheme() *idgen.Scheme { return idgen.Int64Scheme() }

func TestNextNFallsBackToNext(t *testing.T) {
	dst := make([]idgen.ID, 5)
	n, err := idgen.NextN(context.Background(), &counter{}, dst)
	if n != 3 || !errors.Is(err, idgen.ErrUnavailable) || dst[2].String() != "3" {
		t.Fatalf("NextN = %d, %v (%v); want 3, ErrUnavailable", n, err, dst)
	}
}

func TestFillUint64(t *testing.T) {
	dst := make([]idgen.ID, 4)
	dst[1] = uuidScheme.MustParse("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f") // overwritten whole
	idgen.Int64Scheme().FillUint64(dst, 100, 1<<12)
	for i, id := range dst {
		if id != idgen.Int64Scheme().FromUint64(100+uint64(i)<<12) {
			t.Fatalf("dst[%d] = %v (%v); want %d", i, id, id.Scheme(), 100+uint64(i)<<12)
		}
	}
}

func FuzzParseUint64(f *testing.F) {
	for _, s := range []string{"0", "1", "18446744073709551615", "18446744073709551616", "007", "-1", "", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := idgen.Int64Scheme().Parse(s)
		if err != nil {
			return
		}
		back, err := idgen.Int64Scheme().Parse(id.String())
		if err != nil || back != id {
			t.Fatalf("Parse(%q) = %v; Parse(String()) = %v, %v", s, id, back, err)
		}
		v, _ := id.Uint64()
		if b := id.Bytes(); binary.BigEndian.Uint64(b) != v {
			t.Fatalf("Bytes() %x disagrees with the value %d", b, v)
		}
	})
}

func FuzzParseUUIDText(f *testing.F) {
	f.Add("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f")
	f.Add("00000000-0000-0000-0000-000000000000")
	f.Add("0190F1D2-7A3B-7C4D-8E5F-6A7B8C9D0E1F")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := uuidScheme.Parse(s)
		if err != nil {
			return
		}
		if !strings.EqualFold(id.String(), s) {
			t.Fatalf("Parse(%q).String() = %q; want the same text", s, id.String())
		}
		if back := uuidScheme.MustParse(id.String()); back != id {
			t.Fatalf("round trip of %q = %v; want %v", s, back, id)
		}
	})
}

// FuzzUnmarshalJSON checks that a JSON string decodes to the ID its text
// does, however json.Marshal escaped it (<, >, & and controls become \u
// escapes).
func FuzzUnmarshalJSON(f *testing.F) {
	for _, s := range []string{"90", "1152921504606846976", "0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f", "12/3", "<1>", "9\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // json.Marshal would replace the invalid bytes
		}
		js, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON, fromText idgen.ID
		errJSON := fromJSON.UnmarshalJSON(js)
		errText := fromText.UnmarshalText([]byte(s))
		if (errJSON == nil) != (errText == nil) || fromJSON != fromText {
			t.Fatalf("UnmarshalJSON(%s) = %v, %v; UnmarshalText(%q) = %v, %v; want the same", js, fromJSON, errJSON, s, fromText, errText)
		}
	})
}
