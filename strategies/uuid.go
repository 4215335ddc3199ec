package strategies

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/idgenkit/idgen"
)

// UUIDv4Scheme returns the scheme of the random UUID:
//
//	 0                   1                   2                   3
//	+-------------------------------+-------+-----------------------+
//	|                          random_a (48)                        |
//	+-------------------------------+-------+-----------------------+
//	|        random_a               |ver (4)|     random_b (12)     |
//	+---+---------------------------+-------+-----------------------+
//	|var|                      random_c (62)                        |
//	+---+-----------------------------------------------------------+
//	|                           random_c                            |
//	+---------------------------------------------------------------+
//
// Every call returns the same *idgen.Scheme (schemes compare by
// pointer); do not modify it.
func UUIDv4Scheme() *idgen.Scheme { return uuidv4Scheme }

// UUIDv7Scheme returns the scheme of the time-ordered UUID: unix_ts_ms (48
// bits of Unix milliseconds), ver (4, = 7), rand_a (12), var (2, = 0b10),
// rand_b (62). google/uuid fills rand_a with the sub-millisecond time in
// units of 256 ns and keeps it increasing within the process (RFC 9562 §6.2,
// method 3), so IDs increase strictly. Every call returns the same
// *idgen.Scheme (schemes compare by pointer); do not modify it.
func UUIDv7Scheme() *idgen.Scheme { return uuidv7Scheme }

// UUIDScheme returns the scheme of a UUID of any version, fields bits_a
// (48), ver (4), bits_b (12), var (2), bits_c (62): what strategies.Parse
// returns for a 36-char UUID that is neither version 4 nor 7 (a ULID in its
// uuid form, a UUIDv1, v6, v8), and what ULIDToUUID converts to. Every call
// returns the same *idgen.Scheme (schemes compare by pointer); do not modify
// it.
func UUIDScheme() *idgen.Scheme { return uuidScheme }

// UUID schemes (RFC 9562): 16 bytes, the 36-char lowercase hex text
// xxxxxxxx-xxxx-Vxxx-xxxx-xxxxxxxxxxxx, stored in a PostgreSQL uuid column
// (which compares them byte by byte, so UUIDv7 keeps its time order there).
// Their parsers accept any UUID, in either case; strategies.Parse picks the
// scheme by the version nibble V.
var (
	uuidv4Scheme = &idgen.Scheme{Name: "uuidv4", Size: 16, Column: idgen.ColumnUUID, Codec: uuidCodec{names: v4Names}}
	uuidv7Scheme = &idgen.Scheme{Name: "uuidv7", Size: 16, Column: idgen.ColumnUUID, TimeOrdered: true, Codec: uuidCodec{names: v7Names, timed: true}}
	uuidScheme   = &idgen.Scheme{Name: "uuid", Size: 16, Column: idgen.ColumnUUID, Codec: uuidCodec{names: anyNames}}
)

var (
	v4Names  = [3]string{"random_a", "random_b", "random_c"}
	v7Names  = [3]string{"unix_ts_ms", "rand_a", "rand_b"}
	anyNames = [3]string{"bits_a", "bits_b", "bits_c"}
)

// uuidCodec is the Codec of the UUID schemes.
type uuidCodec struct {
	names [3]string
	timed bool // the first 48 bits are Unix ms whatever the version
}

func (uuidCodec) AppendText(dst, b []byte) []byte { return idgen.AppendUUIDText(dst, b) }

func (uuidCodec) ParseText(b, text []byte) error { return idgen.ParseUUIDText(b, text) }

func (c uuidCodec) Time(b []byte) time.Time {
	if !c.timed && b[6]>>4 != 7 {
		return time.Time{}
	}
	return time.UnixMilli(int64(uint48(b))).UTC()
}

func (c uuidCodec) Decompose(b []byte) []idgen.Field {
	return []idgen.Field{
		{Name: c.names[0], Value: uint48(b), Bits: 48},
		{Name: "ver", Value: uint64(b[6] >> 4), Bits: 4},
		{Name: c.names[1], Value: uint64(binary.BigEndian.Uint16(b[6:8]) & 0x0fff), Bits: 12},
		{Name: "var", Value: uint64(b[8] >> 6), Bits: 2},
		{Name: c.names[2], Value: binary.BigEndian.Uint64(b[8:16]) & (1<<62 - 1), Bits: 62},
	}
}

// uint48 reads the first 6 bytes of b, big-endian.
func uint48(b []byte) uint64 {
	return uint64(binary.BigEndian.Uint16(b[0:2]))<<32 | uint64(binary.BigEndian.Uint32(b[2:6]))
}

func putUint48(b []byte, v uint64) {
	binary.BigEndian.PutUint16(b[0:2], uint16(v>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(v))
}

func init() {
	register(&Strategy{
		Name:   "uuidv4",
		Doc:    "random UUID (RFC 9562), 16 B, uuid column; google/uuid with batched crypto/rand",
		Build:  func(context.Context, *Params) (idgen.Generator, error) { return NewUUIDv4(), nil },
		Scheme: func(*Params) (*idgen.Scheme, error) { return UUIDv4Scheme(), nil },
	})
	register(&Strategy{
		Name:   "uuidv7",
		Doc:    "time-ordered UUID (RFC 9562), 48-bit Unix ms prefix, 16 B, uuid column; google/uuid",
		Build:  func(context.Context, *Params) (idgen.Generator, error) { return NewUUIDv7(), nil },
		Scheme: func(*Params) (*idgen.Scheme, error) { return UUIDv7Scheme(), nil },
	})
}

// UUIDv4Generator issues UUIDv4s through google/uuid, drawing the random
// bits from a per-generator buffer of crypto/rand (one read per 128 IDs)
// instead of one crypto/rand read per ID. Safe for concurrent use.
type UUIDv4Generator struct {
	closeFlag
	ent *entropy
}

var _ idgen.Generator = (*UUIDv4Generator)(nil)

// NewUUIDv4 returns a UUIDv4 generator.
func NewUUIDv4() *UUIDv4Generator { return &UUIDv4Generator{ent: newEntropy()} }

// Scheme returns UUIDv4Scheme().
func (g *UUIDv4Generator) Scheme() *idgen.Scheme { return UUIDv4Scheme() }

// Next returns a new UUIDv4. It fails only after Close (idgen.ErrClosed).
func (g *UUIDv4Generator) Next(context.Context) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	u, err := uuid.NewRandomFromReader(g.ent)
	if err != nil {
		return idgen.ID{}, err
	}
	return UUIDv4Scheme().FromBytes(u[:])
}

// UUIDv7Generator issues UUIDv7s through google/uuid, whose process-wide
// time state makes them strictly increasing across all its callers. The
// random bits come from a per-generator buffer of crypto/rand. Safe for
// concurrent use.
type UUIDv7Generator struct {
	closeFlag
	ent *entropy
}

var (
	_ idgen.Generator   = (*UUIDv7Generator)(nil)
	_ idgen.AtGenerator = (*UUIDv7Generator)(nil)
)

// NewUUIDv7 returns a UUIDv7 generator.
func NewUUIDv7() *UUIDv7Generator { return &UUIDv7Generator{ent: newEntropy()} }

// Scheme returns UUIDv7Scheme().
func (g *UUIDv7Generator) Scheme() *idgen.Scheme { return UUIDv7Scheme() }

// Next returns a new UUIDv7. It fails only after Close (idgen.ErrClosed).
func (g *UUIDv7Generator) Next(context.Context) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	u, err := uuid.NewV7FromReader(g.ent)
	if err != nil {
		return idgen.ID{}, err
	}
	return UUIDv7Scheme().FromBytes(u[:])
}

// NewAt returns a UUIDv7 whose unix_ts_ms is t's Unix millisecond, rand_a
// its sub-millisecond part in 256 ns units (as google/uuid fills it), and
// rand_b 62 random bits: unique in probability whatever the order of calls.
// t must lie in [1970-01-01, 1970 + 2^48 ms); otherwise the error wraps
// idgen.ErrBeforeEpoch or idgen.ErrLayoutExhausted.
func (g *UUIDv7Generator) NewAt(t time.Time) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	ms, err := unixMilli48(t)
	if err != nil {
		return idgen.ID{}, err
	}
	u, err := uuid.NewRandomFromReader(g.ent)
	if err != nil {
		return idgen.ID{}, err
	}
	sub := uint16((t.Nanosecond() % int(time.Millisecond)) >> 8) // 0-3906: the sub-ms fraction in 12 bits
	putUint48(u[:], ms)
	binary.BigEndian.PutUint16(u[6:8], 0x7000|sub)
	return UUIDv7Scheme().FromBytes(u[:])
}

// unixMilli48 returns t in Unix ms when it fits 48 bits.
func unixMilli48(t time.Time) (uint64, error) {
	if t.Before(time.Unix(0, 0)) {
		return 0, fmt.Errorf("%w: %s is before 1970, the start of a 48-bit Unix ms field", idgen.ErrBeforeEpoch, t.UTC().Format(time.RFC3339Nano))
	}
	if t.Unix() > 1<<48/1000 || t.UnixMilli() >= 1<<48 {
		return 0, fmt.Errorf("%w: %s is past the end of a 48-bit Unix ms field (year 10889)", idgen.ErrLayoutExhausted, t.UTC().Format(time.RFC3339))
	}
	return uint64(t.UnixMilli()), nil
}
