package strategies_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/strategies"
)

// TestParseDetect checks that Parse tells each scheme by its text form and
// decodes known vectors field by field.
func TestParseDetect(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		scheme string
		fields []idgen.Field
		time   time.Time
	}{
		{
			name: "uuidv7 RFC 9562 A.6", text: "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", scheme: "uuidv7",
			fields: []idgen.Field{fl("unix_ts_ms", 0x017F22E279B0, 48), fl("ver", 7, 4), fl("rand_a", 0xCC3, 12), fl("var", 2, 2), fl("rand_b", 0x18C4DC0C0C07398F, 62)},
			time:   time.UnixMilli(0x017F22E279B0).UTC(),
		},
		{
			name: "uuidv4 RFC 9562 A.3", text: "919108f7-52d1-4320-9bac-f847db4148a8", scheme: "uuidv4",
			fields: []idgen.Field{fl("random_a", 0x919108f752d1, 48), fl("ver", 4, 4), fl("random_b", 0x320, 12), fl("var", 2, 2), fl("random_c", 0x1bacf847db4148a8, 62)},
		},
		{
			name: "uuid v1", text: "c232ab00-9414-11ec-b3c8-9f6bdeced846", scheme: "uuid",
			fields: []idgen.Field{fl("bits_a", 0xc232ab009414, 48), fl("ver", 1, 4), fl("bits_b", 0x1ec, 12), fl("var", 2, 2), fl("bits_c", 0x33c89f6bdeced846, 62)},
		},
		{
			name: "ulid", text: "01ARZ3NDEKTSV4RRFFQ69G5FAV", scheme: "ulid",
			fields: []idgen.Field{fl("unix_ts_ms", 1469922850259, 48), fl("rand_hi", 0xd676, 16), fl("rand_lo", 0x4c61efb99302bd5b, 64)},
			time:   time.UnixMilli(1469922850259).UTC(),
		},
		{
			name: "ksuid", text: "0ujtsYcgvSTl8PAuAdqWYSMnLOv", scheme: "ksuid",
			fields: []idgen.Field{fl("timestamp", 107608047, 32), fl("payload_hi", 0xB5A1CD34B5F99D11, 64), fl("payload_lo", 0x54FB6853345C9735, 64)},
			time:   time.Date(2017, 10, 10, 4, 0, 47, 0, time.UTC),
		},
		{
			name: "xid", text: "9m4e2mr0ui3e8a215n4g", scheme: "xid",
			fields: []idgen.Field{fl("time", 1300816219, 32), fl("machine", 0x60f486, 24), fl("pid", 58408, 16), fl("counter", 4271561, 24)},
			time:   time.Unix(1300816219, 0).UTC(),
		},
		{
			name: "flake128", text: "0000019aa1b2c3d4a1b2c3d4e5f60007", scheme: "flake128",
			fields: []idgen.Field{fl("timestamp", 0x19aa1b2c3d4, 64), fl("worker", 0xa1b2c3d4e5f6, 48), fl("sequence", 7, 16)},
			time:   time.UnixMilli(0x19aa1b2c3d4).UTC(),
		},
		{
			name: "snowflake default", text: "4194304", scheme: "snowflake",
			fields: []idgen.Field{fl("time", 1, 41), fl("datacenter", 0, 5), fl("worker", 0, 5), fl("sequence", 0, 12)},
			time:   time.Date(2026, 1, 1, 0, 0, 0, 1e6, time.UTC),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := strategies.Parse(tc.text)
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tc.text, err)
			}
			if id.Scheme().Name != tc.scheme {
				t.Fatalf("Parse(%q).Scheme() = %s; want %s", tc.text, id.Scheme(), tc.scheme)
			}
			if got := id.Scheme().Decompose(id); !slices.Equal(got, tc.fields) {
				t.Fatalf("Decompose(%q) = %+v; want %+v", tc.text, got, tc.fields)
			}
			if !id.Time().Equal(tc.time) {
				t.Fatalf("Parse(%q).Time() = %v; want %v", tc.text, id.Time(), tc.time)
			}
			if id.String() != tc.text {
				t.Fatalf("Parse(%q).String() = %q; want the same text", tc.text, id.String())
			}
		})
	}
}

func TestParseCanonical(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{name: "uuid upper", text: "017F22E2-79B0-7CC3-98C4-DC0C0C07398F", want: "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"},
		{name: "ulid lower", text: "01arz3ndektsv4rrffq69g5fav", want: "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{name: "flake128 upper", text: "0000019AA1B2C3D4A1B2C3D4E5F60007", want: "0000019aa1b2c3d4a1b2c3d4e5f60007"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := strategies.Parse(tc.text)
			if err != nil || id.String() != tc.want {
				t.Fatalf("Parse(%q) = %v, %v; want %s", tc.text, id, err, tc.want)
			}
		})
	}
}

func TestParseWith(t *testing.T) {
	id, err := strategies.ParseWith("1541815603606036480", "snowflake?preset=twitter")
	if err != nil {
		t.Fatalf("ParseWith(twitter) = %v", err)
	}
	if got := id.Time(); !got.Equal(time.Date(2022, 6, 28, 16, 7, 40, 105e6, time.UTC)) {
		t.Fatalf("ParseWith(twitter).Time() = %v; want 2022-06-28T16:07:40.105Z", got)
	}
	id, err = strategies.ParseWith("12345", "sonyflake?bits_sequence=12&bits_machine=8")
	if err != nil || id.Scheme().Name != "sonyflake" {
		t.Fatalf("ParseWith(sonyflake) = %v, %v; want a sonyflake ID", id, err)
	}
	if m, _ := field(id, "machine"); m != 12345&0xff {
		t.Fatalf("ParseWith(12345, sonyflake 8-bit machine): machine = %d; want %d", m, 12345&0xff)
	}
}

// TestParseLenient checks what Parse and ParseWith take beyond the
// canonical text: spaces, tabs and line ends around it (a CRLF file's \r),
// a decimal's + sign, and a TypeID with its prefix told by its form.
func TestParseLenient(t *testing.T) {
	tests := []struct {
		name, text, spec string
		scheme, want     string // the scheme and canonical text
		prefix           string // a TypeID's
	}{
		{name: "CRLF line end", text: "1541815603606036480\r", scheme: "snowflake", want: "1541815603606036480"},
		{name: "leading space", text: " 1541815603606036480", scheme: "snowflake", want: "1541815603606036480"},
		{name: "plus sign", text: "+1541815603606036480", scheme: "snowflake", want: "1541815603606036480"},
		{name: "plus sign and spaces", text: " \t+4194304\r\n", scheme: "snowflake", want: "4194304"},
		{name: "plus sign with a spec", text: "+1541815603606036480\r", spec: "snowflake?preset=twitter", scheme: "snowflake", want: "1541815603606036480"},
		{name: "uuid in tabs", text: "\t017f22e2-79b0-7cc3-98c4-dc0c0c07398f\t", scheme: "uuidv7", want: "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"},
		{name: "xid and CR", text: "9m4e2mr0ui3e8a215n4g\r", scheme: "xid", want: "9m4e2mr0ui3e8a215n4g"},
		// The TypeID spec's valid vector "prefix_01h455vb4pex5vsknk084sn02q",
		// whose UUID is 01890a5d-ac96-774b-bcce-b302099a8057.
		{name: "typeid", text: "prefix_01h455vb4pex5vsknk084sn02q", scheme: "typeid", want: "prefix_01h455vb4pex5vsknk084sn02q", prefix: "prefix"},
		{name: "typeid, prefix with _", text: "user_account_01h455vb4pex5vsknk084sn02q\r", scheme: "typeid", want: "user_account_01h455vb4pex5vsknk084sn02q", prefix: "user_account"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := strategies.ParseWith(tc.text, tc.spec)
			if err != nil || id.Scheme().Name != tc.scheme || id.String() != tc.want {
				t.Fatalf("ParseWith(%q, %q) = %v (%v), %v; want %s (%s)", tc.text, tc.spec, id, id.Scheme(), err, tc.want, tc.scheme)
			}
			if prefix, _ := strategies.TypeIDPrefix(id); prefix != tc.prefix {
				t.Fatalf("TypeIDPrefix(ParseWith(%q)) = %q; want %q", tc.text, prefix, tc.prefix)
			}
			if tc.scheme == "typeid" {
				u, err := strategies.UUIDScheme().FromBytes(id.Bytes())
				if err != nil || u.String() != "01890a5d-ac96-774b-bcce-b302099a8057" {
					t.Fatalf("ParseWith(%q) bytes = %v, %v; want 01890a5d-ac96-774b-bcce-b302099a8057", tc.text, u, err)
				}
			}
		})
	}
	bad := []struct{ name, text, want string }{
		{"typeid, prefix not a-z", "User_01h455vb4pex5vsknk084sn02q", `TypeID prefix "User": want at most 63 of a-z and _, starting and ending with a-z`},
		{"typeid, suffix overflow", "user_81h455vb4pex5vsknk084sn02q", `(as typeid?prefix=user)`},
		{"plus before letters", "+abc", `cannot tell the scheme of "+abc"`},
		{"two plus signs", "++4194304", `cannot tell the scheme of "++4194304"`},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			id, err := strategies.Parse(tc.text)
			if !errors.Is(err, idgen.ErrSyntax) && !errors.Is(err, idgen.ErrOutOfRange) || !strings.Contains(fmt.Sprint(err), tc.want) {
				t.Fatalf("Parse(%q) = %v, %v; want an error containing %q", tc.text, id, err, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text string
		want       error
		msg        string
	}{
		{name: "empty", text: "", want: idgen.ErrSyntax,
			msg: `idgen: invalid ID syntax: cannot tell the scheme of "" (0 chars): want a 36-char UUID, 32 hex digits (flake128), 26-char ULID, prefix_ and 26 chars (TypeID), 27-char KSUID, 20-char xid or a decimal 64-bit ID`},
		{name: "unknown length", text: "abc", want: idgen.ErrSyntax},
		{name: "uuid bad hex", text: "017f22e2-79b0-7cc3-98c4-dc0c0c07398g", want: idgen.ErrSyntax},
		{name: "uuid no dashes", text: "017f22e2079b007cc3098c40dc0c0c07398f", want: idgen.ErrSyntax},
		{name: "ulid overflow", text: "81ARZ3NDEKTSV4RRFFQ69G5FAV", want: idgen.ErrOutOfRange,
			msg: `idgen: value out of range: ULID "81ARZ3NDEKTSV4RRFFQ69G5FAV" exceeds 128 bits (first char must be 0-7) (as ulid)`},
		{name: "ulid bad char", text: "01ARZ3NDEKTSV4RRFFQ69G5FAU", want: idgen.ErrSyntax},
		{name: "ksuid bad char", text: "0ujtsYcgvSTl8PAuAdqWYSMnLO!", want: idgen.ErrSyntax},
		{name: "ksuid overflow", text: "zzzzzzzzzzzzzzzzzzzzzzzzzzz", want: idgen.ErrOutOfRange},
		{name: "xid bad char", text: "9m4e2mr0ui3e8a215n4z", want: idgen.ErrSyntax},
		{name: "flake128 bad hex", text: "0000019aa1b2c3d4a1b2c3d4e5f6000x", want: idgen.ErrSyntax},
		{name: "decimal too big", text: "18446744073709551616", want: idgen.ErrOutOfRange},
		{name: "decimal 25 digits", text: "1234567890123456789012345", want: idgen.ErrOutOfRange},
		{name: "negative", text: "-5", want: idgen.ErrSyntax},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := strategies.Parse(tc.text)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Parse(%q) = %v, %v; want %v", tc.text, id, err, tc.want)
			}
			if tc.msg != "" && err.Error() != tc.msg {
				t.Fatalf("Parse(%q) error = %q; want %q", tc.text, err, tc.msg)
			}
		})
	}
}

// TestSpecErrors checks that a typo names the key or value and lists the
// valid choices.
func TestSpecErrors(t *testing.T) {
	tests := []struct{ name, spec, msg string }{
		{name: "unknown strategy", spec: "uuidv8",
			msg: `strategies: invalid spec: unknown strategy "uuidv8"; valid: ` + strings.Join(strategies.Names(), ", ")},
		{name: "unknown sonyflake key", spec: "sonyflake?bits_seq=8",
			msg: `strategies: invalid spec: sonyflake: unknown key "bits_seq"; valid keys: bits_sequence, bits_machine, time_unit, start_time, machine, worker_source, rollback, max_wait, high_water, high_water_ahead, clock`},
		{name: "bits out of range", spec: "sonyflake?bits_sequence=31",
			msg: `strategies: invalid spec: sonyflake: bits_sequence="31": want an integer in [1, 30]`},
		{name: "bits sum", spec: "sonyflake?bits_sequence=16&bits_machine=16",
			msg: `strategies: invalid spec: sonyflake: bits_sequence + bits_machine = 32: want at most 31 (time needs 32 bits)`},
		{name: "time unit", spec: "sonyflake?time_unit=100us",
			msg: `strategies: invalid spec: sonyflake: time_unit 100µs: want at least 1ms`},
		{name: "start time", spec: "sonyflake?start_time=yesterday",
			msg: `strategies: invalid spec: sonyflake: start_time="yesterday": want RFC 3339 (2025-01-01T00:00:00Z), a date (2025-01-01) or unix ms, 1970 or later`},
		{name: "start time future", spec: "sonyflake?start_time=2199-01-01",
			msg: `strategies: invalid spec: sonyflake: start_time="2199-01-01": want a time not in the future`},
		{name: "machine range", spec: "sonyflake?bits_machine=4&machine=16",
			msg: `strategies: invalid spec: sonyflake: machine="16": want an integer in [0, 15]`},
		{name: "ksuid monotonic", spec: "ksuid?monotonic=maybe",
			msg: `strategies: invalid spec: ksuid: monotonic="maybe": want true or false`},
		{name: "uuid has no keys", spec: "uuidv7?worker=1",
			msg: `strategies: invalid spec: uuidv7: unknown key "worker"; valid keys: (none)`},
		{name: "flake128 worker", spec: "flake128?worker=281474976710656",
			msg: `strategies: invalid spec: flake128: worker="281474976710656": want an integer in [0, 281474976710655]`},
		{name: "flake128 rollback", spec: "flake128?rollback=retry",
			msg: `strategies: invalid spec: flake128: rollback="retry": want one of fail, wait, wait-then-fail, hold, bump`},
		{name: "xid machine", spec: "xid?machine=-1",
			msg: `strategies: invalid spec: xid: machine="-1": want an integer in [0, 16777215]`},
	}
	for _, name := range []string{"flake128", "ksuid", "sonyflake", "snowflake", "ulid", "uuidv4", "uuidv7", "xid"} {
		if _, ok := strategies.Lookup(name); !ok {
			t.Fatalf("Lookup(%q) = false; want registered", name)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := strategies.NewText(context.Background(), tc.spec)
			if err == nil || err.Error() != tc.msg || !errors.Is(err, strategies.ErrSpec) {
				t.Fatalf("New(%q) = %v, %v; want %s (ErrSpec)", tc.spec, g, err, tc.msg)
			}
		})
	}
}

func fl(name string, v uint64, bits int) idgen.Field {
	return idgen.Field{Name: name, Value: v, Bits: bits}
}

// TestParseDashlessUUID checks that 32 hex digits with a UUID's version and
// variant, and high bits a flake128 ID never has, read as a UUID, and that
// flake128 IDs still read as flake128.
func TestParseDashlessUUID(t *testing.T) {
	tests := []struct{ name, text, scheme, want string }{
		{"uuidv7", "0190f1d27a3b7c4d8e5f6a7b8c9d0e1f", "uuidv7", "0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f"},
		{"uuidv7 upper", "017F22E279B07CC398C4DC0C0C07398F", "uuidv7", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"},
		{"uuidv4", "919108f752d143209bacf847db4148a8", "uuidv4", "919108f7-52d1-4320-9bac-f847db4148a8"},
		{"uuid v1", "c232ab00941411ecb3c89f6bdeced846", "uuid", "c232ab00-9414-11ec-b3c8-9f6bdeced846"},
		{"flake128", "0000019aa1b2c3d4a1b2c3d4e5f60007", "flake128", "0000019aa1b2c3d4a1b2c3d4e5f60007"},
		{"flake128 with uuid bits", "0000019aa1b27c4d8e5f6a7b8c9d0e1f", "flake128", "0000019aa1b27c4d8e5f6a7b8c9d0e1f"},
		{"no version", "ffff0000000000000000000000000000", "flake128", "ffff0000000000000000000000000000"},
		{"bad variant", "0190f1d27a3b7c4d4e5f6a7b8c9d0e1f", "flake128", "0190f1d27a3b7c4d4e5f6a7b8c9d0e1f"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := strategies.Parse(tc.text)
			if err != nil || id.Scheme().Name != tc.scheme || id.String() != tc.want {
				t.Fatalf("Parse(%q) = %v (%v), %v; want %s %s", tc.text, id, id.Scheme(), err, tc.scheme, tc.want)
			}
		})
	}
}

// TestParseMessages checks that parse errors name the input (cut to 64
// bytes) and what is allowed, in idgen's words, not Go's.
func TestParseMessages(t *testing.T) {
	long := strings.Repeat("9", 10_000)
	tests := []struct{ name, text, spec, want string }{
		{"flake128 bad hex", strings.Repeat("z", 32), "", `"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz" is not a flake128 ID: 'z' is not a hex digit; want 32 hex digits (0-9, a-f)`},
		{"uuid bad hex", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", "", `"zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz" is not a UUID: 'z' is not a hex digit; want 8-4-4-4-12 hex digits (0-9, a-f)`},
		{"ulid bad char", "01ARZ3NDEKTSV4RRFFQ69G5FAU", "", `"01ARZ3NDEKTSV4RRFFQ69G5FAU" is not a ULID: 'U' is not Crockford base32; want 26 chars of 0-9 and A-Z without I, L, O, U`},
		{"ulid size", "123", "ulid", `"123" is not a ULID: want 26 chars of 0-9 and A-Z without I, L, O, U`},
		{"long decimal", long, "", `"` + strings.Repeat("9", 64) + `…" exceeds 2^64-1`},
		{"long non-decimal", strings.Repeat("x", 10_000), "snowflake", `"` + strings.Repeat("x", 64) + `…" is not a decimal ID (digits 0-9 only)`},
		{"long unknown", strings.Repeat("-", 10_000), "", `cannot tell the scheme of "` + strings.Repeat("-", 64) + `…" (10000 chars)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := strategies.ParseWith(tc.text, tc.spec)
			if err == nil {
				t.Fatalf("ParseWith(%.70q, %q) = nil error; want one", tc.text, tc.spec)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, "strconv") || strings.Contains(msg, "encoding/hex") ||
				strings.Contains(msg, "unmarshaling") || len(msg) > 400 {
				t.Fatalf("ParseWith(%.70q, %q) error = %q; want it to contain %q, no Go internals, under 400 bytes", tc.text, tc.spec, msg, tc.want)
			}
		})
	}
}
