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
// same checks: uniqueness under concurrency, order, round trips, context and
// Close. Every generator strategies.New returns is an io.Closer; after Close
// its Next and NextN return [ErrClosed].
//
// # IDs in fields, slices and maps: TypedID
//
// A [TypedID] is an ID whose type fixes its scheme, through a [Kind]:
// idgen.TypedID[strategies.UUIDv7], idgen.TypedID[snowflake.Twitter]. Its
// zero value decodes from JSON, text, a flag and SQL, so a struct field, a
// []TypedID or a map of them needs no preparation, and what decodes is ==
// to what was encoded. The untyped [ID] stays for code that handles any
// scheme; it decodes only in the scheme it already has ([Scheme.Zero]), and
// the zero ID refuses to decode with [ErrNoScheme], naming both forms.
//
// Why typed IDs, and why this shape. The designs studied:
//
//   - google/uuid's UUID is a [16]byte: comparable, and its zero value
//     (uuid.Nil) decodes, because the type is the scheme. An ID of any
//     scheme cannot be that: the bytes alone do not tell a Snowflake of one
//     layout from a plain integer, or a UUIDv7 from a ULID. So the scheme
//     must come from the type, and TypedID takes google/uuid's shape: the
//     bytes inline and nothing else, == meaning the same bytes of the same
//     type.
//   - net/netip.Addr is comparable and its zero value means something
//     ("no address"), which its methods respect. The untyped ID follows it:
//     its zero value means "no ID, no scheme"; it marshals to null and
//     refuses to decode rather than pretend to be a value of some scheme.
//   - time.Time's == compares a *Location and a monotonic reading besides
//     the instant, so two equal times can be !=. The untyped ID used to fall
//     into the same pit: a decimal decoded into a zero ID took the plain
//     int64 scheme and printed the same digits as the Snowflake it came
//     from, yet was != to it. Decoding no longer guesses a scheme, and a
//     TypedID carries no scheme field of its own: nothing hidden can make
//     equal IDs differ.
//
// A Kind is a type parameter rather than a value so that the zero value
// needs no constructor. A scheme that depends on configuration (a layout of
// your own, a TypeID prefix) gets a Kind in three lines: an empty struct
// whose Scheme method returns the scheme kept in a package variable.
//
// # JSON and JavaScript
//
// An ID encodes as a JSON string of its canonical text, so that 64-bit
// values survive JavaScript, whose numbers hold integers exactly only up to
// 2^53. A bare JSON number is accepted for 8-byte schemes up to 2^53
// ([MaxJSONNumber]); above it, UnmarshalJSON returns an error wrapping
// [ErrOutOfRange] that says why: a JavaScript client can only have sent
// such a number after rounding it, perhaps into another ID. Teams whose IDs
// must be plain JavaScript numbers use the 53-bit snowflake preset js53.
package idgen
