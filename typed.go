package idgen

import (
	"database/sql/driver"
	"time"
)

// A Kind names one Scheme at the type level, so that the type TypedID[K]
// fixes the scheme of its values. A Kind is a type without data, usually an
// empty struct, whose Scheme method returns the same *Scheme on every call
// (TypedID calls it on K's zero value):
//
//	var orderScheme = snowflake.MustSchemeOf(orderLayout)
//
//	type Order struct{}
//
//	func (Order) Scheme() *idgen.Scheme { return orderScheme }
//
//	type OrderID = idgen.TypedID[Order]
//
// Packages provide the Kinds of their fixed schemes: [Int64] here,
// strategies.UUIDv7, strategies.ULID, snowflake.Twitter and so on.
type Kind interface {
	Scheme() *Scheme
}

// Int64 is the Kind of Int64Scheme(), plain 64-bit integers.
type Int64 struct{}

// Scheme returns Int64Scheme().
func (Int64) Scheme() *Scheme { return Int64Scheme() }

// A TypedID is an ID whose type fixes its scheme, K's, so that its zero
// value is a working decode target: a struct field, a slice element or a
// map value of type TypedID[K] decodes from JSON, text, a flag and SQL
// without being prepared, and what it decodes is == to the ID that was
// encoded. It holds the ID's bytes only (up to 20, inline; comparable), so
// == means "the same ID": same type, same bytes.
//
// The zero TypedID is the scheme's all-zero ID (K's Scheme().Zero()), as
// uuid.Nil is google/uuid's zero value: it encodes as the scheme's zero
// text ("0", "00000000-0000-0000-0000-000000000000") and decodes back to
// itself. A nullable column scans into a sql.Null[TypedID[K]].
//
// Decoding and its errors are those of ID in K's scheme (ID.UnmarshalText,
// ID.UnmarshalJSON, ID.Scan, ID.Set); on error the TypedID is unchanged.
// Use an untyped ID for code that handles IDs of any scheme; convert with
// ID and Typed.
type TypedID[K Kind] struct {
	hi, lo uint64
	tail   uint32
}

// kindScheme returns K's scheme.
func kindScheme[K Kind]() *Scheme {
	var k K
	return k.Scheme()
}

// Typed returns id as a TypedID of K; ok is false, and the TypedID zero,
// when id's scheme is not K's.
func Typed[K Kind](id ID) (t TypedID[K], ok bool) {
	if id.scheme != kindScheme[K]() {
		return TypedID[K]{}, false
	}
	return TypedID[K]{hi: id.hi, lo: id.lo, tail: id.tail}, true
}

// ID returns the untyped ID, of K's scheme.
func (t TypedID[K]) ID() ID { return ID{scheme: kindScheme[K](), hi: t.hi, lo: t.lo, tail: t.tail} }

// set takes id's bytes; id is of K's scheme.
func (t *TypedID[K]) set(id ID) { t.hi, t.lo, t.tail = id.hi, id.lo, id.tail }

// Scheme returns K's scheme.
func (t TypedID[K]) Scheme() *Scheme { return kindScheme[K]() }

// IsZero reports whether t is the zero TypedID: the scheme's all-zero ID.
func (t TypedID[K]) IsZero() bool { return t == TypedID[K]{} }

// Bytes returns a copy of the ID's raw bytes, Scheme().Size of them.
func (t TypedID[K]) Bytes() []byte { return t.ID().Bytes() }

// Uint64 returns the value of an 8-byte ID; ok is false for other sizes.
func (t TypedID[K]) Uint64() (v uint64, ok bool) { return t.ID().Uint64() }

// Time returns the creation time the ID encodes (see ID.Time).
func (t TypedID[K]) Time() time.Time { return t.ID().Time() }

// Compare returns -1, 0 or +1 as t sorts before, with or after other, by
// raw bytes.
func (t TypedID[K]) Compare(other TypedID[K]) int { return t.ID().Compare(other.ID()) }

// String returns the scheme's canonical text (see ID.String).
func (t TypedID[K]) String() string { return t.ID().String() }

// AppendText appends the canonical text to dst (encoding.TextAppender).
func (t TypedID[K]) AppendText(dst []byte) ([]byte, error) { return t.ID().AppendText(dst) }

// MarshalText returns the canonical text.
func (t TypedID[K]) MarshalText() ([]byte, error) { return t.ID().AppendText(nil) }

// UnmarshalText parses K's scheme's canonical text, as ID.UnmarshalText
// does from Scheme.Zero().
func (t *TypedID[K]) UnmarshalText(text []byte) error {
	return t.decode(func(id *ID) error { return id.UnmarshalText(text) })
}

// Set parses text as UnmarshalText does: *TypedID is a flag.Value.
func (t *TypedID[K]) Set(text string) error { return t.UnmarshalText([]byte(text)) }

// MarshalJSON encodes the ID as ID.MarshalJSON does: a JSON string of its
// canonical text.
func (t TypedID[K]) MarshalJSON() ([]byte, error) { return t.ID().MarshalJSON() }

// UnmarshalJSON decodes as ID.UnmarshalJSON does in K's scheme: a JSON
// string of the canonical text or, for 8-byte schemes, a JSON number up to
// 2^53. null leaves t unchanged.
func (t *TypedID[K]) UnmarshalJSON(data []byte) error {
	return t.decode(func(id *ID) error { return id.UnmarshalJSON(data) })
}

// Value implements driver.Valuer for the scheme's column, as ID.Value does.
func (t TypedID[K]) Value() (driver.Value, error) { return t.ID().Value() }

// Scan implements sql.Scanner as ID.Scan does in K's scheme: int64 for
// bigint, 16 raw bytes or UUID text for uuid (MySQL's BINARY(16) too), raw
// bytes for bytea, the canonical text. NULL gives ErrNull: scan a nullable
// column into a sql.Null[TypedID[K]].
func (t *TypedID[K]) Scan(src any) error {
	return t.decode(func(id *ID) error { return id.Scan(src) })
}

// decode runs f on K's zero ID and takes its bytes when f succeeds.
func (t *TypedID[K]) decode(f func(*ID) error) error {
	id := ID{scheme: kindScheme[K](), hi: t.hi, lo: t.lo, tail: t.tail}
	if err := f(&id); err != nil {
		return err
	}
	t.set(id)
	return nil
}
