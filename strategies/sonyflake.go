package strategies

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/sony/sonyflake/v2"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// SonyflakeSettings are the settings of a Sonyflake generator. Every field's
// zero value is Sonyflake's default.
type SonyflakeSettings struct {
	// BitsSequence is the sequence field's width, 1-30. Zero means 8.
	BitsSequence int
	// BitsMachine is the machine field's width, 1-30. Zero means 16. The
	// time field gets 63 - BitsSequence - BitsMachine bits, at least 32.
	BitsMachine int
	// TimeUnit is the tick, at least 1 ms. Zero means 10 ms.
	TimeUnit time.Duration
	// StartTime is the epoch; it must not be in the future. The zero Time
	// means 2025-01-01T00:00:00Z (sonyflake/v2's default). Sonyflake counts
	// ticks from StartTime rounded down to a whole TimeUnit since 1970.
	StartTime time.Time
	// Machine is the machine ID, 0 to 2^BitsMachine-1. Zero is machine 0.
	Machine int
	// Lease, when set, supplies the machine ID (its Identity's WorkerID)
	// in place of Machine, and the IDs come from the Snowflake core on the
	// same layout instead of the sony library: Next fails with
	// idgen.ErrLeaseLost while the lease holds no identity, and a clock
	// behind the last tick meets the core's rollback policy (wait-then-fail,
	// 10 ms) where the library would keep counting on the last tick. Nil
	// means none.
	Lease idgen.Lease
	// HighWater persists a mark ahead of the ticks issued, under a Lease
	// (a PostgreSQL or etcd lease is one). Nil means none.
	HighWater snowflake.HighWaterStore
	// Under a Lease, the core's settings, as in snowflake.Config: the
	// rollback policy (zero: wait-then-fail), its bound (zero: 10 ms), how
	// far ahead the mark is written (zero: 1 s) and the clock (nil: the
	// monotonic system clock). Without a Lease they must be zero.
	Rollback       snowflake.Policy
	MaxWait        time.Duration
	HighWaterAhead time.Duration
	Clock          snowflake.Clock
	// Closer is what the generator owns and Close closes, such as the
	// WorkerSource (package workerid's) that is its Lease; NewSonyflake leaves it open when
	// it fails. Nil means Close does nothing.
	Closer io.Closer
}

// sonyflakeDefaultStart is sonyflake/v2's default StartTime.
var sonyflakeDefaultStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func (s SonyflakeSettings) withDefaults() SonyflakeSettings {
	if s.BitsSequence == 0 {
		s.BitsSequence = 8
	}
	if s.BitsMachine == 0 {
		s.BitsMachine = 16
	}
	if s.TimeUnit == 0 {
		s.TimeUnit = 10 * time.Millisecond
	}
	if s.StartTime.IsZero() {
		s.StartTime = sonyflakeDefaultStart
	}
	return s
}

// Layout returns the Snowflake layout of the settings' IDs:
//
//	 63 62                           sequence + machine    0
//	+--+-------------------------------+----------+---------+
//	|0 | time (63 - seq - machine bits)| sequence | machine |
//	+--+-------------------------------+----------+---------+
//
// with the tick TimeUnit and the epoch StartTime rounded down to a whole
// TimeUnit. Errors wrap ErrSpec and name the setting at fault.
func (s SonyflakeSettings) Layout() (snowflake.Layout, error) {
	s = s.withDefaults()
	switch {
	case s.BitsSequence < 1 || s.BitsSequence > 30:
		return snowflake.Layout{}, specError("", "bits_sequence", strconv.Itoa(s.BitsSequence), fmt.Errorf("%w: sonyflake: bits_sequence %d: want an integer in [1, 30]", ErrSpec, s.BitsSequence))
	case s.BitsMachine < 1 || s.BitsMachine > 30:
		return snowflake.Layout{}, specError("", "bits_machine", strconv.Itoa(s.BitsMachine), fmt.Errorf("%w: sonyflake: bits_machine %d: want an integer in [1, 30]", ErrSpec, s.BitsMachine))
	case s.BitsSequence+s.BitsMachine > 31:
		return snowflake.Layout{}, specError("", "bits_sequence", strconv.Itoa(s.BitsSequence), fmt.Errorf("%w: sonyflake: bits_sequence + bits_machine = %d: want at most 31 (time needs 32 bits)", ErrSpec, s.BitsSequence+s.BitsMachine))
	case s.TimeUnit < time.Millisecond:
		return snowflake.Layout{}, specError("", "time_unit", s.TimeUnit.String(), fmt.Errorf("%w: sonyflake: time_unit %v: want at least 1ms", ErrSpec, s.TimeUnit))
	case s.StartTime.Before(time.Unix(0, 0)):
		return snowflake.Layout{}, specError("", "start_time", s.StartTime.Format(time.RFC3339), fmt.Errorf("%w: sonyflake: start_time %s: want 1970 or later", ErrSpec, s.StartTime.Format(time.RFC3339)))
	}
	unit := int64(s.TimeUnit)
	epoch := time.Unix(0, s.StartTime.UnixNano()/unit*unit).UTC()
	l := snowflake.Layout{
		Fields: []snowflake.LayoutField{
			{Name: snowflake.FieldTime, Bits: 63 - s.BitsSequence - s.BitsMachine},
			{Name: snowflake.FieldSequence, Bits: s.BitsSequence},
			{Name: "machine", Bits: s.BitsMachine},
		},
		Tick:  s.TimeUnit,
		Epoch: epoch,
	}
	if err := l.Validate(); err != nil {
		return snowflake.Layout{}, fmt.Errorf("%w: sonyflake: %w", ErrSpec, err)
	}
	return l, nil
}

var sonyflakeSchemes sync.Map // layout text -> *idgen.Scheme

// SonyflakeScheme returns the scheme of a Sonyflake layout: "sonyflake",
// 8 bytes, decimal text, a PostgreSQL bigint column (Sonyflake IDs are 63
// bits: always positive), fields time, sequence, machine. Its codec is the
// Snowflake core's for the same layout, so snowflake.LayoutOf works on it.
// The same settings always give the same *Scheme.
func SonyflakeScheme(s SonyflakeSettings) (*idgen.Scheme, error) {
	l, err := s.Layout()
	if err != nil {
		return nil, err
	}
	return sonyflakeScheme(l)
}

func sonyflakeScheme(l snowflake.Layout) (*idgen.Scheme, error) {
	key := l.String()
	if s, ok := sonyflakeSchemes.Load(key); ok {
		return s.(*idgen.Scheme), nil
	}
	core, err := snowflake.SchemeOf(l)
	if err != nil {
		return nil, err
	}
	s, _ := sonyflakeSchemes.LoadOrStore(key, &idgen.Scheme{
		Name: "sonyflake", Size: 8, Column: idgen.ColumnBigint, TimeOrdered: true, Codec: core.Codec,
	})
	return s.(*idgen.Scheme), nil
}

func init() {
	register(&Strategy{
		Name: "sonyflake",
		Doc:  "Sonyflake (sony/sonyflake/v2): time, sequence, machine in 63 bits; 8 B, bigint column",
		Keys: append([]Key{
			{"bits_sequence", "sequence bits, 1-30 (default 8)"},
			{"bits_machine", "machine ID bits, 1-30 (default 16); bits_sequence + bits_machine <= 31"},
			{"time_unit", "tick, at least 1ms (default 10ms)"},
			{"start_time", "epoch, not in the future: RFC 3339, a date, or unix ms (default 2025-01-01)"},
			{"machine", "machine ID, 0 to 2^bits_machine-1, or ip: the low 16 bits of the private IPv4 address (default 0); IDGEN_WORKER_ID overrides"},
			{"worker_source", WorkerSourceDoc + "; the machine ID's source: IDs then come from the Snowflake core on the same layout, and the keys below apply (default none: the machine key; refused beside it)"},
		}, coreKeys...),
		Build: func(ctx context.Context, p *Params) (idgen.Generator, error) {
			leased := p.Has("worker_source")
			if err := p.sourceConflict("machine", true); err != nil {
				return nil, err
			}
			s, err := sonyflakeSettings(p, !leased)
			if err != nil {
				return nil, err
			}
			if !leased {
				for _, k := range coreKeys {
					if p.Has(k.Name) {
						return nil, p.bad(k.Name, p.String(k.Name, ""), "worker_source set beside it (without one the sony library issues IDs, with its own clock and no mark)")
					}
				}
				return newSonyflake(ctx, s)
			}
			if err := readCore(p, &s.Clock, &s.Rollback, &s.MaxWait, &s.HighWater, &s.HighWaterAhead); err != nil {
				return nil, err
			}
			g, err := underSource(ctx, p, WorkerSpace{Workers: 1 << s.BitsMachine}, func(src WorkerSource) (*SonyflakeGenerator, error) {
				s.Lease, s.Closer, s.HighWater = src, src, sourceMark(src, s.HighWater)
				return newSonyflake(ctx, s)
			})
			if err != nil {
				return nil, err
			}
			return coreSonyflake{g}, nil
		},
		Scheme: func(p *Params) (*idgen.Scheme, error) {
			s, err := sonyflakeSettings(p, false)
			if err != nil {
				return nil, err
			}
			return SonyflakeScheme(s)
		},
		Keyspace: func(p *Params) (string, error) {
			s, err := sonyflakeSettings(p, false)
			if err != nil {
				return "", err
			}
			l, err := s.Layout()
			if err != nil {
				return "", err
			}
			machine := p.String("machine", "0")
			if p.workerIDSet() {
				machine = p.opts.WorkerID
			}
			return layoutKeyspace(p, l, map[string]string{snowflake.FieldMachine: machine}), nil
		},
	})
}

// sonyflakeSettings reads the spec; machine IDs are resolved only when
// machine is set.
func sonyflakeSettings(p *Params, machine bool) (SonyflakeSettings, error) {
	var s SonyflakeSettings
	seq, err := p.Int("bits_sequence", 8, 1, 30)
	if err != nil {
		return s, err
	}
	mb, err := p.Int("bits_machine", 16, 1, 30)
	if err != nil {
		return s, err
	}
	s.BitsSequence, s.BitsMachine = int(seq), int(mb)
	if s.TimeUnit, err = p.Duration("time_unit", 10*time.Millisecond); err != nil {
		return s, err
	}
	if p.Has("start_time") {
		v := p.String("start_time", "")
		if s.StartTime, err = snowflake.ParseEpoch(v); err != nil {
			return s, p.bad("start_time", v, "RFC 3339 (2025-01-01T00:00:00Z), a date (2025-01-01) or unix ms, 1970 or later")
		}
		if s.StartTime.After(time.Now()) {
			return s, p.bad("start_time", v, "a time not in the future")
		}
	}
	if _, err := s.Layout(); err != nil {
		return s, err
	}
	if !machine {
		return s, nil
	}
	max := uint64(1)<<s.BitsMachine - 1
	if p.String("machine", "") == "ip" && !p.workerIDSet() {
		ip, err := privateIPv4Low16()
		if err != nil {
			return s, p.bad("machine", "ip", "an integer: "+err.Error())
		}
		if ip > max {
			return s, p.bad("machine", "ip", fmt.Sprintf("an address whose low 16 bits fit bits_machine=%d (got %d)", s.BitsMachine, ip))
		}
		s.Machine = int(ip)
		return s, nil
	}
	m, err := nodeID(p, "machine", 0, max)
	if err != nil {
		return s, err
	}
	s.Machine = int(m)
	return s, nil
}

// privateIPv4Low16 is Sonyflake's default machine ID: the low 16 bits of the
// first private (RFC 1918) or link-local IPv4 address.
func privateIPv4Low16() (uint64, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return 0, err
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() {
			continue
		}
		if ip := n.IP.To4(); ip != nil && (ip.IsPrivate() || ip.IsLinkLocalUnicast()) {
			return uint64(ip[2])<<8 | uint64(ip[3]), nil
		}
	}
	return 0, errors.New("no private IPv4 address")
}

// SonyflakeGenerator issues IDs through sony/sonyflake/v2. Next is the
// library's NextID (a mutex; when a tick's sequence is used up it sleeps to
// the next tick; a clock that steps back keeps counting on the last tick).
// Under a Lease, and for NewAt, IDs come from the Snowflake core on the
// equal layout, the sequence starting at 0 in each tick as the library's
// does. Safe for concurrent use.
type SonyflakeGenerator struct {
	closeFlag
	sf     *sonyflake.Sonyflake // nil under a lease
	core   *snowflake.Generator // same layout and machine: NewAt, and Next under a lease
	scheme *idgen.Scheme
}

var (
	_ idgen.Generator   = (*SonyflakeGenerator)(nil)
	_ idgen.AtGenerator = (*SonyflakeGenerator)(nil)
)

// NewSonyflake validates s and returns a generator. Errors wrap ErrSpec or
// idgen.ErrOutOfRange and name the setting at fault; under a Lease, also
// idgen.ErrLeaseLost while it holds no identity, or a HighWater Load error.
func NewSonyflake(s SonyflakeSettings) (*SonyflakeGenerator, error) {
	return newSonyflake(context.Background(), s)
}

func newSonyflake(ctx context.Context, s SonyflakeSettings) (*SonyflakeGenerator, error) {
	s = s.withDefaults()
	l, err := s.Layout()
	if err != nil {
		return nil, err
	}
	if s.Machine < 0 || s.Machine >= 1<<s.BitsMachine {
		return nil, fmt.Errorf("%w: sonyflake: machine %d outside [0, %d]", idgen.ErrOutOfRange, s.Machine, 1<<s.BitsMachine-1)
	}
	if s.StartTime.After(time.Now()) {
		return nil, fmt.Errorf("%w: sonyflake: start_time %s is in the future", ErrSpec, s.StartTime.Format(time.RFC3339))
	}
	scheme, err := sonyflakeScheme(l)
	if err != nil {
		return nil, err
	}
	if s.Lease == nil && (s.HighWater != nil || s.Rollback != 0 || s.MaxWait != 0 || s.HighWaterAhead != 0 || s.Clock != nil) {
		return nil, fmt.Errorf("%w: sonyflake: HighWater, Rollback, MaxWait, HighWaterAhead and Clock apply under a Lease only (the sony library issues without one)", ErrSpec)
	}
	core, err := snowflake.New(ctx, snowflake.Config{Layout: l, Nodes: map[string]int64{"machine": int64(s.Machine)},
		Lease: s.Lease, HighWater: s.HighWater, Rollback: s.Rollback, MaxWait: s.MaxWait,
		HighWaterAhead: s.HighWaterAhead, Clock: s.Clock, Closer: s.Closer})
	if err != nil {
		return nil, fmt.Errorf("sonyflake: %w", err)
	}
	g := &SonyflakeGenerator{core: core, scheme: scheme}
	if s.Lease != nil {
		// The first identity's mark is read before New returns.
		if err := core.SyncLease(ctx); err != nil {
			return nil, fmt.Errorf("sonyflake: %w", err)
		}
		return g, nil
	}
	g.sf, err = sonyflake.New(sonyflake.Settings{
		BitsSequence:  s.BitsSequence,
		BitsMachineID: s.BitsMachine,
		TimeUnit:      s.TimeUnit,
		StartTime:     s.StartTime,
		MachineID:     func() (int, error) { return s.Machine, nil },
	})
	if err != nil {
		return nil, fmt.Errorf("%w: sonyflake: %v", ErrSpec, err)
	}
	return g, nil
}

// Ready reports whether Next can issue now, issuing nothing: under a
// Lease, snowflake.Generator.Ready's answer; else an error wrapping
// idgen.ErrLayoutExhausted once the time field's lifetime has ended.
// /readyz of package httpapi calls it.
func (g *SonyflakeGenerator) Ready(ctx context.Context) error {
	if err := g.core.Ready(ctx); err != nil {
		return fmt.Errorf("sonyflake: %w", err)
	}
	return nil
}

// Close ends the generator: Next and NewAt then return idgen.ErrClosed. It
// closes the settings' Closer, when there is one (releasing a leased
// machine ID). A second Close returns nil.
func (g *SonyflakeGenerator) Close() error {
	g.closeFlag.Close()
	return g.core.Close()
}

// Scheme returns the generator's SonyflakeScheme.
func (g *SonyflakeGenerator) Scheme() *idgen.Scheme { return g.scheme }

// Next returns a new ID. After the time field's lifetime the error wraps
// idgen.ErrLayoutExhausted; after Close it is idgen.ErrClosed.
func (g *SonyflakeGenerator) Next(ctx context.Context) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	if g.sf == nil {
		return g.rescheme(g.core.Next(ctx))
	}
	v, err := g.sf.NextID()
	if err != nil {
		if errors.Is(err, sonyflake.ErrOverTimeLimit) {
			return idgen.ID{}, fmt.Errorf("%w: sonyflake: %v", idgen.ErrLayoutExhausted, err)
		}
		return idgen.ID{}, err
	}
	return g.scheme.FromUint64(uint64(v)), nil
}

// NewAt returns an ID of t's tick, as snowflake.Generator.NewAt does: a
// sequence of its own, t in nondecreasing order.
func (g *SonyflakeGenerator) NewAt(t time.Time) (idgen.ID, error) {
	return g.rescheme(g.core.NewAt(t))
}

// rescheme gives a core ID the sonyflake scheme (the same bits).
func (g *SonyflakeGenerator) rescheme(id idgen.ID, err error) (idgen.ID, error) {
	if err != nil {
		return idgen.ID{}, err
	}
	v, _ := id.Uint64()
	return g.scheme.FromUint64(v), nil
}
