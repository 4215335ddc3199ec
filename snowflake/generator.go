package snowflake

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
)

// Config configures a Generator. Every field's zero value is usable.
type Config struct {
	// Layout is the bit layout. Zero (no fields) means the "default" preset.
	Layout Layout
	// Nodes holds the node field values by name ("datacenter", "worker",
	// ...). A field of the layout that is missing here is 0; a name the
	// layout lacks, or a value outside [0, 2^bits-1], is refused by New.
	Nodes map[string]int64
	// Lease, when set, supplies the worker ID (the Layout.WorkerField:
	// worker, else machine, process, shard, region or datacenter) and the
	// datacenter ID (unless datacenter is the worker field), overriding
	// Nodes for those fields. Next fails with idgen.ErrLeaseLost while the
	// lease returns no identity, and follows a new identity when the lease
	// is reacquired. Nil means none.
	Lease idgen.Lease
	// Clock reads the time. Nil means SystemClock().
	Clock Clock
	// Rollback is the clock rollback policy. Zero means WaitThenFail.
	Rollback Policy
	// MaxWait bounds WaitThenFail's wait. Zero means DefaultMaxWait (10 ms).
	MaxWait time.Duration
	// MaxAhead bounds how far ahead of the clock Hold issues: no tick
	// starting later than the clock's reading plus MaxAhead. Zero means
	// DefaultMaxAhead (10 s). Other policies ignore it.
	MaxAhead time.Duration
	// RandomSequenceStart starts each tick's sequence at a random offset in
	// [0, 2^sequence/8) instead of 0, so that id % n stays even at low
	// rates. It costs up to an eighth of a tick's capacity.
	RandomSequenceStart bool
	// HighWater persists a mark ahead of the ticks issued. Nil means none:
	// a restart behind the last ID issued then goes unnoticed.
	HighWater HighWaterStore
	// HighWaterAhead is how far ahead of the current tick the mark is
	// written; one synchronous Store per HighWaterAhead of issuing. A
	// restart within HighWaterAhead of the last ID meets the rollback
	// policy until the clock passes the mark. Zero means 1 s.
	HighWaterAhead time.Duration
	// Closer is what the generator owns and Close closes, such as the
	// workerid.Source that is its Lease; New leaves it open when it fails.
	// Nil means Close does nothing.
	Closer io.Closer
}

// A Generator issues Snowflake-family IDs of one layout. It is safe for
// concurrent use and lock-free: a tick and its sequence live in one atomic
// word. Next takes a sequence number with one atomic add while the clock is
// in the word's tick; a new tick is entered by compare-and-swap.
type Generator struct {
	_ [64]byte
	// state is the last tick << sShift | a counter of the tick's sequence
	// numbers taken. The counter has guard bits above the sequence field,
	// so that atomic adds past the sequence's end never carry into the tick:
	// each add claims one distinct value, and a value past the sequence is
	// simply not used. A layout with a clockseq field keeps its value
	// above the tick (at csShift), so that a bump moves both at once.
	state atomic.Uint64
	_     [56]byte

	p         *plan
	scheme    *idgen.Scheme
	clock     Clock
	nanoClock interface{ UnixNano() int64 }
	node      atomic.Pointer[nodeState]
	nodes     map[string]int64 // Config.Nodes, the base under a lease's identity
	lease     idgen.Lease
	closer    io.Closer
	policy    Policy
	maxWait   time.Duration
	maxAhead  int64  // Hold's bound in ns
	seqRange  uint64 // random starts are drawn in [0, seqRange); 0 means start at 0
	unbounded bool   // a random field and no sequence: any number of IDs per tick
	fast      bool   // Next may take the fast path: a sequence and no random field
	addPath   bool   // the fast path takes a sequence number by atomic add (guard bits allow it)
	sShift    uint   // state's tick shift: sequence bits + guard bits
	csShift   uint   // state's clockseq shift: sShift + time bits
	cMask     uint64 // state's counter mask
	coarse    *CoarseClock

	at atState // NewAt's own sequence

	// counters, touched only on the slow paths
	seqWaits, rollbackWaits, rollbackFailures, bumps, stalls atomic.Uint64

	// The stall watch: the last clock reading of the slow path, and the
	// time (monotonic ns since monoBase, 0 for none) it was first seen
	// again; stallCounted once that reading counted a stall.
	stallNs, stallSince atomic.Int64
	stallCounted        atomic.Bool

	hw         HighWaterStore
	hwMu       sync.Mutex
	adopted    atomic.Pointer[adoptedMark] // the last lease mark that moved the state
	markTick   atomic.Int64                // ticks >= markTick need a new mark first
	loadedMark atomic.Int64                // unix ns of the mark read at start or at a new identity; 0: none
	aheadTicks int64
}

var _ idgen.Generator = (*Generator)(nil)
var _ idgen.Batcher = (*Generator)(nil)
var _ idgen.StatsReporter = (*Generator)(nil)
var _ idgen.Readier = (*Generator)(nil)

// New validates cfg and returns a Generator. With a HighWater store it reads
// the mark first. Errors name the field or value at fault: a node value out
// of range wraps idgen.ErrOutOfRange, a bad layout ErrInvalidLayout.
func New(ctx context.Context, cfg Config) (*Generator, error) {
	if len(cfg.Layout.Fields) == 0 {
		cfg.Layout, _ = Preset("default")
	}
	p, err := cfg.Layout.compile()
	if err != nil {
		return nil, err
	}
	g := &Generator{p: p, scheme: schemeFor(p), clock: cfg.Clock, policy: cfg.Rollback, maxWait: cfg.MaxWait, hw: cfg.HighWater}
	g.closer = cfg.Closer
	if g.clock == nil {
		g.clock = SystemClock()
	}
	g.nanoClock, _ = g.clock.(interface{ UnixNano() int64 })
	if g.policy > Bump {
		return nil, fmt.Errorf("snowflake: unknown rollback policy %d; allowed %s", g.policy, policyList)
	}
	if g.maxWait < 0 {
		return nil, fmt.Errorf("snowflake: max wait %v must not be negative", g.maxWait)
	}
	if cfg.MaxAhead < 0 {
		return nil, fmt.Errorf("snowflake: max ahead %v must not be negative", cfg.MaxAhead)
	}
	g.maxAhead = int64(cmp.Or(cfg.MaxAhead, DefaultMaxAhead))
	if g.policy == Bump {
		g.maxAhead = int64(cmp.Or(cfg.MaxAhead, DefaultBumpMaxAhead))
		if p.csBits == 0 {
			return nil, fmt.Errorf("snowflake: rollback policy bump needs a clockseq field in the layout, e.g. time:41,clockseq:2,worker:8,sequence:12")
		}
		if _, ok := g.hw.(ClockSeqStore); g.hw != nil && !ok {
			return nil, fmt.Errorf("snowflake: rollback policy bump needs a high-water store that persists the clockseq value (a ClockSeqStore, such as FileHighWater); %T does not", g.hw)
		}
	}
	if g.maxWait == 0 {
		g.maxWait = DefaultMaxWait
	}
	if cfg.RandomSequenceStart && p.seqMax >= 7 {
		g.seqRange = (p.seqMax + 1) / 8
	}
	g.unbounded = p.seqBits == 0 && p.randBits > 0
	// A clockseq layout takes the slow path, which reads the clockseq
	// value from the state.
	g.fast = p.seqBits > 0 && p.randBits == 0 && p.csBits == 0
	guard := min(64-uint(p.timeBits)-p.seqBits-p.csBits, 20)
	g.sShift, g.cMask = p.seqBits+guard, 1<<(p.seqBits+guard)-1
	g.csShift = g.sShift + uint(p.timeBits)
	// Adds past the sequence's end are bounded by the callers in flight at
	// once; take the add path only with room for a million of them.
	g.addPath = g.fast && g.cMask-p.seqMax >= 1<<20
	g.coarse, _ = g.clock.(*CoarseClock)
	g.markTick.Store(math.MaxInt64)
	g.aheadTicks = max(1, int64(cmp.Or(cfg.HighWaterAhead, DefaultHighWaterAhead))/p.tickNs)
	g.nodes, g.lease = cfg.Nodes, cfg.Lease
	// Under a lease, nodeState reads the mark of the identity it takes.
	if _, err := g.nodeState(ctx); err != nil {
		return nil, err
	}
	if g.hw != nil && g.lease == nil {
		if err := g.adoptMark(ctx, nil); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Ready reports whether Next can issue now, issuing nothing. It returns
// nil, or an error wrapping idgen.ErrLeaseLost while the lease holds no
// identity, idgen.ErrOutOfRange for a leased worker ID outside its field,
// idgen.ErrBeforeEpoch or idgen.ErrLayoutExhausted when the clock is
// outside the layout's lifetime, *idgen.ClockRollbackError when the clock is
// behind the last tick issued by more than the policy waits or holds (Fail:
// any; WaitThenFail: MaxWait; Wait: never; Hold: when the tick it would
// issue at starts more than MaxAhead after the clock), *HighWaterAheadError (wrapping one)
// when it is behind a new lease identity's mark instead, or a high-water
// Load error. A new lease
// identity's high-water mark is read here, as Next would read it.
func (g *Generator) Ready(ctx context.Context) error {
	if err := g.SyncLease(ctx); err != nil {
		return err
	}
	p := g.p
	ns := g.elapsed()
	switch {
	case ns < 0:
		return p.beforeEpoch(ns)
	case ns/p.tickNs > p.timeMax:
		return p.timeEnded()
	}
	// A clock behind the last tick issued: Next would fail at once under
	// Fail, after MaxWait under WaitThenFail, or beyond MaxAhead under
	// Hold (when even the next tick would be too far ahead, if the last
	// tick's sequence is used up).
	if old := g.state.Load(); ns < g.tickOf(old)*p.tickNs {
		last := g.tickOf(old)
		drift := time.Duration(last*p.tickNs - ns)
		held := g.policy == Hold || (g.policy == Bump && g.csOf(old) >= p.csMax)
		if g.policy == Fail || (g.policy == WaitThenFail && drift > g.maxWait) || (held && g.holdTick(old)*p.tickNs-ns > g.maxAhead) {
			return g.rollbackErr(&idgen.ClockRollbackError{Drift: drift, Last: p.layout.TickTime(last), Now: time.Unix(0, ns+p.epochNs).UTC()}, last)
		}
	}
	return nil
}

// Scheme returns the scheme of the layout: "snowflake", 8 bytes, bigint.
func (g *Generator) Scheme() *idgen.Scheme { return g.scheme }

// Layout returns the generator's layout.
func (g *Generator) Layout() Layout { return g.p.layout }

// Next returns a new ID. It waits for the next tick when the tick's sequence
// is used up, and applies the rollback policy when the clock is behind the
// last tick issued (under Hold it issues at that tick or the ones after it,
// up to MaxAhead ahead of the clock). Errors: *idgen.ClockRollbackError (or, behind a leased
// identity's mark, *HighWaterAheadError), idgen.ErrLayoutExhausted,
// idgen.ErrBeforeEpoch, a high-water Store error, ctx's error while waiting,
// or idgen.ErrClosed after Close.
func (g *Generator) Next(ctx context.Context) (idgen.ID, error) {
	// Fast path: the clock is still in the state's tick and its sequence
	// has room. One clock read and one atomic add (or compare-and-swap).
	p := g.p
	node := g.node.Load()
	if g.fast && !node.closed && (g.lease == nil || g.lease.Identity() == node.ident) {
		var v uint64
		var ns int64
		if g.addPath {
			if c := g.coarse; c != nil {
				ns = c.UnixNano() - p.epochNs
			} else {
				ns = g.elapsed()
			}
			v = g.state.Add(1)
		} else {
			old := g.state.Load()
			ns = g.elapsed()
			if old&g.cMask < p.seqMax && g.state.CompareAndSwap(old, old+1) {
				v = old + 1
			}
		}
		// Under Hold a value taken in a tick ahead of the clock, within
		// MaxAhead, is issued as well: no value is lost to the slow path.
		t := int64(v >> g.sShift)
		if d := ns - t*p.tickNs; v != 0 && d < p.tickNs && (d >= 0 || g.policy == Hold && -d <= g.maxAhead) && t < g.markTick.Load() {
			if seq := v & g.cMask; seq <= p.seqMax {
				return g.scheme.FromUint64(uint64(t)<<p.timeShift | node.bits | seq<<p.seqShift), nil
			}
		}
		// A value taken by add but not used is a gap, never a duplicate.
	}
	node, err := g.nodeState(ctx)
	if err != nil {
		return idgen.ID{}, err
	}
	t, seq, _, cs, err := g.reserve(ctx, 1)
	if err != nil {
		return idgen.ID{}, err
	}
	return g.scheme.FromUint64(g.compose(t, seq, node.bits|cs)), nil
}

// NextN fills dst with increasing IDs, reserving the rest of a tick's
// sequence (up to what dst still needs) in one compare-and-swap.
func (g *Generator) NextN(ctx context.Context, dst []idgen.ID) (int, error) {
	i := 0
	for i < len(dst) {
		node, err := g.nodeState(ctx)
		if err != nil {
			return i, err
		}
		t, seq, n, cs, err := g.reserve(ctx, uint64(len(dst)-i))
		if err != nil {
			return i, err
		}
		if g.p.randBits > 0 {
			for k := range n {
				dst[i+int(k)] = g.scheme.FromUint64(g.compose(t, seq+k, node.bits|cs))
			}
		} else {
			// Without random bits the IDs of one tick are an arithmetic run.
			g.scheme.FillUint64(dst[i:i+int(n)], g.compose(t, seq, node.bits|cs), 1<<g.p.seqShift)
		}
		i += int(n)
	}
	return i, nil
}

func (g *Generator) compose(t int64, seq, node uint64) uint64 {
	v := uint64(t)<<g.p.timeShift | node | seq<<g.p.seqShift
	if g.p.randBits > 0 {
		v |= (rand.Uint64() & g.p.randMask) << g.p.randShift
	}
	return v
}

// elapsed returns ns since the epoch.
func (g *Generator) elapsed() int64 {
	if g.coarse != nil {
		return g.coarse.UnixNano() - g.p.epochNs
	}
	if g.nanoClock != nil {
		return g.nanoClock.UnixNano() - g.p.epochNs
	}
	return g.clock.Now().UnixNano() - g.p.epochNs
}

// reserve takes up to want sequence numbers of one tick: n of them starting
// at seq, under the clockseq value cs (already shifted to its place in an
// ID; 0 without a clockseq field).
func (g *Generator) reserve(ctx context.Context, want uint64) (tick int64, seq, n, cs uint64, err error) {
	tick, seq, n, old, err := g.take(ctx, want)
	return tick, seq, n, g.csOf(old) << g.p.csShift, err
}

// take is reserve, returning the state word the numbers were taken from.
func (g *Generator) take(ctx context.Context, want uint64) (tick int64, seq, n, old uint64, err error) {
	if g.node.Load() == closedNode {
		return 0, 0, 0, 0, idgen.ErrClosed
	}
	p := g.p
	var waited time.Duration
	for {
		// Load the state before reading the clock: the reading that set it
		// then happened before ours, so now < last means the clock went back,
		// not that another goroutine read it later than we did.
		old := g.state.Load()
		ns := g.elapsed()
		if ns < 0 {
			return 0, 0, 0, 0, p.beforeEpoch(ns)
		}
		g.watchStall(ns)
		last := g.tickOf(old)
		now := last
		if d := ns - last*p.tickNs; d < 0 || d >= p.tickNs {
			// Outside the last tick: divide (a multiply and compare
			// settle the common case without the division).
			if now = ns / p.tickNs; now > p.timeMax {
				return 0, 0, 0, 0, p.timeEnded()
			}
		}
		switch {
		case now > last:
			if now >= g.markTick.Load() {
				if err := g.raiseMark(ctx, now); err != nil {
					return 0, 0, 0, 0, err
				}
			}
			start := uint64(0)
			if g.seqRange != 0 {
				start = rand.Uint64N(g.seqRange)
			}
			n = min(want, p.seqMax-start+1)
			if g.state.CompareAndSwap(old, g.word(old, now, start+n-1)) {
				return now, start, n, old, nil
			}
		case now == last:
			if g.unbounded {
				return now, 0, want, old, nil
			}
			cur := old & g.cMask
			if cur >= p.seqMax {
				if err := g.waitTick(ctx, last, ns); err != nil {
					return 0, 0, 0, 0, err
				}
				continue
			}
			n = min(want, p.seqMax-cur)
			if g.state.CompareAndSwap(old, old+n) {
				return last, cur + 1, n, old, nil
			}
		case g.policy == Hold || g.policy == Bump:
			t, s, n, ok, err := g.hold(ctx, old, last, ns, want)
			if err != nil || ok {
				return t, s, n, old, err
			}
		default:
			drift := time.Duration(last*p.tickNs - ns)
			if err := g.rollback(ctx, drift, last, ns, &waited); err != nil {
				return 0, 0, 0, 0, err
			}
		}
	}
}

// tickOf returns the tick of state word v.
func (g *Generator) tickOf(v uint64) int64 { return int64(v>>g.sShift) & g.p.timeMax }

// csOf returns the clockseq value of state word v; 0 without a clockseq field.
func (g *Generator) csOf(v uint64) uint64 {
	if g.p.csBits == 0 {
		return 0
	}
	return v >> g.csShift
}

// word returns the state word of tick and counter under old's clockseq value.
func (g *Generator) word(old uint64, tick int64, counter uint64) uint64 {
	return g.csOf(old)<<g.csShift | uint64(tick)<<g.sShift | counter
}

// Decompose takes an ID of this generator's layout apart.
func (g *Generator) Decompose(id idgen.ID) (Parts, error) {
	v, ok := id.Uint64()
	if !ok {
		return Parts{}, fmt.Errorf("snowflake: %s ID is not 64-bit", id.Scheme())
	}
	return g.p.decompose(v), nil
}

// beforeEpoch is the error of a clock reading ns before the epoch.
func (p *plan) beforeEpoch(ns int64) error {
	return fmt.Errorf("%w: clock reads %s, epoch is %s", idgen.ErrBeforeEpoch,
		time.Unix(0, ns+p.epochNs).UTC().Format(time.RFC3339Nano), p.layout.epoch().Format(time.RFC3339Nano))
}

// timeEnded is the error of a clock past the time field's end.
func (p *plan) timeEnded() error {
	return fmt.Errorf("%w: the %d-bit time field ended at %s", idgen.ErrLayoutExhausted, p.timeBits, p.layout.End().Format(time.RFC3339))
}
