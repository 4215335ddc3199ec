package idgen

import (
	"bytes"
	"cmp"
	"database/sql/driver"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/idgenkit/idgen/internal/echo"
)

// An ID is one identifier of any scheme, held inline in 32 bytes:
//
//	+---------+---------------+---------------+-------------+
//	| scheme  | hi            | lo            | tail        |
//	| pointer | bytes 0-7     | bytes 8-15    | bytes 16-19 |
//	+---------+---------------+---------------+-------------+
//
// The raw bytes (Scheme().Size of them, zero after) are stored big-endian as
// integers, so a 64-bit ID is its value in hi and IDs order by comparing
// hi, lo, tail. IDs are comparable with ==: equal when scheme and bytes are.
// The zero ID has no scheme. Issuing, copying and comparing IDs never
// allocates.
//
// An ID is for code that handles IDs of any scheme. Decoding needs the
// scheme, so an ID decodes (UnmarshalText, UnmarshalJSON, Scan, Set) only
// in the scheme it already has: start from Scheme.Zero(), or declare the
// field, slice or map as a TypedID, whose type carries the scheme. The zero
// ID refuses to decode, with ErrNoScheme naming both, rather than guess a
// scheme and give back an ID != to the one encoded.
//
// JSON: an ID encodes as a JSON string of its canonical text, so that
// 64-bit values survive JavaScript, whose numbers hold integers exactly up
// to 2^53 only. Decoding accepts a JSON number for an 8-byte scheme up to
// 2^53 (9007199254740992); a larger bare number, such as
// 9007199254740993, is refused with an error wrapping ErrOutOfRange (an
// ErrInvalid: bad input, exit 2 in the CLI, 400 from the servers): a
// JavaScript client can only have sent it after rounding it from another
// ID. The string "9007199254740993" decodes.
type ID struct {
	scheme *Scheme
	hi, lo uint64
	tail   uint32
}

// raw returns the ID's bytes, zero after Size.
func (id *ID) raw() (b [MaxSize]byte) {
	binary.BigEndian.PutUint64(b[0:8], id.hi)
	binary.BigEndian.PutUint64(b[8:16], id.lo)
	binary.BigEndian.PutUint32(b[16:20], id.tail)
	return b
}

// setRaw sets the ID's bytes from b (at most MaxSize of them).
func (id *ID) setRaw(src []byte) {
	switch len(src) { // the common sizes without a copy
	case 8:
		id.hi, id.lo, id.tail = binary.BigEndian.Uint64(src), 0, 0
		return
	case 12:
		id.hi, id.lo, id.tail = binary.BigEndian.Uint64(src), uint64(binary.BigEndian.Uint32(src[8:]))<<32, 0
		return
	case 16:
		id.hi, id.lo, id.tail = binary.BigEndian.Uint64(src), binary.BigEndian.Uint64(src[8:]), 0
		return
	}
	var b [MaxSize]byte
	copy(b[:], src)
	id.hi = binary.BigEndian.Uint64(b[0:8])
	id.lo = binary.BigEndian.Uint64(b[8:16])
	id.tail = binary.BigEndian.Uint32(b[16:20])
}

// codec runs f on the ID's bytes (Size of them) held on the stack.
func (id ID) text(dst []byte) []byte {
	b := id.raw()
	return id.scheme.Codec.AppendText(dst, b[:id.scheme.Size])
}

// Int64Scheme is the plain 64-bit integer (Kind Int64): decimal text,
// bigint column. Decode plain integers into Int64Scheme.Zero() or a
// TypedID[Int64].
var Int64Scheme = &Scheme{Name: "int64", Size: 8, Column: ColumnBigint, Codec: Uint64Codec{}}

// Uint64Codec is the Codec of a plain 64-bit integer in decimal text. Schemes
// of the 64-bit family embed it and add their own Time and Decompose.
type Uint64Codec struct{}

// AppendText appends b as an unsigned decimal.
func (Uint64Codec) AppendText(dst, b []byte) []byte {
	return strconv.AppendUint(dst, binary.BigEndian.Uint64(b), 10)
}

// ParseText decodes an unsigned decimal of at most 20 digits.
func (Uint64Codec) ParseText(b, text []byte) error {
	v, err := ParseUint64(text)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(b, v)
	return nil
}

// Time returns the zero Time: a plain integer carries none.
func (Uint64Codec) Time([]byte) time.Time { return time.Time{} }

// Decompose returns the single field "value".
func (Uint64Codec) Decompose(b []byte) []Field {
	return []Field{{Name: "value", Value: binary.BigEndian.Uint64(b), Bits: 64}}
}

// ParseUint64 parses a decimal 64-bit ID: digits only, no sign, no spaces.
// Errors wrap ErrSyntax or ErrOutOfRange and quote the text.
func ParseUint64(text []byte) (uint64, error) {
	if len(text) == 0 {
		return 0, fmt.Errorf("%w: empty ID", ErrSyntax)
	}
	for _, c := range text {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %s is not a decimal ID (digits 0-9 only)", ErrSyntax, quoteInput(text))
		}
	}
	v, err := strconv.ParseUint(string(text), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s exceeds 2^64-1", ErrOutOfRange, quoteInput(text))
	}
	return v, nil
}

// Scheme returns the ID's scheme, nil for the zero ID.
func (id ID) Scheme() *Scheme { return id.scheme }

// IsZero reports whether id is the zero ID (no scheme).
func (id ID) IsZero() bool { return id.scheme == nil }

// Bytes returns a copy of the ID's raw bytes, Scheme().Size of them.
func (id ID) Bytes() []byte {
	if id.scheme == nil {
		return nil
	}
	b := id.raw()
	return bytes.Clone(b[:id.scheme.Size])
}

// Uint64 returns the value of an 8-byte ID; ok is false for other sizes.
func (id ID) Uint64() (v uint64, ok bool) {
	if id.scheme == nil || id.scheme.Size != 8 {
		return 0, false
	}
	return id.hi, true
}

// Int64 returns the value of an 8-byte ID; ok is false for other sizes and
// for values above 2^63-1 (possible only in layouts of 64 bits).
func (id ID) Int64() (v int64, ok bool) {
	u, ok := id.Uint64()
	if !ok || u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// Time returns the creation time the ID encodes, at the scheme's resolution;
// the zero Time when the scheme carries none.
func (id ID) Time() time.Time {
	if id.scheme == nil {
		return time.Time{}
	}
	b := id.raw()
	return id.scheme.Codec.Time(b[:id.scheme.Size])
}

// Compare returns -1, 0 or +1 as id sorts before, with or after other, by raw
// bytes (the order of the scheme's binary and PostgreSQL forms).
func (id ID) Compare(other ID) int {
	switch {
	case id.hi != other.hi:
		return cmp.Compare(id.hi, other.hi)
	case id.lo != other.lo:
		return cmp.Compare(id.lo, other.lo)
	case id.tail != other.tail:
		return cmp.Compare(id.tail, other.tail)
	case id.scheme == other.scheme:
		return 0
	case id.scheme.String() < other.scheme.String():
		return -1
	default:
		return 1
	}
}

// String returns the scheme's canonical text: decimal for 64-bit schemes,
// 36-char hex for UUIDs, and so on. The zero ID gives "".
func (id ID) String() string {
	if id.scheme == nil {
		return ""
	}
	var buf [64]byte
	return string(id.text(buf[:0]))
}

// AppendText appends the canonical text to dst (encoding.TextAppender).
func (id ID) AppendText(dst []byte) ([]byte, error) {
	if id.scheme == nil {
		return dst, ErrNoScheme
	}
	return id.text(dst), nil
}

// MarshalText returns the canonical text.
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(nil) }

// UnmarshalText parses the scheme's canonical text into id, keeping id's
// scheme (see Scheme.Zero). An ID without a scheme gives ErrNoScheme,
// naming the TypedID and Scheme.Zero() forms that decode; id is then
// unchanged.
func (id *ID) UnmarshalText(text []byte) error {
	s := id.scheme
	if s == nil {
		return noScheme("decode " + quoteInput(text))
	}
	n, err := s.Parse(string(text))
	if err != nil {
		return err
	}
	*id = n
	return nil
}

// noScheme is the error of decoding into an ID without a scheme: what was
// refused, and the two forms that decode.
func noScheme(what string) error {
	return fmt.Errorf("%w: cannot %s into an idgen.ID without one; decode into an idgen.TypedID of its scheme (such as idgen.TypedID[strategies.UUIDv7]) or into Scheme.Zero()", ErrNoScheme, what)
}

// Set parses text as UnmarshalText does, keeping id's scheme, so that *ID
// is a flag.Value whose scheme is fixed up front by the value the flag
// starts from: Scheme.Zero() for a flag without a default (shown as the
// scheme's all-zero text, 0 for 64-bit schemes), or a default ID of the
// scheme (a *TypedID is a flag.Value whose zero value is ready). Errors are
// Scheme.Parse's (wrapping ErrSyntax or ErrOutOfRange, quoting the text),
// or ErrNoScheme for an ID without a scheme; on error id is unchanged.
func (id *ID) Set(text string) error { return id.UnmarshalText([]byte(text)) }

// MarshalJSON encodes the ID as a JSON string of its canonical text, so that
// 64-bit values survive JavaScript's doubles (2^53-1).
func (id ID) MarshalJSON() ([]byte, error) {
	if id.scheme == nil {
		return []byte("null"), nil
	}
	dst := append(make([]byte, 0, 48), '"')
	dst = id.text(dst)
	return append(dst, '"'), nil
}

// UnmarshalJSON accepts a JSON string of the canonical text or, for 8-byte
// schemes, a JSON number up to 2^53 (MaxJSONNumber). A string's escapes
// (\u0039, \/) are decoded before the text is read. null leaves id
// unchanged. Errors are UnmarshalText's; ErrOutOfRange (an ErrInvalid) for
// a bare number above 2^53, which JavaScript cannot hold exactly (send it
// as a string);
// ErrSyntax for a string that is not valid JSON.
func (id *ID) UnmarshalJSON(data []byte) error {
	switch {
	case string(data) == "null":
		return nil
	case len(data) >= 2 && data[0] == '"' && data[len(data)-1] == '"':
		text := data[1 : len(data)-1]
		if bytes.IndexByte(text, '\\') < 0 { // no escapes: the text as it is
			return id.UnmarshalText(text)
		}
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("%w: %s is not a valid JSON string", ErrSyntax, quoteInput(data))
		}
		return id.UnmarshalText([]byte(s))
	case id.scheme != nil && id.scheme.Size != 8:
		return fmt.Errorf("%w: %s ID must be a JSON string, got %s", ErrSyntax, id.scheme.Name, quoteInput(data))
	case id.scheme == nil:
		return noScheme("decode " + quoteInput(data))
	}
	if v, err := ParseUint64(data); err == nil && v > MaxJSONNumber { // digits only: safe to echo
		return fmt.Errorf("%w: JSON number %s is above 2^53 (%d), the largest integer a JavaScript number holds exactly: it may have been rounded from another ID; send 64-bit IDs as JSON strings (\"%s\")", ErrOutOfRange, data, uint64(MaxJSONNumber), data)
	}
	return id.UnmarshalText(data)
}

// MaxJSONNumber is 2^53, the largest bare JSON number UnmarshalJSON takes
// as a 64-bit ID: every integer up to it is exact in a JavaScript number
// (an IEEE 754 double), so a number above it may have been rounded.
const MaxJSONNumber = 1 << 53

// Value implements driver.Valuer for the scheme's PostgreSQL column: NULL
// for the zero ID (see NullID), int64 for bigint, the 36-char hex text for
// uuid, the raw bytes for bytea, the canonical text for text. A 64-bit value above 2^63-1 does not fit a
// bigint and gives ErrOutOfRange.
func (id ID) Value() (driver.Value, error) {
	s := id.scheme
	if s == nil {
		return nil, nil
	}
	switch s.Column {
	case ColumnBigint:
		v, ok := id.Int64()
		if !ok {
			return nil, fmt.Errorf("%w: %s ID %s does not fit a bigint (max 2^63-1)", ErrOutOfRange, s.Name, id)
		}
		return v, nil
	case ColumnUUID:
		if s.Size != 16 {
			return nil, fmt.Errorf("idgen: %s ID of %d bytes cannot be a uuid", s.Name, s.Size)
		}
		b := id.raw()
		return string(AppendUUIDText(nil, b[:16])), nil
	case ColumnBytea:
		return id.Bytes(), nil
	default:
		return id.String(), nil
	}
}

// Scan implements sql.Scanner. It keeps id's scheme (see Scheme.Zero) and
// accepts what drivers return for the scheme's column: int64, raw bytes
// (for a UUID scheme the 16 bytes MySQL's BINARY(16) holds), UUID text or
// the canonical text. An ID without a scheme gives ErrNoScheme, naming the
// TypedID and Scheme.Zero() forms that scan. NULL is no ID: it gives
// ErrNull and leaves id unchanged; scan a nullable column into a NullID.
func (id *ID) Scan(src any) error {
	s := id.scheme
	if src == nil {
		name := "an"
		if s != nil {
			name = "a " + s.Name
		}
		return fmt.Errorf("%w: scan a nullable column into a NullID, not %s ID", ErrNull, name)
	}
	if s == nil {
		return noScheme(fmt.Sprintf("scan %T", src))
	}
	n := ID{scheme: s}
	var err error
	switch v := src.(type) {
	case int64:
		if s.Size != 8 {
			return fmt.Errorf("%w: cannot scan an integer into a %d-byte %s ID", ErrSyntax, s.Size, s.Name)
		}
		n.hi = uint64(v)
	case []byte:
		err = n.scanBytes(v)
	case string:
		err = n.scanBytes([]byte(v))
	default:
		return fmt.Errorf("idgen: cannot scan %T into a %s ID", src, s.Name)
	}
	if err != nil {
		return err
	}
	*id = n
	return nil
}

func (id *ID) scanBytes(v []byte) error {
	s := id.scheme
	var b [MaxSize]byte
	switch {
	case (s.Column == ColumnBytea || s.Column == ColumnUUID) && len(v) == s.Size:
		copy(b[:], v)
	case s.Column == ColumnUUID && len(v) == 36:
		if err := ParseUUIDText(b[:16], v); err != nil {
			return err
		}
	default:
		if err := s.Codec.ParseText(b[:s.Size], v); err != nil {
			return err
		}
	}
	id.setRaw(b[:])
	return nil
}

// AppendUUIDText appends the 16 bytes b as RFC 9562 text,
// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, lowercase.
func AppendUUIDText(dst, b []byte) []byte {
	var buf [36]byte
	hex.Encode(buf[0:8], b[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], b[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], b[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], b[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:36], b[10:16])
	return append(dst, buf[:]...)
}

// ParseUUIDText decodes 36-char RFC 9562 text (either case) into the 16 bytes b.
func ParseUUIDText(b, text []byte) error {
	if len(text) != 36 || text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-' {
		return fmt.Errorf("%w: %q is not a 36-char UUID (8-4-4-4-12 hex digits)", ErrSyntax, text)
	}
	var compact [32]byte
	copy(compact[0:8], text[0:8])
	copy(compact[8:12], text[9:13])
	copy(compact[12:16], text[14:18])
	copy(compact[16:20], text[19:23])
	copy(compact[20:32], text[24:36])
	if _, err := hex.Decode(b[:16], compact[:]); err != nil {
		var bad hex.InvalidByteError // 32 digits: the only error Decode returns
		errors.As(err, &bad)
		return fmt.Errorf("%w: %q is not a UUID: %q is not a hex digit; want 8-4-4-4-12 hex digits (0-9, a-f)", ErrSyntax, text, rune(bad))
	}
	return nil
}

// quoteInput quotes text for an error message, cut to about 64 bytes.
func quoteInput(text []byte) string { return strconv.Quote(echo.Cut(string(text))) }
