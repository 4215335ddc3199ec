package strategies

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"time"

	"github.com/segmentio/ksuid"

	"github.com/idgenkit/idgen"
)

// ksuidEpoch is KSUID's epoch, 2014-05-13T16:53:20Z, in Unix seconds.
const ksuidEpoch = 1400000000

// KSUIDScheme returns the scheme of Segment's KSUID: 20 bytes,
//
//	+----------------------+------------------------------------------+
//	| timestamp (32 bits)  | payload_hi (64 bits) | payload_lo (64)   |
//	| s since 2014-05-13   |         128 bits of payload              |
//	+----------------------+------------------------------------------+
//
// Its text is 27 chars of base62 (0-9A-Za-z), which sorts as the bytes do.
// PostgreSQL has no 20-byte type: it is stored in a bytea column, which
// compares byte by byte and so keeps the time order.
// Every call returns the same *idgen.Scheme (schemes compare by
// pointer); do not modify it.
func KSUIDScheme() *idgen.Scheme { return ksuidScheme }

var ksuidScheme = &idgen.Scheme{Name: "ksuid", Size: 20, Column: idgen.ColumnBytea, TimeOrdered: true, Codec: ksuidCodec{}}

type ksuidCodec struct{}

func (ksuidCodec) AppendText(dst, b []byte) []byte {
	var k ksuid.KSUID
	copy(k[:], b)
	return k.Append(dst)
}

func (ksuidCodec) ParseText(b, text []byte) error {
	if len(text) != 27 {
		return fmt.Errorf("%w: %q is not a KSUID (27 base62 chars)", idgen.ErrSyntax, text)
	}
	for _, c := range text {
		if !isBase62(c) {
			return fmt.Errorf("%w: %q is not a KSUID: %q is not base62 (0-9A-Za-z)", idgen.ErrSyntax, text, c)
		}
	}
	k, err := ksuid.Parse(string(text))
	if err != nil {
		return fmt.Errorf("%w: KSUID %q exceeds 160 bits (max aWgEPTl1tmebfsQzFP4bxwgy80V)", idgen.ErrOutOfRange, text)
	}
	copy(b, k[:])
	return nil
}

func isBase62(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}

func (ksuidCodec) Time(b []byte) time.Time {
	return time.Unix(int64(binary.BigEndian.Uint32(b))+ksuidEpoch, 0).UTC()
}

func (ksuidCodec) Decompose(b []byte) []idgen.Field {
	return []idgen.Field{
		{Name: "timestamp", Value: uint64(binary.BigEndian.Uint32(b[0:4])), Bits: 32},
		{Name: "payload_hi", Value: binary.BigEndian.Uint64(b[4:12]), Bits: 64},
		{Name: "payload_lo", Value: binary.BigEndian.Uint64(b[12:20]), Bits: 64},
	}
}

func init() {
	register(&Strategy{
		Name: "ksuid",
		Doc:  "KSUID, 32-bit seconds since 2014-05-13 + 128-bit payload, 20 B, bytea column; segmentio/ksuid",
		Keys: []Key{{"monotonic", "within a second, payload = previous + random [1, 2^32]: strictly increasing (default true); false: random payload, k-sorted by second"}},
		Build: func(_ context.Context, p *Params) (idgen.Generator, error) {
			mono, err := p.Bool("monotonic", true)
			if err != nil {
				return nil, err
			}
			return NewKSUID(mono), nil
		},
		Scheme: func(*Params) (*idgen.Scheme, error) { return KSUIDScheme(), nil },
	})
}

// KSUIDGenerator issues KSUIDs. With monotonic set (the default of the
// "ksuid" strategy), the payload of each KSUID within one second is the
// previous one plus a random increment in [1, 2^32], as ULID's monotonic
// entropy does, so IDs increase strictly within the generator; otherwise
// each payload is 128 fresh random bits (ksuid.New), and IDs are only
// k-sorted by second. Random bytes come from a per-generator buffer of
// crypto/rand instead of a crypto/rand read per ID under ksuid's global
// mutex. A clock that steps back is ignored: IDs keep the last second until
// it catches up. Safe for concurrent use.
type KSUIDGenerator struct {
	closeFlag
	// Clock gives Next its time. Nil means the system clock
	// (idgen.SystemClock). Set it before the first Next.
	Clock idgen.Clock

	monotonic bool
	ent       *entropy

	mu     sync.Mutex // guards the monotonic state and ent's buffer
	used   bool
	ts     uint32 // KSUID timestamp of the last ID
	hi, lo uint64 // its payload
}

var (
	_ idgen.Generator   = (*KSUIDGenerator)(nil)
	_ idgen.AtGenerator = (*KSUIDGenerator)(nil)
)

// NewKSUID returns a KSUID generator; see KSUIDGenerator for monotonic.
func NewKSUID(monotonic bool) *KSUIDGenerator {
	return &KSUIDGenerator{monotonic: monotonic, ent: newEntropy()}
}

// Scheme returns KSUIDScheme().
func (g *KSUIDGenerator) Scheme() *idgen.Scheme { return KSUIDScheme() }

// ksuidTimestamp returns t as a KSUID timestamp.
func ksuidTimestamp(t time.Time) (uint32, error) {
	s := t.Unix() - ksuidEpoch
	switch {
	case s < 0:
		return 0, fmt.Errorf("%w: %s is before the KSUID epoch 2014-05-13T16:53:20Z", idgen.ErrBeforeEpoch, t.UTC().Format(time.RFC3339))
	case s > math.MaxUint32:
		return 0, fmt.Errorf("%w: %s is past the end of KSUID's 32-bit seconds (2150-06-19)", idgen.ErrLayoutExhausted, t.UTC().Format(time.RFC3339))
	}
	return uint32(s), nil
}

// Next returns a new KSUID. Errors: idgen.ErrBeforeEpoch or
// idgen.ErrLayoutExhausted when the clock is outside 2014-2150;
// idgen.ErrClosed after Close.
func (g *KSUIDGenerator) Next(context.Context) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	now := idgen.ClockOr(g.Clock).Now()
	ts, err := ksuidTimestamp(now)
	if err != nil {
		return idgen.ID{}, err
	}
	var payload [16]byte
	if !g.monotonic {
		g.mu.Lock()
		g.ent.fillLocked(payload[:])
		g.mu.Unlock()
		k, err := ksuid.FromParts(now, payload[:])
		if err != nil {
			return idgen.ID{}, err
		}
		return KSUIDScheme().FromBytes(k[:])
	}
	g.mu.Lock()
	if g.used && ts <= g.ts {
		var inc [4]byte
		g.ent.fillLocked(inc[:])
		var carry uint64
		g.lo, carry = bits.Add64(g.lo, 1+uint64(binary.BigEndian.Uint32(inc[:])), 0)
		g.hi, carry = bits.Add64(g.hi, 0, carry)
		g.ts += uint32(carry) // payload wrapped: borrow the next second, as ksuid.Next does
	} else {
		g.ent.fillLocked(payload[:])
		g.used, g.ts = true, ts
		g.hi, g.lo = binary.BigEndian.Uint64(payload[0:8]), binary.BigEndian.Uint64(payload[8:16])
	}
	var b [20]byte
	binary.BigEndian.PutUint32(b[0:4], g.ts)
	binary.BigEndian.PutUint64(b[4:12], g.hi)
	binary.BigEndian.PutUint64(b[12:20], g.lo)
	g.mu.Unlock()
	return KSUIDScheme().FromBytes(b[:])
}

// NewAt returns a KSUID of t's second with a random 128-bit payload: unique
// in probability in any call order. t must lie in [2014-05-13T16:53:20Z,
// 2150-06-19); otherwise the error wraps idgen.ErrBeforeEpoch or
// idgen.ErrLayoutExhausted.
func (g *KSUIDGenerator) NewAt(t time.Time) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	if _, err := ksuidTimestamp(t); err != nil {
		return idgen.ID{}, err
	}
	var payload [16]byte
	g.mu.Lock()
	g.ent.fillLocked(payload[:])
	g.mu.Unlock()
	k, err := ksuid.FromParts(t, payload[:])
	if err != nil {
		return idgen.ID{}, err
	}
	return KSUIDScheme().FromBytes(k[:])
}
