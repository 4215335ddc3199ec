package strategies

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/rs/xid"

	"github.com/idgenkit/idgen"
)

// XIDScheme returns the scheme of rs/xid's ID, the MongoDB ObjectID layout:
// 12 bytes,
//
//	+-------------------+-------------+---------+---------------+
//	| time (32 bits)    | machine (24)| pid (16)| counter (24)  |
//	| Unix seconds      |             |         |               |
//	+-------------------+-------------+---------+---------------+
//
// Its text is 20 chars of base32hex (0-9a-v, lowercase), which sorts as the
// bytes do. It is stored in a PostgreSQL bytea column (byte order = time
// order). IDs are k-sorted by second: the counter is process-wide, starts at
// a random value and wraps at 2^24, so IDs of one second need not increase.
// Every call returns the same *idgen.Scheme (schemes compare by
// pointer); do not modify it.
func XIDScheme() *idgen.Scheme { return xidScheme }

var xidScheme = &idgen.Scheme{Name: "xid", Size: 12, Column: idgen.ColumnBytea, TimeOrdered: true, Codec: xidCodec{}}

type xidCodec struct{}

func (xidCodec) AppendText(dst, b []byte) []byte {
	var x xid.ID
	copy(x[:], b)
	var buf [20]byte
	return append(dst, x.Encode(buf[:])...)
}

func (xidCodec) ParseText(b, text []byte) error {
	var x xid.ID
	if err := x.UnmarshalText(text); err != nil {
		return fmt.Errorf("%w: %q is not an xid (20 chars of base32hex 0-9a-v)", idgen.ErrSyntax, text)
	}
	copy(b, x[:])
	return nil
}

func (xidCodec) Time(b []byte) time.Time {
	return time.Unix(int64(binary.BigEndian.Uint32(b)), 0).UTC()
}

func (xidCodec) Decompose(b []byte) []idgen.Field {
	return []idgen.Field{
		{Name: "time", Value: uint64(binary.BigEndian.Uint32(b[0:4])), Bits: 32},
		{Name: "machine", Value: uint64(b[4])<<16 | uint64(b[5])<<8 | uint64(b[6]), Bits: 24},
		{Name: "pid", Value: uint64(binary.BigEndian.Uint16(b[7:9])), Bits: 16},
		{Name: "counter", Value: uint64(b[9])<<16 | uint64(b[10])<<8 | uint64(b[11]), Bits: 24},
	}
}

func init() {
	register(&Strategy{
		Name: "xid",
		Doc:  "xid (MongoDB ObjectID layout), 32-bit Unix s + machine + pid + counter, 12 B, bytea column; rs/xid",
		Keys: []Key{{"machine", "24-bit machine ID, 0 to 16777215 (default: rs/xid's, from the host ID); IDGEN_WORKER_ID overrides"}},
		Build: func(_ context.Context, p *Params) (idgen.Generator, error) {
			return xidFromParams(p)
		},
		Scheme: func(*Params) (*idgen.Scheme, error) { return XIDScheme(), nil },
	})
}

func xidFromParams(p *Params) (*XIDGenerator, error) {
	const none = math.MaxUint64
	m, err := nodeID(p, "machine", none, 1<<24-1)
	if err != nil {
		return nil, err
	}
	if m == none {
		return NewXID(-1), nil
	}
	return NewXID(int32(m)), nil
}

// XIDGenerator issues xids through rs/xid. Safe for concurrent use.
type XIDGenerator struct {
	closeFlag
	// Clock gives Next its time. Nil means the system clock
	// (idgen.SystemClock). Set it before the first Next.
	Clock idgen.Clock

	machine int32 // 24-bit machine ID in place of rs/xid's; -1 keeps rs/xid's
}

var (
	_ idgen.Generator   = (*XIDGenerator)(nil)
	_ idgen.AtGenerator = (*XIDGenerator)(nil)
)

// NewXID returns an xid generator. A machine ID in [0, 2^24) replaces the
// one rs/xid derives from the host ID; a negative one keeps rs/xid's.
func NewXID(machine int32) *XIDGenerator {
	if machine >= 1<<24 {
		machine = -1
	}
	return &XIDGenerator{machine: machine}
}

// Scheme returns XIDScheme().
func (g *XIDGenerator) Scheme() *idgen.Scheme { return XIDScheme() }

// Next returns a new xid. It fails only after Close (idgen.ErrClosed).
func (g *XIDGenerator) Next(context.Context) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	return g.id(xid.NewWithTime(idgen.ClockOr(g.Clock).Now())), nil
}

// id places the machine ID, if set, and builds the ID without a copy.
func (g *XIDGenerator) id(x xid.ID) idgen.ID {
	if g.machine >= 0 {
		x[4], x[5], x[6] = byte(g.machine>>16), byte(g.machine>>8), byte(g.machine)
	}
	return XIDScheme().FromWords(binary.BigEndian.Uint64(x[0:8]), uint64(binary.BigEndian.Uint32(x[8:12]))<<32, 0)
}

// NewAt returns an xid of t's Unix second; the process-wide counter keeps
// IDs unique in any call order (up to 2^24 IDs per second). t must lie in
// [1970, 2106); otherwise the error wraps idgen.ErrBeforeEpoch or
// idgen.ErrLayoutExhausted.
func (g *XIDGenerator) NewAt(t time.Time) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	switch s := t.Unix(); {
	case s < 0:
		return idgen.ID{}, fmt.Errorf("%w: %s is before 1970, the start of xid's 32-bit seconds", idgen.ErrBeforeEpoch, t.UTC().Format(time.RFC3339))
	case s > math.MaxUint32:
		return idgen.ID{}, fmt.Errorf("%w: %s is past the end of xid's 32-bit seconds (2106-02-07)", idgen.ErrLayoutExhausted, t.UTC().Format(time.RFC3339))
	}
	return g.id(xid.NewWithTime(t)), nil
}
