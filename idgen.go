// Package idgen is the root of a toolkit for distributed unique IDs.
//
// Every strategy (Snowflake layouts, segment allocators, ticket servers,
// UUIDv4/v7, ULID, KSUID, Sonyflake, xid) is a [Generator] that issues [ID]
// values of one [Scheme]. An ID is a comparable value that holds up to 20
// bytes inline, so issuing one never allocates.
//
// A Scheme carries what the rest of the toolkit needs to know about a kind of
// ID: its name, its size in bytes, its canonical text form, its native
// PostgreSQL column type, whether it is time-ordered, and how it decomposes
// into named fields.
//
// Column types by scheme family:
//
//	64-bit (Snowflake family, Sonyflake, segment, ticket, Instagram)  bigint
//	UUIDv4, UUIDv7, ULID, flake128 (16 bytes)                          uuid
//	KSUID (20 bytes), xid (12 bytes)                                   bytea
//
// A [Batcher] issues many IDs in one step; [NextN] uses it when a Generator
// is one. An *ID is a [flag.Value] whose scheme is fixed up front: start it
// from [Scheme.Zero] or a default ID, and the flag parses text in that
// scheme ([ID.Set]).
//
// Errors are sentinels ([ErrClockRollback], [ErrLayoutExhausted], ...) to be
// matched with [errors.Is]; where a caller needs data the error is typed
// ([*ClockRollbackError]) and found with [errors.As].
//
// The conformance suite in package idgentest runs any Generator through the
// same checks: uniqueness under concurrency, order and round trips.
package idgen

import "context"

// A Generator issues unique IDs of one Scheme. Implementations are safe for
// concurrent use.
type Generator interface {
	// Next returns a new ID. It may block (sequence exhausted within a tick,
	// clock rollback under a waiting policy, a store round trip) and honours
	// ctx while it does.
	Next(ctx context.Context) (ID, error)

	// Scheme describes the IDs Next returns.
	Scheme() *Scheme
}

// A Batcher is a Generator that can issue many IDs in one step, cheaper per ID
// than calling Next repeatedly. Detect it with a type assertion, or call NextN.
type Batcher interface {
	// NextN fills dst with new IDs in increasing order and returns how many it
	// wrote. It returns n < len(dst) only together with a non-nil error.
	NextN(ctx context.Context, dst []ID) (int, error)
}

// NextN fills dst from g, in one step when g is a Batcher and by calling Next
// otherwise. It returns n < len(dst) only together with a non-nil error.
func NextN(ctx context.Context, g Generator, dst []ID) (int, error) {
	if b, ok := g.(Batcher); ok {
		return b.NextN(ctx, dst)
	}
	for i := range dst {
		id, err := g.Next(ctx)
		if err != nil {
			return i, err
		}
		dst[i] = id
	}
	return len(dst), nil
}
