package strategies

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/idgenkit/idgen"
)

// UUIDv1Scheme returns the scheme of the time-based UUID: time_low (the low
// 32 bits of the timestamp), time_mid (the next 16), ver (4, = 1), time_high
// (the top 12), var (2), clock_seq (14), node (48). Its first field wraps
// every 2^32 × 100 ns = 429.4967296 s, so keys increase within one wrap and
// jump back at each one: not in time order. Every call returns the same
// *idgen.Scheme (schemes compare by pointer); do not modify it.
func UUIDv1Scheme() *idgen.Scheme { return uuidv1Scheme }

// UUIDv6Scheme returns the scheme of UUIDv1 with its time fields reordered,
// most significant first: time_high (the top 32 bits of the timestamp),
// time_mid (16), ver (4, = 6), time_low (12), var (2), clock_seq (14), node
// (48). Keys follow time order. Every call returns the same *idgen.Scheme
// (schemes compare by pointer); do not modify it.
func UUIDv6Scheme() *idgen.Scheme { return uuidv6Scheme }

// The Gregorian UUIDs (RFC 9562 §5.1, §5.6): a 60-bit timestamp in 100 ns
// units since 1582-10-15 00:00 UTC, a 14-bit clock sequence and a 48-bit
// node. Both are 16 bytes in a uuid column, compared byte by byte.
var (
	uuidv1Scheme = &idgen.Scheme{Name: "uuidv1", Size: 16, Column: idgen.ColumnUUID, Codec: gregorianCodec{version: 1}}
	uuidv6Scheme = &idgen.Scheme{Name: "uuidv6", Size: 16, Column: idgen.ColumnUUID, TimeOrdered: true, Codec: gregorianCodec{version: 6}}
)

// gregorianEpoch is 1582-10-15 00:00 UTC, the zero of the 60-bit timestamp.
var gregorianEpoch = time.Date(1582, 10, 15, 0, 0, 0, 0, time.UTC)

// g1582 is gregorianEpoch in 100 ns units before the Unix epoch.
const g1582 = 122192928000000000

// gregorianCodec is the Codec of UUIDv1 and UUIDv6.
type gregorianCodec struct{ version byte }

func (gregorianCodec) AppendText(dst, b []byte) []byte { return idgen.AppendUUIDText(dst, b) }

func (gregorianCodec) ParseText(b, text []byte) error { return idgen.ParseUUIDText(b, text) }

// Time returns the timestamp, at 100 ns resolution, in UTC; the zero
// time for a UUID of another version.
func (c gregorianCodec) Time(b []byte) time.Time {
	ts, ok := gregorianTime(b)
	if !ok {
		return time.Time{}
	}
	d := int64(ts) - g1582 // 100 ns units since 1970
	return time.Unix(d/10_000_000, d%10_000_000*100).UTC()
}

// gregorianTime reads the 60-bit timestamp of a UUIDv1 or v6.
func gregorianTime(b []byte) (uint64, bool) {
	hi, mid := binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint16(b[4:6])
	lo := binary.BigEndian.Uint16(b[6:8]) & 0x0fff
	switch b[6] >> 4 {
	case 1: // time_low, time_mid, time_high
		return uint64(lo)<<48 | uint64(mid)<<32 | uint64(hi), true
	case 6: // time_high, time_mid, time_low
		return uint64(hi)<<28 | uint64(mid)<<12 | uint64(lo), true
	}
	return 0, false
}

func (c gregorianCodec) Decompose(b []byte) []idgen.Field {
	names := [3]string{"time_low", "time_mid", "time_high"}
	bits := [3]int{32, 16, 12}
	if c.version == 6 {
		names = [3]string{"time_high", "time_mid", "time_low"}
	}
	return []idgen.Field{
		{Name: names[0], Value: uint64(binary.BigEndian.Uint32(b[0:4])), Bits: bits[0]},
		{Name: names[1], Value: uint64(binary.BigEndian.Uint16(b[4:6])), Bits: bits[1]},
		{Name: "ver", Value: uint64(b[6] >> 4), Bits: 4},
		{Name: names[2], Value: uint64(binary.BigEndian.Uint16(b[6:8]) & 0x0fff), Bits: bits[2]},
		{Name: "var", Value: uint64(b[8] >> 6), Bits: 2},
		{Name: "clock_seq", Value: uint64(binary.BigEndian.Uint16(b[8:10]) & 0x3fff), Bits: 14},
		{Name: "node", Value: uint48(b[10:16]), Bits: 48},
	}
}

func init() {
	register(&Strategy{
		Name:   "uuidv1",
		Doc:    "time-based UUID (RFC 9562), 100 ns Gregorian time low bits first (wraps every 429 s), clock sequence, node; 16 B, uuid column; google/uuid",
		Build:  func(context.Context, *Params) (idgen.Generator, error) { return NewUUIDv1(), nil },
		Scheme: func(*Params) (*idgen.Scheme, error) { return UUIDv1Scheme(), nil },
	})
	register(&Strategy{
		Name:   "uuidv6",
		Doc:    "UUIDv1 reordered for time order (RFC 9562), 100 ns Gregorian time high bits first, clock sequence, node; 16 B, uuid column; google/uuid's clock",
		Build:  func(context.Context, *Params) (idgen.Generator, error) { return NewUUIDv6(), nil },
		Scheme: func(*Params) (*idgen.Scheme, error) { return UUIDv6Scheme(), nil },
	})
}

// UUIDv1Generator issues UUIDv1s through google/uuid (its process-wide
// clock, clock sequence and node ID). Safe for concurrent use.
type UUIDv1Generator struct {
	closeFlag
	ent *entropy
}

// UUIDv6Generator issues UUIDv6s laid out as RFC 9562 §5.6 says, from
// google/uuid's process-wide clock, clock sequence and node ID (google/uuid
// v1.6's own NewV6 writes the timestamp unshifted and loses four of its
// bits under the version). Safe for concurrent use.
type UUIDv6Generator struct {
	closeFlag
	ent *entropy
}

var (
	_ idgen.AtGenerator = (*UUIDv1Generator)(nil)
	_ idgen.AtGenerator = (*UUIDv6Generator)(nil)
)

// NewUUIDv1 returns a UUIDv1 generator.
func NewUUIDv1() *UUIDv1Generator { return &UUIDv1Generator{ent: newEntropy()} }

// NewUUIDv6 returns a UUIDv6 generator.
func NewUUIDv6() *UUIDv6Generator { return &UUIDv6Generator{ent: newEntropy()} }

// Scheme returns UUIDv1Scheme().
func (g *UUIDv1Generator) Scheme() *idgen.Scheme { return UUIDv1Scheme() }

// Scheme returns UUIDv6Scheme().
func (g *UUIDv6Generator) Scheme() *idgen.Scheme { return UUIDv6Scheme() }

// Next returns a new UUIDv1 of the current time. google/uuid raises the
// clock sequence when the clock has not moved on since its last UUID, so
// the UUIDs of one process differ.
func (g *UUIDv1Generator) Next(context.Context) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	u, err := uuid.NewUUID()
	if err != nil {
		return idgen.ID{}, err
	}
	return UUIDv1Scheme().FromBytes(u[:])
}

// Next returns a new UUIDv6 of the current time, from the same clock and
// clock sequence as UUIDv1Generator.Next.
func (g *UUIDv6Generator) Next(context.Context) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	ts, seq, err := uuid.GetTime()
	if err != nil {
		return idgen.ID{}, err
	}
	var b [16]byte
	putGregorian(&b, 6, uint64(ts))
	binary.BigEndian.PutUint16(b[8:10], seq&0x3fff|0x8000)
	node := uuid.NodeID()
	copy(b[10:], node)
	return UUIDv6Scheme().FromBytes(b[:])
}

// NewAt returns a UUIDv1 whose timestamp is t at 100 ns resolution, and
// whose clock sequence and node are 62 random bits (the node's multicast
// bit set, marking a node that is no MAC address, RFC 9562 §6.10): unique
// in probability whatever the order of calls. t must lie in [1582-10-15,
// 5236-03-31); otherwise the error wraps idgen.ErrBeforeEpoch or
// idgen.ErrLayoutExhausted.
func (g *UUIDv1Generator) NewAt(t time.Time) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	return newGregorianAt(g.ent, UUIDv1Scheme(), 1, t)
}

// NewAt returns a UUIDv6 whose timestamp is t at 100 ns resolution, with
// 62 random bits as UUIDv1Generator.NewAt; the same range and errors.
func (g *UUIDv6Generator) NewAt(t time.Time) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	return newGregorianAt(g.ent, UUIDv6Scheme(), 6, t)
}

func newGregorianAt(ent *entropy, s *idgen.Scheme, version byte, t time.Time) (idgen.ID, error) {
	if t.Before(gregorianEpoch) {
		return idgen.ID{}, fmt.Errorf("%w: %s is before 1582-10-15, the start of the UUID's Gregorian timestamp", idgen.ErrBeforeEpoch, t.UTC().Format(time.RFC3339Nano))
	}
	// 2^60 × 100 ns after 1582 is in 5236; time.Duration covers ±292 years,
	// so count in seconds first.
	sec := t.Unix() - gregorianEpoch.Unix()
	if sec >= 1<<60/10_000_000 {
		return idgen.ID{}, fmt.Errorf("%w: %s is past the end of the UUID's 60-bit timestamp (year 5236)", idgen.ErrLayoutExhausted, t.UTC().Format(time.RFC3339))
	}
	ts := uint64(sec)*10_000_000 + uint64(t.Nanosecond()/100)
	u, err := uuid.NewRandomFromReader(ent)
	if err != nil {
		return idgen.ID{}, err
	}
	b := [16]byte(u)
	putGregorian(&b, version, ts)
	b[8] = b[8]&0x3f | 0x80 // variant 10
	b[10] |= 0x01           // multicast: a random node
	return s.FromBytes(b[:])
}

// putGregorian writes the 60-bit timestamp ts and the version into b[0:8]
// in the field order of UUIDv1 or UUIDv6.
func putGregorian(b *[16]byte, version byte, ts uint64) {
	switch version {
	case 1:
		binary.BigEndian.PutUint32(b[0:4], uint32(ts))
		binary.BigEndian.PutUint16(b[4:6], uint16(ts>>32))
		binary.BigEndian.PutUint16(b[6:8], 0x1000|uint16(ts>>48)&0x0fff)
	case 6:
		binary.BigEndian.PutUint32(b[0:4], uint32(ts>>28))
		binary.BigEndian.PutUint16(b[4:6], uint16(ts>>12))
		binary.BigEndian.PutUint16(b[6:8], 0x6000|uint16(ts)&0x0fff)
	}
}

// SwapUUIDv1 reorders a UUIDv1's time fields in place as MySQL's
// UUID_TO_BIN(u, 1) does: time_high and version (bytes 6-7), time_mid
// (4-5), time_low (0-3), then the clock sequence and node unchanged. The
// result sorts in time order, like a UUIDv6 (whose time_low field is split
// differently). b must be 16 bytes.
func SwapUUIDv1(b []byte) {
	var t [8]byte
	copy(t[0:2], b[6:8])
	copy(t[2:4], b[4:6])
	copy(t[4:8], b[0:4])
	copy(b[0:8], t[:])
}
