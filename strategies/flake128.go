package strategies

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// Flake128Scheme returns the scheme of Boundary's flake: 16 bytes,
//
//	+--------------------------------+------------------------+------------+
//	| timestamp (64 bits)            | worker (48 bits)       | seq (16)   |
//	| Unix milliseconds              | Boundary: a MAC address|            |
//	+--------------------------------+------------------------+------------+
//
// Its text is 32 lowercase hex digits (parsing accepts uppercase), which
// sort as the bytes do. It is stored in a PostgreSQL uuid column: 16 bytes,
// compared byte by byte, so the time order holds (PostgreSQL also reads the
// 32-digit text as a uuid).
// Every call returns the same *idgen.Scheme (schemes compare by
// pointer); do not modify it.
func Flake128Scheme() *idgen.Scheme { return flake128Scheme }

var flake128Scheme = &idgen.Scheme{Name: "flake128", Size: 16, Column: idgen.ColumnUUID, TimeOrdered: true, Codec: flake128Codec{}}

type flake128Codec struct{}

func (flake128Codec) AppendText(dst, b []byte) []byte { return hex.AppendEncode(dst, b[:16]) }

func (flake128Codec) ParseText(b, text []byte) error {
	if len(text) != 32 {
		return fmt.Errorf("%w: %q is not a flake128 ID (32 hex digits)", idgen.ErrSyntax, text)
	}
	if _, err := hex.Decode(b[:16], text); err != nil {
		var bad hex.InvalidByteError // 32 digits: the only error Decode returns
		errors.As(err, &bad)
		return fmt.Errorf("%w: %q is not a flake128 ID: %q is not a hex digit; want 32 hex digits (0-9, a-f)", idgen.ErrSyntax, text, rune(bad))
	}
	return nil
}

func (flake128Codec) Time(b []byte) time.Time {
	ms := binary.BigEndian.Uint64(b)
	return time.Unix(int64(ms/1000), int64(ms%1000)*int64(time.Millisecond)).UTC()
}

func (flake128Codec) Decompose(b []byte) []idgen.Field {
	return []idgen.Field{
		{Name: "timestamp", Value: binary.BigEndian.Uint64(b[0:8]), Bits: 64},
		{Name: "worker", Value: uint64(binary.BigEndian.Uint16(b[8:10]))<<32 | uint64(binary.BigEndian.Uint32(b[10:14])), Bits: 48},
		{Name: "sequence", Value: uint64(binary.BigEndian.Uint16(b[14:16])), Bits: 16},
	}
}

// flake128Layout is the Snowflake core flake128 runs on: 47 bits of Unix ms
// (to year 6429) and a 16-bit sequence. The worker ID lives outside it.
var flake128Layout = snowflake.Layout{
	Fields: []snowflake.LayoutField{{Name: snowflake.FieldTime, Bits: 47}, {Name: snowflake.FieldSequence, Bits: 16}},
	Tick:   time.Millisecond,
	Epoch:  time.Unix(0, 0).UTC(),
}

// Flake128Config configures a Flake128Generator. Every field's zero value is
// usable.
type Flake128Config struct {
	// WorkerID is the 48-bit worker ID, 0 to 2^48-1; Boundary uses the
	// node's MAC address (see MACWorkerID). Zero is worker 0.
	WorkerID uint64
	// Clock reads the time. Nil means snowflake.SystemClock().
	Clock snowflake.Clock
	// Rollback is the clock rollback policy. Zero means WaitThenFail.
	Rollback snowflake.Policy
	// MaxWait bounds WaitThenFail's wait. Zero means 10 ms.
	MaxWait time.Duration
	// HighWater persists a mark ahead of the ms issued. Nil means none.
	HighWater snowflake.HighWaterStore
	// HighWaterAhead is how far ahead the mark is written. Zero means 1 s.
	HighWaterAhead time.Duration
	// Lease, when set, supplies the worker ID (its Identity's WorkerID,
	// 0 to 2^48-1) in place of WorkerID; Next fails with idgen.ErrLeaseLost
	// while it holds none, and a new identity's high-water mark is read
	// (HighWater.Load) before anything is issued under it. Nil means none.
	Lease idgen.Lease
	// Closer is what the generator owns and Close closes, such as the
	// WorkerSource (package workerid's) that is its Lease; NewFlake128 leaves it open when it
	// fails. Nil means Close does nothing.
	Closer io.Closer
}

// Flake128Generator issues flake128 IDs on the Snowflake core: the time and
// the 16-bit sequence (65,536 IDs per ms) come from a snowflake.Generator's
// lock-free Reserve, with its rollback policies and high-water mark; the
// worker ID sits between them. Safe for concurrent use.
type Flake128Generator struct {
	core   *snowflake.Generator
	worker [6]byte
	lease  idgen.Lease
	node   atomic.Pointer[flake128Node] // under a lease: the identity issued under
}

// flake128Node is the worker ID bytes of one lease identity.
type flake128Node struct {
	ident  *idgen.Identity
	worker [6]byte
}

func worker48(id uint64) (b [6]byte) {
	binary.BigEndian.PutUint16(b[0:2], uint16(id>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(id))
	return b
}

var (
	_ idgen.Generator     = (*Flake128Generator)(nil)
	_ idgen.Batcher       = (*Flake128Generator)(nil)
	_ idgen.AtGenerator   = (*Flake128Generator)(nil)
	_ idgen.StatsReporter = (*Flake128Generator)(nil)
)

// NewFlake128 validates cfg and returns a generator. A worker ID above
// 2^48-1 wraps idgen.ErrOutOfRange; a HighWater store is read first.
func NewFlake128(ctx context.Context, cfg Flake128Config) (*Flake128Generator, error) {
	if cfg.WorkerID >= 1<<48 {
		return nil, fmt.Errorf("%w: flake128: worker %d outside [0, %d] (48 bits)", idgen.ErrOutOfRange, cfg.WorkerID, uint64(1<<48-1))
	}
	// Under a lease the core checks the identity and reads its mark; its
	// layout has no worker field, so the worker ID itself is set here.
	core, err := snowflake.New(ctx, snowflake.Config{
		Layout: flake128Layout, Clock: cfg.Clock, Rollback: cfg.Rollback, MaxWait: cfg.MaxWait,
		HighWater: cfg.HighWater, HighWaterAhead: cfg.HighWaterAhead, Lease: cfg.Lease, Closer: cfg.Closer,
	})
	if err != nil {
		return nil, fmt.Errorf("flake128: %w", err)
	}
	g := &Flake128Generator{core: core, worker: worker48(cfg.WorkerID), lease: cfg.Lease}
	if g.lease != nil {
		if _, err := g.nodeWorker(ctx, false); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// nodeWorker returns the worker ID bytes to issue under: the lease's
// identity's, or the configured one. A new identity goes through the
// core's SyncLease, which reads the identity's high-water mark before
// anything is issued under it.
func (g *Flake128Generator) nodeWorker(ctx context.Context, sync bool) (*[6]byte, error) {
	if g.lease == nil {
		return &g.worker, nil
	}
	ident := g.lease.Identity()
	if ident == nil {
		return nil, fmt.Errorf("%w: flake128: no ID is issued until the worker ID is reacquired", idgen.ErrLeaseLost)
	}
	if n := g.node.Load(); n != nil && n.ident == ident {
		return &n.worker, nil
	}
	if ident.WorkerID < 0 || ident.WorkerID >= 1<<48 {
		return nil, fmt.Errorf("%w: flake128: leased worker %d outside [0, %d] (48 bits)", idgen.ErrOutOfRange, ident.WorkerID, uint64(1<<48-1))
	}
	if sync {
		if err := g.core.SyncLease(ctx); err != nil {
			return nil, err
		}
	}
	n := &flake128Node{ident: ident, worker: worker48(uint64(ident.WorkerID))}
	g.node.Store(n)
	return &n.worker, nil
}

// Ready reports whether Next can issue now, issuing nothing; its errors
// are snowflake.Generator.Ready's. /readyz of package httpapi calls it.
func (g *Flake128Generator) Ready(ctx context.Context) error {
	if _, err := g.nodeWorker(ctx, true); err != nil {
		return err
	}
	return g.core.Ready(ctx)
}

// Stats returns the Snowflake core's Stats (snowflake.Generator.Stats):
// its clock and counters (idgen.StatsClock; LayoutEnd is the 47-bit time
// field's end, in the year 6429) and, under a lease renewed against a
// store, the lease's status (idgen.StatsLease).
func (g *Flake128Generator) Stats() idgen.Stats { return g.core.Stats() }

// Close ends the generator, as snowflake.Generator.Close does: Next, NextN
// and NewAt then return idgen.ErrClosed. It closes the config's Closer,
// when there is one (releasing a leased worker ID).
func (g *Flake128Generator) Close() error { return g.core.Close() }

// Scheme returns Flake128Scheme().
func (g *Flake128Generator) Scheme() *idgen.Scheme { return Flake128Scheme() }

func (g *Flake128Generator) compose(tick int64, seq uint64, worker *[6]byte) idgen.ID {
	var b [16]byte
	binary.BigEndian.PutUint64(b[0:8], uint64(tick)) // the core's epoch is 1970: ticks are Unix ms
	copy(b[8:14], worker[:])
	binary.BigEndian.PutUint16(b[14:16], uint16(seq))
	id, _ := Flake128Scheme().FromBytes(b[:])
	return id
}

// Next returns a new ID; errors are snowflake.Generator.Next's.
func (g *Flake128Generator) Next(ctx context.Context) (idgen.ID, error) {
	w, err := g.nodeWorker(ctx, true)
	if err != nil {
		return idgen.ID{}, err
	}
	tick, seq, _, err := g.core.Reserve(ctx, 1)
	if err != nil {
		return idgen.ID{}, err
	}
	return g.compose(tick, seq, w), nil
}

// NextN fills dst with increasing IDs, a tick's sequence range per
// compare-and-swap.
func (g *Flake128Generator) NextN(ctx context.Context, dst []idgen.ID) (int, error) {
	i := 0
	for i < len(dst) {
		w, err := g.nodeWorker(ctx, true)
		if err != nil {
			return i, err
		}
		tick, seq, n, err := g.core.Reserve(ctx, uint64(len(dst)-i))
		if err != nil {
			return i, err
		}
		for k := range n {
			dst[i] = g.compose(tick, seq+k, w)
			i++
		}
	}
	return i, nil
}

// NewAt returns an ID of t's Unix millisecond, as snowflake.Generator.NewAt
// does: a sequence of its own, t in nondecreasing order, t from 1970.
func (g *Flake128Generator) NewAt(t time.Time) (idgen.ID, error) {
	w, err := g.nodeWorker(context.Background(), true)
	if err != nil {
		return idgen.ID{}, err
	}
	tick, seq, err := g.core.ReserveAt(t)
	if err != nil {
		return idgen.ID{}, err
	}
	return g.compose(tick, seq, w), nil
}

// MACWorkerID returns Boundary's worker ID: the 48-bit hardware address of
// the first network interface that is up, not loopback, and has one.
func MACWorkerID() (uint64, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return 0, err
	}
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 || len(i.HardwareAddr) != 6 {
			continue
		}
		var b [8]byte
		copy(b[2:], i.HardwareAddr)
		return binary.BigEndian.Uint64(b[:]), nil
	}
	return 0, errors.New("flake128: no network interface with a 48-bit MAC address")
}

func init() {
	register(&Strategy{
		Name: "flake128",
		Doc:  "Boundary's 128-bit flake: 64-bit Unix ms, 48-bit worker, 16-bit sequence; 16 B, uuid column; on the Snowflake core",
		Keys: append([]Key{
			{"worker", "48-bit worker ID, 0 to 281474976710655, or mac: the first interface's MAC address (default 0); IDGEN_WORKER_ID overrides"},
			{"worker_source", WorkerSourceDoc + " (default none: the worker key; refused beside it)"},
		}, coreKeys...),
		Build: func(ctx context.Context, p *Params) (idgen.Generator, error) {
			if err := p.sourceConflict("worker", true); err != nil {
				return nil, err
			}
			cfg, err := flake128Config(p)
			if err != nil {
				return nil, err
			}
			if !p.Has("worker_source") {
				return NewFlake128(ctx, cfg)
			}
			g, err := underSource(ctx, p, WorkerSpace{Workers: 1 << 48}, func(src WorkerSource) (*Flake128Generator, error) {
				cfg.Lease, cfg.Closer, cfg.HighWater = src, src, sourceMark(src, cfg.HighWater)
				return NewFlake128(ctx, cfg)
			})
			if err != nil {
				return nil, err
			}
			return g, nil
		},
		Scheme: func(*Params) (*idgen.Scheme, error) { return Flake128Scheme(), nil },
		Keyspace: func(p *Params) (string, error) {
			worker := p.String("worker", "0")
			if p.workerIDSet() {
				worker = p.opts.WorkerID
			}
			if p.Has("worker_source") {
				src, leased := p.sourceNode()
				if leased {
					return "", nil
				}
				worker = src
			}
			return "flake128, worker " + canonicalNode(worker), nil
		},
	})
}

func flake128Config(p *Params) (Flake128Config, error) {
	var cfg Flake128Config
	var err error
	if p.String("worker", "") == "mac" && !p.workerIDSet() {
		if cfg.WorkerID, err = MACWorkerID(); err != nil {
			return cfg, p.bad("worker", "mac", "an integer: "+err.Error())
		}
	} else if cfg.WorkerID, err = nodeID(p, "worker", 0, 1<<48-1); err != nil {
		return cfg, err
	}
	if err := readCore(p, &cfg.Clock, &cfg.Rollback, &cfg.MaxWait, &cfg.HighWater, &cfg.HighWaterAhead); err != nil {
		return cfg, err
	}
	return cfg, nil
}
