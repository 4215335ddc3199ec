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
// Errors are sentinels ([ErrClockRollback], [ErrLayoutExhausted], ...) to be
// matched with [errors.Is]; where a caller needs data the error is typed
// ([*ClockRollbackError]) and found with [errors.As].
//
// The conformance suite in package idgentest runs any Generator through the
// same checks: uniqueness under concurrency, order and round trips.
package idgen
