package idgen

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"time"
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
