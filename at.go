package idgen

import "time"

// An AtGenerator is a Generator of a time-ordered scheme that can also issue
// an ID for a given creation time instead of the clock's: the tool for
// backfilling keys from a created_at column. Detect it with a type
// assertion.
//
// The ID's time field encodes t at the scheme's resolution (1 ms for
// Snowflake's default layout, UUIDv7, ULID and flake128; 10 ms for
// Sonyflake; 1 s for KSUID and xid). IDs from NewAt are unique among
// themselves in the same way as Next's: by random bits (UUIDv7, ULID, KSUID),
// a counter (xid), or a per-tick sequence (the Snowflake family, flake128).
// Sequence-based generators need t in nondecreasing order, as a backfill
// ordered by created_at gives; see each implementation for what happens
// otherwise. NewAt never blocks and never reads the clock.
//
// IDs from NewAt and IDs from Next share the node bits, so a sequence-based
// generator used for both may issue the same ID twice when t falls in a tick
// Next also issues: backfill with a worker ID of its own.
type AtGenerator interface {
	Generator
	// NewAt returns an ID whose time is t. Errors wrap ErrBeforeEpoch,
	// ErrLayoutExhausted or ErrOutOfRange when t does not fit the scheme's
	// time field, or ErrClockRollback when a sequence-based generator is
	// asked for a tick behind the last one NewAt issued.
	NewAt(t time.Time) (ID, error)
}
