package snowflake

import (
	"time"

	"github.com/idgenkit/idgen"
)

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

// Stats is a snapshot of a Generator's clock state and counters:
// idgen.Stats, the one type every generator with counters reports (an
// alias, so that the fields of this package's former Stats struct, which
// idgen.Stats keeps under the same names, read and compose as before).
// A Generator fills the idgen.StatsClock fields, and idgen.StatsLease's
// under a lease renewed against a store. Ahead is up to MaxAhead while
// Hold issues ahead of a clock behind it (after a rollback, a restart
// behind the high-water mark, or a leased worker ID whose previous
// holder's mark is ahead); ClockStalls counts the readings that stayed
// the same for StallTicks ticks; the clock steps are those SystemClock
// followed (steps of StepMin or more; a clock that is not a StepCounter
// counts none), after a step back the rollback policy applies.
type Stats = idgen.Stats

// Stats returns the generator's clock state and counters; it issues
// nothing. Each field is also the answer of the method of its name
// (ClockAhead for Ahead, ClockDrift for Drift, BehindHighWater for
// BehindHighWater and HighWater, LeaseStatus for Lease).
func (g *Generator) Stats() Stats {
	var fwd, back uint64
	var stepped time.Duration
	if c, ok := g.clock.(StepCounter); ok {
		fwd, back, stepped = c.ClockSteps()
	}
	behind, mark := g.BehindHighWater()
	s := Stats{
		Kinds:                 idgen.StatsClock,
		ClockStepsForward:     fwd,
		ClockStepsBack:        back,
		ClockStepped:          stepped,
		Ahead:                 g.ClockAhead(),
		MaxAhead:              g.MaxAhead(),
		Drift:                 g.ClockDrift(),
		BehindHighWater:       behind,
		HighWater:             mark,
		LayoutEnd:             g.LayoutEnd(),
		ClockSeq:              g.csOf(g.state.Load()),
		Bumps:                 g.bumps.Load(),
		SequenceWaits:         g.seqWaits.Load(),
		ClockRollbackWaits:    g.rollbackWaits.Load(),
		ClockRollbackFailures: g.rollbackFailures.Load(),
		ClockStalls:           g.stalls.Load(),
	}
	if ls, ok := g.LeaseStatus(); ok {
		s.Kinds |= idgen.StatsLease
		s.Lease = ls
	}
	return s
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
