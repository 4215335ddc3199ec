package strategies

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/oklog/ulid/v2"

	"github.com/idgenkit/idgen"
)

// ULIDScheme returns the scheme of the ULID (github.com/ulid/spec): 16
// bytes,
//
//	 0                   1                   2                   3
//	+---------------------------------------------------------------+
//	|                      unix_ts_ms (48 bits)                     |
//	+-------------------------------+-------------------------------+
//	|          unix_ts_ms           |      rand_hi (16 bits)        |
//	+-------------------------------+-------------------------------+
//	|                      rand_lo (64 bits)                        |
//	+---------------------------------------------------------------+
//	|                           rand_lo                             |
//	+---------------------------------------------------------------+
//
// Its text is 26 chars of Crockford base32 (uppercase; parsing accepts
// lowercase). It is stored in a PostgreSQL uuid column: the same 128 bits
// (see ULIDToUUID), compared byte by byte, so the time order holds there.
// Every call returns the same *idgen.Scheme (schemes compare by
// pointer); do not modify it.
func ULIDScheme() *idgen.Scheme { return ulidScheme }

var ulidScheme = &idgen.Scheme{Name: "ulid", Size: 16, Column: idgen.ColumnUUID, TimeOrdered: true, Codec: ulidCodec{}}

type ulidCodec struct{}

func (ulidCodec) AppendText(dst, b []byte) []byte {
	var u ulid.ULID
	copy(u[:], b)
	var buf [ulid.EncodedSize]byte
	_ = u.MarshalTextTo(buf[:])
	return append(dst, buf[:]...)
}

// crockford is Crockford's base32 alphabet; ulidForm, a ULID's text form.
const (
	crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	ulidForm  = "26 chars of 0-9 and A-Z without I, L, O, U"
)

func (ulidCodec) ParseText(b, text []byte) error {
	u, err := ulid.ParseStrict(string(text))
	switch {
	case errors.Is(err, ulid.ErrOverflow):
		return fmt.Errorf("%w: ULID %q exceeds 128 bits (first char must be 0-7)", idgen.ErrOutOfRange, text)
	case errors.Is(err, ulid.ErrInvalidCharacters):
		i := bytes.IndexFunc(text, func(r rune) bool { return !strings.ContainsRune(crockford, unicode.ToUpper(r)) })
		return fmt.Errorf("%w: %s is not a ULID: %q is not Crockford base32; want %s", idgen.ErrSyntax, quote(string(text)), text[max(i, 0)], ulidForm)
	case err != nil:
		return fmt.Errorf("%w: %s is not a ULID: want %s", idgen.ErrSyntax, quote(string(text)), ulidForm)
	}
	copy(b, u[:])
	return nil
}

func (ulidCodec) Time(b []byte) time.Time { return time.UnixMilli(int64(uint48(b))).UTC() }

func (ulidCodec) Decompose(b []byte) []idgen.Field {
	return []idgen.Field{
		{Name: "unix_ts_ms", Value: uint48(b), Bits: 48},
		{Name: "rand_hi", Value: uint64(binary.BigEndian.Uint16(b[6:8])), Bits: 16},
		{Name: "rand_lo", Value: binary.BigEndian.Uint64(b[8:16]), Bits: 64},
	}
}

func init() {
	register(&Strategy{
		Name:   "ulid",
		Doc:    "ULID, 48-bit Unix ms + 80 bits of monotonic crypto/rand entropy, 16 B, uuid column; oklog/ulid",
		Build:  func(context.Context, *Params) (idgen.Generator, error) { return NewULID(), nil },
		Scheme: func(*Params) (*idgen.Scheme, error) { return ULIDScheme(), nil },
	})
}

// ULIDGenerator issues ULIDs through oklog/ulid with monotonic entropy:
// within one millisecond each ULID is the previous one plus a random
// increment in [1, 2^32), so IDs increase strictly within the generator.
// The entropy is a per-generator ChaCha8 stream (math/rand/v2's
// cryptographically strong generator) seeded from crypto/rand, where
// ulid.Make uses a math/rand source seeded with the time. A clock that steps
// back is ignored: IDs keep the last millisecond until it catches up.
// Safe for concurrent use.
type ULIDGenerator struct {
	closeFlag
	// Clock gives Next and NextN their time. Nil means the system clock
	// (idgen.SystemClock). Set it before the first Next.
	Clock idgen.Clock

	mu     sync.Mutex
	last   uint64 // ms of the last ULID Next issued
	mono   *ulid.MonotonicEntropy
	atMono *ulid.MonotonicEntropy // NewAt's, so it never resets Next's
	// scratch is where Next composes: ulid.New's own ULID escapes through
	// the entropy reader's interface, one heap allocation per ID.
	scratch ulid.ULID
}

var (
	_ idgen.Generator   = (*ULIDGenerator)(nil)
	_ idgen.Batcher     = (*ULIDGenerator)(nil)
	_ idgen.AtGenerator = (*ULIDGenerator)(nil)
)

// NewULID returns a ULID generator.
func NewULID() *ULIDGenerator {
	// The sources implement Int63n, which MonotonicEntropy uses for its
	// increments; mu guards them.
	return &ULIDGenerator{mono: ulid.Monotonic(newChaChaSource(), 0), atMono: ulid.Monotonic(newChaChaSource(), 0)}
}

// Scheme returns ULIDScheme().
func (g *ULIDGenerator) Scheme() *idgen.Scheme { return ULIDScheme() }

// Next returns a new ULID. It fails only past the year 10889
// (idgen.ErrLayoutExhausted) and after Close (idgen.ErrClosed).
func (g *ULIDGenerator) Next(context.Context) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	ms := ulid.Timestamp(idgen.ClockOr(g.Clock).Now())
	g.mu.Lock()
	u, err := g.nextLocked(ms)
	g.mu.Unlock()
	if err != nil {
		return idgen.ID{}, err
	}
	return ULIDScheme().FromBytes(u[:])
}

// NextN fills dst with increasing ULIDs under one lock.
func (g *ULIDGenerator) NextN(_ context.Context, dst []idgen.ID) (int, error) {
	if err := g.check(); err != nil {
		return 0, err
	}
	ms := ulid.Timestamp(idgen.ClockOr(g.Clock).Now())
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range dst {
		u, err := g.nextLocked(ms)
		if err != nil {
			return i, err
		}
		dst[i], _ = ULIDScheme().FromBytes(u[:])
	}
	return len(dst), nil
}

// nextLocked issues the ULID after the last one, at ms or later.
func (g *ULIDGenerator) nextLocked(ms uint64) (ulid.ULID, error) {
	ms = max(ms, g.last)
	err := g.compose(ms)
	if errors.Is(err, ulid.ErrMonotonicOverflow) {
		ms++ // 2^80 entropy used up within one ms: borrow the next
		err = g.compose(ms)
	}
	if err != nil {
		return ulid.ULID{}, fmt.Errorf("%w: ulid: %v", idgen.ErrLayoutExhausted, err)
	}
	g.last = ms
	return g.scratch, nil
}

// compose is ulid.New(ms, g.mono) into g.scratch.
func (g *ULIDGenerator) compose(ms uint64) error {
	if err := g.scratch.SetTime(ms); err != nil {
		return err
	}
	return g.mono.MonotonicRead(ms, g.scratch[6:])
}

// NewAt returns a ULID of t's Unix millisecond. Calls for the same
// millisecond increase monotonically; otherwise the entropy is fresh, so IDs
// are unique in probability in any call order. t must lie in
// [1970, 10889); otherwise the error wraps idgen.ErrBeforeEpoch or
// idgen.ErrLayoutExhausted.
func (g *ULIDGenerator) NewAt(t time.Time) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	ms, err := unixMilli48(t)
	if err != nil {
		return idgen.ID{}, err
	}
	g.mu.Lock()
	u, err := ulid.New(ms, g.atMono)
	if errors.Is(err, ulid.ErrMonotonicOverflow) {
		_, err = io.ReadFull(g.atMono.Reader, u[6:]) // fresh entropy: unique in probability
	}
	g.mu.Unlock()
	if err != nil {
		return idgen.ID{}, fmt.Errorf("ulid: %w", err)
	}
	return ULIDScheme().FromBytes(u[:])
}
