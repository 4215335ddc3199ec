package idgen

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idgenkit/idgen/internal/echo"
)

// The two classes of error. Every sentinel error of idgen's packages
// matches one of them with errors.Is (the few that match neither say why
// in their doc), so that a program tells "change the input" from "try
// again later" without knowing each package's sentinels: idgen's CLI
// exits 2 for the first and 1 for the second, and its servers answer 400
// and 503.
var (
	// ErrInvalid reports input the caller must change before trying again:
	// a spec, configuration value, key, DSN, layout or ID outside what is
	// allowed. The error wrapping it names the input (cut to about 64
	// characters) and what is allowed.
	ErrInvalid = errors.New("idgen: invalid input")

	// ErrUnavailable reports that a store, server or resource a generator
	// needs failed or cannot be reached (a store-backed generator with
	// nothing left to hand out, a lease store down, a lease lost): the
	// input was fine, and trying again later may work.
	ErrUnavailable = errors.New("idgen: ID store unavailable")
)

// A sentinel is a sentinel error of a class: its text is its own, and it
// matches the class with errors.Is. Other packages make theirs with
// internal/errclass.
type sentinel struct {
	msg   string
	class error
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.class }

func invalid(msg string) error     { return &sentinel{msg, ErrInvalid} }
func unavailable(msg string) error { return &sentinel{msg, ErrUnavailable} }

// Sentinel errors. Match them with errors.Is; each package wraps them with
// the value at fault. Each matches ErrInvalid or ErrUnavailable.
var (
	// ErrClockRollback reports that the clock went back behind the last tick
	// a generator issued. The error returned is a *ClockRollbackError.
	ErrClockRollback = unavailable("idgen: clock moved backwards")

	// ErrLayoutExhausted reports that the current time no longer fits the
	// layout's time field: the layout's lifetime is over. A generator never
	// wraps into the sign bit or a neighbouring field.
	ErrLayoutExhausted = invalid("idgen: layout lifetime exhausted")

	// ErrBeforeEpoch reports that the clock reads a time before the layout's epoch.
	ErrBeforeEpoch = invalid("idgen: clock is before the epoch")

	// ErrSyntax reports text that is not an ID of the scheme.
	ErrSyntax = invalid("idgen: invalid ID syntax")

	// ErrNoScheme reports an ID that has no scheme, such as the zero ID.
	ErrNoScheme = invalid("idgen: ID has no scheme")

	// ErrOutOfRange reports a value outside the range its field allows.
	ErrOutOfRange = invalid("idgen: value out of range")

	// ErrLeaseLost reports that the node's worker-ID lease can no longer be
	// trusted; no ID is issued until it is reacquired.
	ErrLeaseLost = unavailable("idgen: worker ID lease lost")

	// ErrNoWorkerIDs reports that every worker ID of the space is held.
	ErrNoWorkerIDs = unavailable("idgen: no free worker ID")

	// ErrClosed reports a call on a closed generator.
	ErrClosed = unavailable("idgen: generator closed")
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

// Unwrap returns ErrClockRollback, through which the error matches its
// class, ErrUnavailable.
func (e *ClockRollbackError) Unwrap() error { return ErrClockRollback }

// A FieldError reports a field of a package's configuration (a Config,
// Options or Setting struct) whose value is not allowed. It matches
// ErrInvalid with errors.Is, and Err with errors.Is and errors.As. Its
// text is
//
//	Field Value: Allowed: Err
//
// ("Options.Batch -1: want at least 1"), each part left out when empty.
// A program that sets the field from a flag finds the error with
// errors.As and prints Named(flag) in its place: the field is data, not
// words to rewrite.
type FieldError struct {
	Field   string // the field as the Go API spells it: "Options.Batch", "Config.Span"
	Value   string // the value as the message shows it: "-1", `"snowflake?x=1"` (a string in Go's quotes); the text cuts it to about 64 characters
	Allowed string // what the field allows, or why the value is refused: "want at least 1"
	Err     error  // the cause, if any (the spec parser's error); nil for none
}

func (e *FieldError) Error() string { return e.Named(e.Field) }

// Named returns the error's text with name in the field's place: the
// flag ("--batch") that sets the field.
func (e *FieldError) Named(name string) string {
	var b strings.Builder
	b.WriteString(name)
	if e.Value != "" {
		b.WriteString(" ")
		b.WriteString(cutValue(e.Value))
	}
	if e.Allowed != "" {
		b.WriteString(": ")
		b.WriteString(e.Allowed)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// cutValue cuts a value longer than about 64 characters, a quoted one
// inside its quotes.
func cutValue(v string) string {
	if len(v) <= echo.Max+2 {
		return v
	}
	if s, err := strconv.Unquote(v); err == nil {
		return echo.Quote(s)
	}
	return echo.Cut(v)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }
