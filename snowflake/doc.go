// Package snowflake is the native Snowflake core: 64-bit IDs made of a time
// field counted in ticks since an epoch, node fields (worker, datacenter,
// ...) and a per-tick sequence, issued without coordination by a lock-free
// [Generator].
//
// # Layouts
//
// A [Layout] names the fields from the high bits to the low, with a tick
// ([Layout.Tick]) and an epoch; [Preset] gives the published ones (twitter, sonyflake,
// instagram, discord, ...) and [ParseLayout] reads the text form
//
//	time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z
//
// A layout compiles to one [Span] per field (name, shift, width, mask), which
// [Layout.Spans] returns: a field's value in ID v is v>>Shift & Mask.
// [Layout.Decompose] and [Layout.Compose] take IDs apart and build them.
//
// # The state word
//
// A Generator keeps what it has issued in one atomic uint64, the state, on a
// cache line of its own:
//
//	 63                                                                 0
//	+------+----------+----------------+-----------------+----------------+
//	| zero | clockseq | tick           | guard bits      | sequence       |
//	+------+----------+----------------+-----------------+----------------+
//	                                   |<------------ counter ----------->|
//
//	counter   the last sequence number taken in the tick: the sequence
//	          field's bits, and guard bits above them (min(64 - the time,
//	          sequence and clockseq bits, 20)) that take the values past
//	          the sequence's end; sShift bits in all
//	tick      the last tick issued, the time field's bits, from bit sShift
//	clockseq  only in a layout with a clockseq field (policy Bump): the
//	          value IDs are issued under, from bit csShift = sShift + time
//	          bits, so that one compare-and-swap moves tick and clockseq
//	          together
//	zero      the bits left over when the guard bits stop at 20
//
// The twitter preset (41 time bits, 12 sequence bits, no clockseq) has 11
// guard bits:
//
//	 63                                       23 22        12 11         0
//	+-------------------------------------------+------------+------------+
//	| tick: 41 bits                             | guard: 11  | seq: 12    |
//	+-------------------------------------------+------------+------------+
//
// Next's fast path reads the clock once and takes a sequence number with one
// atomic add on the state (or a compare-and-swap where the guard bits are too
// few for the callers that may add at once). The guard bits absorb the adds
// that run past the sequence's end, so that they never carry into the tick:
// each add claims a distinct value, and a value past the sequence, or one
// whose tick the clock has left, is not issued (a gap, never a duplicate).
// A new tick, a used-up sequence, a clock behind the state, a lease change or
// a high-water mark to write take the slow path, which moves the state by
// compare-and-swap. NextN reserves up to the rest of a tick's sequence in one
// compare-and-swap.
//
// # Invariants
//
//   - IDs from one Generator, under one identity (node values), are unique
//     and strictly increasing: an ID returned after another (in
//     happens-before order, as within one goroutine) is larger. The state
//     only moves up, and every ID is the one value an add or a
//     compare-and-swap claimed. Exceptions: a random field above the
//     sequence orders IDs within a tick by their random bits (and a random
//     field without a sequence makes them unique with high probability
//     only); under policy Bump, IDs across a bump are unique
//     by their clockseq value but not in time order; after a Lease hands the
//     generator another identity, its IDs are unique by their node bits but
//     may sort below the previous identity's in the same tick.
//   - No ID carries a tick that starts later than the clock's reading plus
//     Config.MaxAhead (10 s by default, 1 s under Bump). Only Hold and Bump
//     issue ahead of the clock at all, after a rollback or a restart behind
//     the high-water mark; Stats().Ahead says by how much.
//   - With a HighWaterStore, the high-water mark lies at or after the end
//     of every tick issued: it is durable before the first ID of a tick past
//     it is returned (one synchronous Store per Config.HighWaterAhead of
//     issuing), so that a restart never issues under a tick it issued
//     before; a clock behind the mark meets the rollback policy instead.
//   - Under a Lease, no ID is issued while the lease holds no identity
//     (idgen.ErrLeaseLost), and the node bits of an ID are those of the
//     identity read for it.
//   - A clock rollback is never issued through: it is waited out, refused
//     with *idgen.ClockRollbackError, held at the last tick (Hold), or
//     bumped past (Bump), as [Policy] says.
//
// Unique across nodes holds while no two live generators share a layout's
// node values: the worker ID's job (package workerid).
//
// Sources: Twitter Engineering, "Announcing Snowflake" (2010); Sony,
// sony/sonyflake; RFC 9562 section 5.1 (UUIDv1's clock sequence, the model of
// the clockseq field).
package snowflake
