package snowflake

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
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

// nodeState is the node bits of one identity.
type nodeState struct {
	ident  *idgen.Identity // nil without a lease
	bits   uint64
	closed bool // closedNode's: the fast path issues nothing under it
}

// closedNode is the node state after Close: it sends Next off the fast
// path, to nodeState's idgen.ErrClosed.
var closedNode = &nodeState{closed: true}

// nodeState returns the node bits to issue under, rebuilding them when the
// lease's identity changed. It fails with idgen.ErrLeaseLost while the
// lease holds none.
func (g *Generator) nodeState(ctx context.Context) (*nodeState, error) {
	cur := g.node.Load()
	if cur == closedNode {
		return nil, idgen.ErrClosed
	}
	if g.lease == nil {
		if cur != nil {
			return cur, nil
		}
		bits, err := g.p.nodeBits(g.nodes)
		if err != nil {
			return nil, err
		}
		return g.setNode(cur, &nodeState{bits: bits})
	}
	ident := g.lease.Identity()
	if ident == nil {
		return nil, fmt.Errorf("%w: no ID is issued until the worker ID is reacquired", idgen.ErrLeaseLost)
	}
	if cur != nil && cur.ident == ident {
		return cur, nil
	}
	values := map[string]int64{}
	for k, v := range g.nodes {
		values[k] = v
	}
	worker, _, ok := g.p.layout.WorkerField()
	if ok {
		values[worker] = ident.WorkerID
	}
	if _, ok := g.p.node(FieldDatacenter); ok && worker != FieldDatacenter {
		values[FieldDatacenter] = ident.DatacenterID
	}
	bits, err := g.p.nodeBits(values)
	if err != nil {
		return nil, err
	}
	if g.hw != nil {
		// A reacquired identity may have been used by another node whose
		// clock ran ahead: its store holds that node's mark.
		g.hwMu.Lock()
		err := g.adoptMark(ctx, ident)
		g.hwMu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return g.setNode(cur, &nodeState{ident: ident, bits: bits})
}

// setNode replaces the node state cur with ns, unless Close replaced it
// first: then it returns idgen.ErrClosed.
func (g *Generator) setNode(cur, ns *nodeState) (*nodeState, error) {
	if !g.node.CompareAndSwap(cur, ns) && g.node.Load() == closedNode {
		return nil, idgen.ErrClosed
	}
	return ns, nil
}

func (p *plan) nodeBits(values map[string]int64) (uint64, error) {
	var v uint64
	for name, val := range values {
		f, ok := p.node(name)
		if !ok {
			return 0, fmt.Errorf("snowflake: layout has no node field %q; it has %s", name, p.nodeNames())
		}
		if val < 0 || uint64(val) > f.Mask {
			return 0, fmt.Errorf("%w: %s %d outside [0, %d] (%d bits)", idgen.ErrOutOfRange, name, val, f.Mask, f.Width)
		}
		v |= uint64(val) << f.Shift
	}
	return v, nil
}

// adoptedMark is a leased identity's high-water mark that moved the state
// up to tick, the tick before the mark.
type adoptedMark struct {
	tick   int64
	mark   time.Time
	worker int64
}

// adoptMark reads the high-water mark and makes sure no tick before it is
// issued: the state moves up to the tick before the mark, used up, and the
// next tick needs a new mark first. The state never moves down. ident is
// the leased identity whose mark it is, nil without a lease.
func (g *Generator) adoptMark(ctx context.Context, ident *idgen.Identity) error {
	var mark time.Time
	var cs uint64
	var err error
	if s, ok := g.hw.(ClockSeqStore); ok && g.p.csBits > 0 {
		mark, cs, err = s.LoadClockSeq(ctx)
	} else {
		mark, err = g.hw.Load(ctx)
	}
	if err != nil {
		return fmt.Errorf("snowflake: loading high-water mark: %w", err)
	}
	if cs > g.p.csMax {
		return fmt.Errorf("%w: stored clockseq %d outside [0, %d] (%d bits)", idgen.ErrOutOfRange, cs, g.p.csMax, g.p.csBits)
	}
	if cs > 0 {
		// The clockseq value only grows: IDs under a lower one may exist
		// at any tick.
		for old := g.state.Load(); g.csOf(old) < cs && !g.state.CompareAndSwap(old, cs<<g.csShift); old = g.state.Load() {
		}
	}
	if !mark.IsZero() {
		g.loadedMark.Store(mark.UnixNano())
	}
	m := int64(0)
	if d := mark.UnixNano() - g.p.epochNs; !mark.IsZero() && d > 0 {
		m = (d + g.p.tickNs - 1) / g.p.tickNs // first tick starting at or after the mark
	}
	g.markTick.Store(m)
	g.adopted.Store(nil)
	for m > 0 {
		// Tick m-1 counts as used up: nothing below m is issued again.
		old := g.state.Load()
		if g.tickOf(old) >= m {
			break
		}
		if g.state.CompareAndSwap(old, g.word(old, m-1, g.p.seqMax)) {
			if ident != nil {
				// A clock behind tick m-1 is behind this mark, not behind
				// an ID of ours.
				g.adopted.Store(&adoptedMark{tick: m - 1, mark: mark, worker: ident.WorkerID})
			}
			break
		}
	}
	return nil
}

// rollbackErr returns rb, or, when the last tick is where a leased
// identity's mark put the state (nothing issued since), a
// *HighWaterAheadError naming that mark.
func (g *Generator) rollbackErr(rb *idgen.ClockRollbackError, last int64) error {
	if a := g.adopted.Load(); a != nil && a.tick == last {
		return &HighWaterAheadError{WorkerID: a.worker, Mark: a.mark, Ahead: a.mark.Sub(rb.Now), Rollback: rb}
	}
	return rb
}

// SyncLease takes up the lease's current identity, issuing nothing: when
// it changed, its high-water mark is read, so that nothing is issued under
// it before the mark. Next does the same; Reserve, whose caller composes
// the node fields itself, does not, so such a caller calls SyncLease when
// the identity changes. Errors: idgen.ErrLeaseLost while the lease holds no
// identity, idgen.ErrOutOfRange for a worker ID outside its field, or a
// high-water Load error. Without a lease it returns nil.
func (g *Generator) SyncLease(ctx context.Context) error {
	_, err := g.nodeState(ctx)
	return err
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

// holdTick is the tick Hold issues at from state old: its tick, or the
// next when the tick's sequence is used up.
func (g *Generator) holdTick(old uint64) int64 {
	last := g.tickOf(old)
	if !g.unbounded && old&g.cMask >= g.p.seqMax {
		return last + 1
	}
	return last
}

// hold issues under Hold (or Bump) while the clock, at ns, reads behind
// tick last, the state old's tick: it continues last's sequence, or enters
// the next tick when it is used up, as long as that tick starts no more
// than maxAhead after the clock; beyond, Bump bumps. ok is false when a
// compare-and-swap lost a race or a bump moved the state (the caller reads
// the state again).
func (g *Generator) hold(ctx context.Context, old uint64, last, ns int64, want uint64) (tick int64, seq, n uint64, ok bool, err error) {
	p := g.p
	t := g.holdTick(old)
	if t*p.tickNs-ns > g.maxAhead {
		rb := &idgen.ClockRollbackError{Drift: time.Duration(last*p.tickNs - ns), Last: p.layout.TickTime(last), Now: time.Unix(0, ns+p.epochNs).UTC()}
		if g.policy == Bump && g.csOf(old) < p.csMax {
			return 0, 0, 0, false, g.bump(ctx, old, ns)
		}
		g.rollbackFailures.Add(1)
		if g.policy == Bump {
			return 0, 0, 0, false, fmt.Errorf("%w; the %d-bit clockseq field is used up after %d bumps: %w", rb, p.csBits, p.csMax, ErrClockSeqExhausted)
		}
		return 0, 0, 0, false, g.rollbackErr(rb, last)
	}
	if t == last {
		if g.unbounded {
			return last, 0, want, true, nil
		}
		cur := old & g.cMask
		n = min(want, p.seqMax-cur)
		return last, cur + 1, n, g.state.CompareAndSwap(old, old+n), nil
	}
	if t > p.timeMax {
		return 0, 0, 0, false, p.timeEnded()
	}
	if t >= g.markTick.Load() {
		if err := g.raiseMark(ctx, t); err != nil {
			return 0, 0, 0, false, err
		}
	}
	start := uint64(0)
	if g.seqRange != 0 {
		start = rand.Uint64N(g.seqRange)
	}
	n = min(want, p.seqMax-start+1)
	return t, start, n, g.state.CompareAndSwap(old, g.word(old, t, start+n-1)), nil
}

// ErrClockSeqExhausted reports that policy Bump has used up the clockseq
// field: a rollback beyond MaxAhead can no longer be bumped past. It
// matches neither class of package idgen: the input was fine (not
// ErrInvalid), and the generator cannot issue again until restarted, so
// the servers answer it as an internal error rather than as a store
// outage to retry (not ErrUnavailable).
var ErrClockSeqExhausted = errors.New("snowflake: clockseq used up")

// bump moves the state from old to the next clockseq value at the clock's
// tick (ns), the tick before it used up, and persists the value with a new
// mark before anything is issued under it. It returns nil also when the
// compare-and-swap lost a race; the caller reads the state again.
func (g *Generator) bump(ctx context.Context, old uint64, ns int64) error {
	p := g.p
	now := ns / p.tickNs
	cs := g.csOf(old) + 1
	g.hwMu.Lock()
	defer g.hwMu.Unlock()
	prev := g.markTick.Load()
	if g.hw != nil {
		// Entering tick now or a later one needs a mark under the new
		// value first: raiseMark waits for hwMu.
		g.markTick.Store(now)
	}
	if !g.state.CompareAndSwap(old, cs<<g.csShift|uint64(max(now-1, 0))<<g.sShift|p.seqMax) {
		g.markTick.Store(prev)
		return nil
	}
	g.bumps.Add(1)
	if g.hw == nil {
		return nil
	}
	m := min(now+g.aheadTicks, p.timeMax+1)
	if err := g.hw.(ClockSeqStore).StoreClockSeq(ctx, p.layout.TickTime(m), cs); err != nil {
		// markTick stays at now: the next entry to a tick stores again.
		return fmt.Errorf("snowflake: persisting high-water mark: %w", err)
	}
	g.markTick.Store(m)
	return nil
}

// StallTicks is how many ticks of real time a clock must read the same
// time on the slow path of Next, with IDs asked for, to count as stalled.
const StallTicks = 100

// monoBase is the origin of the stall watch's monotonic times.
var monoBase = time.Now()

// watchStall counts a stall when the clock has read ns on the slow path for
// StallTicks ticks of real (monotonic) time: once per stalled reading.
func (g *Generator) watchStall(ns int64) {
	if g.stallNs.Swap(ns) != ns {
		g.stallSince.Store(0)
		g.stallCounted.Store(false)
		return
	}
	now := int64(time.Since(monoBase)) + 1 // never 0
	since := g.stallSince.Load()
	if since == 0 {
		g.stallSince.CompareAndSwap(0, now)
		return
	}
	if now-since >= StallTicks*g.p.tickNs && g.stallCounted.CompareAndSwap(false, true) {
		g.stalls.Add(1)
	}
}

// waitTick waits until the clock leaves tick last; ns is the last reading.
func (g *Generator) waitTick(ctx context.Context, last, ns int64) error {
	g.seqWaits.Add(1)
	remaining := time.Duration((last+1)*g.p.tickNs - ns)
	if _, ok := g.clock.(Sleeper); ok || remaining > 2*time.Millisecond {
		if _, ok := g.clock.(Sleeper); !ok {
			remaining -= time.Millisecond // wake early, then spin to the boundary
		}
		return sleep(ctx, g.clock, remaining)
	}
	runtime.Gosched()
	return ctx.Err()
}

// rollback applies the policy to a clock drift behind tick last.
func (g *Generator) rollback(ctx context.Context, drift time.Duration, last, ns int64, waited *time.Duration) error {
	rb := &idgen.ClockRollbackError{
		Drift:  drift,
		Last:   g.p.layout.TickTime(last),
		Now:    time.Unix(0, ns+g.p.epochNs).UTC(),
		Waited: *waited,
	}
	switch g.policy {
	case Fail:
		g.rollbackFailures.Add(1)
		return g.rollbackErr(rb, last)
	case WaitThenFail:
		if *waited+drift > g.maxWait {
			g.rollbackFailures.Add(1)
			return g.rollbackErr(rb, last)
		}
	}
	g.rollbackWaits.Add(1)
	if err := sleep(ctx, g.clock, drift); err != nil {
		return fmt.Errorf("%w: %w", rb, err)
	}
	*waited += drift
	return nil
}

// raiseMark persists a mark ahead of tick now before anything in now is issued.
func (g *Generator) raiseMark(ctx context.Context, now int64) error {
	g.hwMu.Lock()
	defer g.hwMu.Unlock()
	if now < g.markTick.Load() {
		return nil
	}
	m := min(now+g.aheadTicks, g.p.timeMax+1)
	var err error
	if s, ok := g.hw.(ClockSeqStore); ok && g.p.csBits > 0 {
		// The state's clockseq value changes only under hwMu (bump).
		err = s.StoreClockSeq(ctx, g.p.layout.TickTime(m), g.csOf(g.state.Load()))
	} else {
		err = g.hw.Store(ctx, g.p.layout.TickTime(m))
	}
	if err != nil {
		return fmt.Errorf("snowflake: persisting high-water mark: %w", err)
	}
	g.markTick.Store(m)
	return nil
}

// Decompose takes an ID of this generator's layout apart.
func (g *Generator) Decompose(id idgen.ID) (Parts, error) {
	v, ok := id.Uint64()
	if !ok {
		return Parts{}, fmt.Errorf("snowflake: %s ID is not 64-bit", id.Scheme())
	}
	return g.p.decompose(v), nil
}

// SequenceWaits returns how many times Next or NextN waited for the next
// tick because the tick's sequence was used up (a spin of a few µs counts
// once per check).
func (g *Generator) SequenceWaits() uint64 { return g.seqWaits.Load() }

// ClockRollbackWaits returns how many times the generator slept to let the
// clock pass the last tick issued.
func (g *Generator) ClockRollbackWaits() uint64 { return g.rollbackWaits.Load() }

// ClockRollbackFailures returns how many *idgen.ClockRollbackError the
// generator returned.
func (g *Generator) ClockRollbackFailures() uint64 { return g.rollbackFailures.Load() }

// Stats is a snapshot of a Generator's clock state and counters.
type Stats struct {
	// Ahead is how far the start of the last tick issued lies ahead of the
	// clock: up to MaxAhead while Hold issues ahead of a clock behind it
	// (after a rollback, a restart behind the high-water mark, or a leased
	// worker ID whose previous holder's mark is ahead). It is 0 when the
	// clock has reached the last tick.
	Ahead time.Duration
	// Drift is the system wall clock minus the generator's clock (see
	// ClockDrift); 0 for a clock that does not tell.
	Drift time.Duration
	// ClockSeq is the clockseq value IDs are issued under; 0 without a
	// clockseq field. Bumps counts this process's bumps (policy Bump).
	ClockSeq, Bumps uint64
	// SequenceWaits, ClockRollbackWaits and ClockRollbackFailures are the
	// counters of the methods of those names.
	SequenceWaits, ClockRollbackWaits, ClockRollbackFailures uint64
	// ClockStalls counts the stalls (ClockStalls): clock readings that
	// stayed the same for StallTicks ticks of real time while IDs were
	// asked for.
	ClockStalls uint64
	// ClockStepsForward and ClockStepsBack count the wall clock steps the
	// clock followed (SystemClock follows steps of StepMin or more; a
	// clock that is not a StepCounter counts none), and ClockStepped is
	// their sum, > 0 forward. After a step back the rollback policy applies.
	ClockStepsForward, ClockStepsBack uint64
	ClockStepped                      time.Duration
}

// Stats returns the generator's clock state and counters; it issues nothing.
func (g *Generator) Stats() Stats {
	var fwd, back uint64
	var stepped time.Duration
	if c, ok := g.clock.(StepCounter); ok {
		fwd, back, stepped = c.ClockSteps()
	}
	return Stats{
		ClockStepsForward:     fwd,
		ClockStepsBack:        back,
		ClockStepped:          stepped,
		Ahead:                 g.ClockAhead(),
		Drift:                 g.ClockDrift(),
		ClockSeq:              g.csOf(g.state.Load()),
		Bumps:                 g.bumps.Load(),
		SequenceWaits:         g.seqWaits.Load(),
		ClockRollbackWaits:    g.rollbackWaits.Load(),
		ClockRollbackFailures: g.rollbackFailures.Load(),
		ClockStalls:           g.stalls.Load(),
	}
}

// ClockStalls returns how many times the clock read the same time on the
// slow path of Next (a new tick, a used-up sequence) for StallTicks ticks
// of real time: a stalled clock, which holds issuing to one tick's
// sequence. Each stalled reading counts once.
func (g *Generator) ClockStalls() uint64 { return g.stalls.Load() }

// ClockDrift returns how far the system wall clock is from the generator's
// clock, > 0 when the wall clock is ahead: under the default SystemClock, a
// step not followed yet (for up to StepCheckEvery) or the sum of steps
// below StepMin; 0 when the clock is not a DriftReporter.
func (g *Generator) ClockDrift() time.Duration {
	if d, ok := g.clock.(DriftReporter); ok {
		return d.Drift()
	}
	return 0
}

// ClockAhead returns Stats().Ahead: how far the last tick issued starts
// ahead of the clock, 0 when not ahead.
func (g *Generator) ClockAhead() time.Duration {
	last := g.tickOf(g.state.Load())
	return time.Duration(max(0, last*g.p.tickNs-g.elapsed()))
}

// BehindHighWater returns how far the clock is behind the high-water mark
// read at start (Config.HighWater) or at the lease's latest identity (the
// previous holder's mark), and that mark: after a restart with the clock
// behind the mark, no ID is issued before it under the policies that wait
// or fail, and IDs run ahead of the clock under Hold. behind is 0 once the
// clock has passed the mark, or with no mark read (mark is then zero).
func (g *Generator) BehindHighWater() (behind time.Duration, mark time.Time) {
	ns := g.loadedMark.Load()
	if ns == 0 {
		return 0, time.Time{}
	}
	return time.Duration(max(0, ns-g.p.epochNs-g.elapsed())), time.Unix(0, ns).UTC()
}

// MaxAhead returns how far ahead of the clock the policy may issue:
// Config.MaxAhead (or its default) under Hold and Bump, 0 under the
// policies that never issue ahead (Fail, Wait, WaitThenFail).
func (g *Generator) MaxAhead() time.Duration {
	if g.policy != Hold && g.policy != Bump {
		return 0
	}
	return time.Duration(g.maxAhead)
}

// LayoutEnd returns the end of the layout's lifetime (Layout.End): from
// then on Next fails with idgen.ErrLayoutExhausted.
func (g *Generator) LayoutEnd() time.Time { return g.p.layout.End() }

// LeaseStatus returns the status of the lease behind the worker ID, and
// true, when Config.Lease is renewed against a store (an
// idgen.LeaseStatusReporter); else false.
func (g *Generator) LeaseStatus() (idgen.LeaseStatus, bool) {
	if r, ok := g.lease.(idgen.LeaseStatusReporter); ok {
		return r.LeaseStatus(), true
	}
	return idgen.LeaseStatus{}, false
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
