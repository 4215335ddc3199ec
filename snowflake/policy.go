package snowflake

import (
	"fmt"
	"time"
)

// A Policy says what a Generator does when the clock reads a time behind the
// last tick it issued (an NTP step back, a VM restore, a restart behind the
// high-water mark).
type Policy uint8

const (
	// WaitThenFail waits up to Config.MaxWait (default 10 ms) for the clock
	// to pass the last tick, then returns *idgen.ClockRollbackError. A
	// rollback larger than MaxWait fails at once: waiting cannot cover it.
	// It is the zero value.
	WaitThenFail Policy = iota
	// Fail returns *idgen.ClockRollbackError at once, carrying the drift.
	Fail
	// Wait blocks until the clock passes the last tick, bounded only by the
	// context.
	Wait
	// Hold keeps issuing at the last tick, continuing its sequence, while
	// the clock reads behind it (or behind the high-water mark at start);
	// when that tick's sequence is used up it moves on to the next tick,
	// ahead of the clock. It never issues at a tick starting more than
	// Config.MaxAhead (default 10 s) ahead of the clock: beyond, it returns
	// *idgen.ClockRollbackError at once. IDs stay strictly increasing; the
	// time inside them runs ahead of the clock by up to MaxAhead
	// (Generator.Stats reports by how much).
	Hold
	// Bump holds like Hold within Config.MaxAhead (default 1 s under Bump);
	// a rollback beyond it increments the layout's clockseq field and
	// issues at the clock's true time. The clockseq value is persisted with
	// the high-water mark, so a restart more than MaxAhead behind the mark
	// bumps too. After 2^bits-1 bumps Next fails with an error matching
	// both idgen.ErrClockRollback and ErrClockSeqExhausted. It needs a
	// layout with a clockseq field, and a HighWater store, if any, that is
	// a ClockSeqStore. IDs across a bump are unique but not in time order.
	Bump
)

// DefaultBumpMaxAhead bounds how far ahead of the clock Bump holds before
// it bumps, when Config.MaxAhead is zero.
const DefaultBumpMaxAhead = time.Second

// DefaultMaxAhead bounds how far ahead of the clock Hold issues when
// Config.MaxAhead is zero.
const DefaultMaxAhead = 10 * time.Second

// DefaultMaxWait bounds the wait of WaitThenFail when Config.MaxWait is zero.
const DefaultMaxWait = 10 * time.Millisecond

var policyNames = [...]string{WaitThenFail: "wait-then-fail", Fail: "fail", Wait: "wait", Hold: "hold", Bump: "bump"}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", p)
}

// ParsePolicy reads "fail", "wait", "wait-then-fail", "hold" or "bump".
func ParsePolicy(s string) (Policy, error) {
	for p, n := range policyNames {
		if n == s {
			return Policy(p), nil
		}
	}
	return 0, fmt.Errorf("snowflake: unknown rollback policy %q; allowed %s", s, policyList)
}

// policyList names the policies for error messages.
const policyList = "fail, wait, wait-then-fail, hold, bump"
