package idgen

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Match them with errors.Is; each package wraps them with
// the value at fault.
var (
	// ErrClockRollback reports that the clock went back behind the last tick
	// a generator issued. The error returned is a *ClockRollbackError.
	ErrClockRollback = errors.New("idgen: clock moved backwards")

	// ErrLayoutExhausted reports that the current time no longer fits the
	// layout's time field: the layout's lifetime is over. A generator never
	// wraps into the sign bit or a neighbouring field.
	ErrLayoutExhausted = errors.New("idgen: layout lifetime exhausted")

	// ErrBeforeEpoch reports that the clock reads a time before the layout's epoch.
	ErrBeforeEpoch = errors.New("idgen: clock is before the epoch")

	// ErrSyntax reports text that is not an ID of the scheme.
	ErrSyntax = errors.New("idgen: invalid ID syntax")

	// ErrNoScheme reports an ID that has no scheme, such as the zero ID.
	ErrNoScheme = errors.New("idgen: ID has no scheme")

	// ErrOutOfRange reports a value outside the range its field allows.
	ErrOutOfRange = errors.New("idgen: value out of range")

	// ErrLeaseLost reports that the node's worker-ID lease can no longer be
	// trusted; no ID is issued until it is reacquired.
	ErrLeaseLost = errors.New("idgen: worker ID lease lost")

	// ErrNoWorkerIDs reports that every worker ID of the space is held.
	ErrNoWorkerIDs = errors.New("idgen: no free worker ID")

	// ErrUnavailable reports that a store-backed generator has nothing left to
	// hand out and its store cannot be reached.
	ErrUnavailable = errors.New("idgen: ID store unavailable")

	// ErrInvalid reports input the caller must change before trying again:
	// a spec, configuration value, key, DSN or argument outside what is
	// allowed. The error wrapping it names the input (cut to about 64
	// characters) and what is allowed.
	ErrInvalid = errors.New("idgen: invalid input")

	// ErrClosed reports a call on a closed generator.
	ErrClosed = errors.New("idgen: generator closed")
)

// ClockRollbackError reports that the clock read Now, behind the last tick
// issued (Last), by Drift. It matches ErrClockRollback with errors.Is.
type ClockRollbackError struct {
	Drift  time.Duration // how far the clock is behind the last tick issued; > 0
	Last   time.Time     // start of the last tick issued
	Now    time.Time     // what the clock read
	Waited time.Duration // how long the generator waited before failing; 0 under "fail"
}

func (e *ClockRollbackError) Error() string {
	if e.Waited > 0 {
		return fmt.Sprintf("idgen: clock moved backwards by %v (waited %v)", e.Drift, e.Waited)
	}
	return fmt.Sprintf("idgen: clock moved backwards by %v", e.Drift)
}

// Is reports whether target is ErrClockRollback.
func (e *ClockRollbackError) Is(target error) bool { return target == ErrClockRollback }
