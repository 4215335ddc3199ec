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
)

// DefaultMaxWait bounds the wait of WaitThenFail when Config.MaxWait is zero.
const DefaultMaxWait = 10 * time.Millisecond

var policyNames = [...]string{WaitThenFail: "wait-then-fail", Fail: "fail", Wait: "wait"}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", p)
}

// ParsePolicy reads "fail", "wait" or "wait-then-fail".
func ParsePolicy(s string) (Policy, error) {
	for p, n := range policyNames {
		if n == s {
			return Policy(p), nil
		}
	}
	return 0, fmt.Errorf("snowflake: unknown rollback policy %q; allowed fail, wait, wait-then-fail", s)
}
