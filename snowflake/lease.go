package snowflake

import (
	"context"
	"fmt"
	"time"

	"github.com/idgenkit/idgen"
)

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

// LeaseStatus returns the status of the lease behind the worker ID, and
// true, when Config.Lease is renewed against a store (an
// idgen.LeaseStatusReporter); else false.
func (g *Generator) LeaseStatus() (idgen.LeaseStatus, bool) {
	if r, ok := g.lease.(idgen.LeaseStatusReporter); ok {
		return r.LeaseStatus(), true
	}
	return idgen.LeaseStatus{}, false
}
