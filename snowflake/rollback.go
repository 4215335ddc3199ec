package snowflake

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/idgenkit/idgen"
)

// rollbackErr returns rb, or, when the last tick is where a leased
// identity's mark put the state (nothing issued since), a
// *HighWaterAheadError naming that mark.
func (g *Generator) rollbackErr(rb *idgen.ClockRollbackError, last int64) error {
	if a := g.adopted.Load(); a != nil && a.tick == last {
		return &HighWaterAheadError{WorkerID: a.worker, Mark: a.mark, Ahead: a.mark.Sub(rb.Now), Rollback: rb}
	}
	return rb
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
