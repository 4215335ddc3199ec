package snowflake

import (
	"time"
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
