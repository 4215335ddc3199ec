package segment

import (
	"fmt"
	"math"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/errclass"
)

// Errors. Each is wrapped with the value at fault; match with errors.Is.
var (
	// ErrUnknownTag reports a biz tag that has no row in the store (and
	// Config.AutoCreate is off). Run `idgen segment init --tag NAME`.
	ErrUnknownTag = errclass.Invalid("segment: unknown biz tag")

	// ErrDSN reports a DSN that does not parse or names an unsupported scheme.
	ErrDSN = errclass.Invalid("segment: invalid DSN")

	// ErrUnreachable reports a store that did not answer.
	ErrUnreachable = errclass.Unavailable("segment: store unreachable")

	// ErrConfig reports a Config field outside its allowed range.
	ErrConfig = errclass.Invalid("segment: invalid config")

	// ErrNotInstalled reports a table, sequence or function that
	// `idgen segment init` has not created yet.
	ErrNotInstalled = errclass.Unavailable("segment: not installed")

	// ErrNoDatabase reports a DSN whose database does not exist on the
	// server: create it, or see CreateDatabase.
	ErrNoDatabase = errclass.Unavailable("segment: no such database")

	// ErrResidue reports a ticket server whose existing sequence or table
	// counts in another residue class than the one configured. Its text
	// says "ticket:", as the ticket strategy and command are named.
	ErrResidue = errclass.Unavailable("ticket: server in the wrong residue class")

	// ErrInUse reports a ticket server that `idgen ticket init --reset`
	// may not renumber: a generator's session on it is live.
	ErrInUse = errclass.Unavailable("ticket: server in use")

	// ErrExhausted reports a biz tag whose max_id has reached 2^63-1, or a
	// ticket server whose counter can go no higher: every ID was handed
	// out, and waiting does not mend it. It has a Permanent method that
	// returns true, by which the servers (httpapi, grpcapi) tell it from
	// an outage without linking this package. It matches neither class
	// of package idgen: the caller's input was fine (not ErrInvalid), and
	// trying again later does not help (not ErrUnavailable).
	ErrExhausted error = permanentError("segment: biz tag exhausted")
)

// The ticket path's errors say "ticket:", as the ticket strategy and the
// `idgen ticket` command are named, not "segment:": these match ErrConfig,
// ErrDSN and ErrNotInstalled with errors.Is.
var (
	errTicketConfig       error = &relabelled{"ticket: invalid config", ErrConfig}
	errTicketDSN          error = &relabelled{"ticket: invalid DSN", ErrDSN}
	errTicketNotInstalled error = &relabelled{"ticket: not installed", ErrNotInstalled}
)

// A relabelled error has a text of its own and matches err with
// errors.Is: a sentinel under another label, or a message that says in its
// own words what its sentinel would.
type relabelled struct {
	msg string
	err error
}

func (e *relabelled) Error() string { return e.msg }
func (e *relabelled) Unwrap() error { return e.err }

// A permanentError is an error that waiting does not mend.
type permanentError string

func (e permanentError) Error() string { return string(e) }

// Permanent reports true: waiting does not mend the error.
func (permanentError) Permanent() bool { return true }

// int64Codec is decimal text limited to the bigint range [0, 2^63-1]: a
// store never hands out more.
type int64Codec struct{ idgen.Uint64Codec }

func (c int64Codec) ParseText(b, text []byte) error {
	v, err := idgen.ParseUint64(text)
	if err != nil {
		return err
	}
	if v > math.MaxInt64 {
		return fmt.Errorf("%w: %s exceeds a bigint (2^63-1)", idgen.ErrOutOfRange, text)
	}
	return c.Uint64Codec.ParseText(b, text)
}

// Scheme returns the scheme of segment IDs: 8 bytes, a positive bigint,
// decimal text, one field "value". Not TimeOrdered: IDs increase within one
// Allocator, but allocators sharing a biz tag interleave by segment. Every
// call returns the same *idgen.Scheme (schemes compare by pointer); do not
// modify it.
func Scheme() *idgen.Scheme { return segmentScheme }

// TicketScheme returns the scheme of ticket-server IDs: 8 bytes, a positive
// bigint, decimal text. Not TimeOrdered: n servers count independently, each
// in its own residue class. Every call returns the same *idgen.Scheme
// (schemes compare by pointer); do not modify it.
func TicketScheme() *idgen.Scheme { return ticketScheme }

var (
	segmentScheme = &idgen.Scheme{Name: "segment", Size: 8, Column: idgen.ColumnBigint, Codec: int64Codec{}}
	ticketScheme  = &idgen.Scheme{Name: "ticket", Size: 8, Column: idgen.ColumnBigint, Codec: int64Codec{}}
)

// Kinds of the three schemes, for idgen.TypedID: a field, slice or map of
// idgen.TypedID[segment.Segment] decodes from JSON, text and SQL with no
// preparation.
type (
	Segment       struct{} // Scheme()
	Ticket        struct{} // TicketScheme()
	InstagramKind struct{} // InstagramScheme() (Instagram is the generator)
)

// Scheme returns Scheme().
func (Segment) Scheme() *idgen.Scheme { return segmentScheme }

// Scheme returns TicketScheme().
func (Ticket) Scheme() *idgen.Scheme { return ticketScheme }

// Scheme returns InstagramScheme().
func (InstagramKind) Scheme() *idgen.Scheme { return instagramScheme }
