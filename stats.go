package idgen

import (
	"context"
	"time"
)

// Stats is a snapshot of a generator's counters and clock state, a plain
// value that a server reads once per scrape (StatsOf) and a program may
// log or compare. Counters count from the generator's start. A generator
// fills the groups of fields it keeps and names them in Kinds; the fields
// of the other groups are zero, and a zero there means "not kept", not
// "none happened".
//
// Generators that implement StatsReporter: package snowflake's Generator
// (StatsClock, and StatsLease under a lease renewed against a store),
// package segment's Allocator (StatsSegment) and Tickets (StatsTickets),
// and through Unwrap every wrapper of one of them.
type Stats struct {
	// Kinds names the groups of fields the generator fills.
	Kinds StatsKind

	// StatsClock: a generator on the Snowflake core.

	// SequenceWaits counts the waits for the next tick because a tick's
	// sequence was used up (a spin of a few µs counts once per check).
	SequenceWaits uint64
	// ClockRollbackWaits counts the sleeps to let a clock behind the last
	// tick issued pass it (rollback policies wait and wait-then-fail).
	ClockRollbackWaits uint64
	// ClockRollbackFailures counts the *ClockRollbackError returned.
	ClockRollbackFailures uint64
	// ClockStalls counts the clock readings that stayed the same for many
	// ticks of real time while IDs were asked for, once per reading.
	ClockStalls uint64
	// ClockStepsForward and ClockStepsBack count the wall clock steps the
	// generator's clock followed, and ClockStepped is their sum, > 0
	// forward. A clock that does not follow steps counts none.
	ClockStepsForward, ClockStepsBack uint64
	ClockStepped                      time.Duration
	// Ahead is how far the start of the last tick issued lies ahead of the
	// clock, 0 when the clock has reached it: up to MaxAhead while a
	// policy that holds issues ahead of a clock behind it.
	Ahead time.Duration
	// MaxAhead is how far ahead of its clock the generator may issue, 0
	// under the policies that never issue ahead.
	MaxAhead time.Duration
	// Drift is the system wall clock minus the generator's clock, > 0 when
	// the wall clock is ahead (a step not followed yet); 0 for a clock that
	// does not tell.
	Drift time.Duration
	// BehindHighWater is how far the clock is behind HighWater, the
	// high-water mark read at start or at a new lease identity; 0 once the
	// clock has passed it. HighWater is zero when no mark was read.
	BehindHighWater time.Duration
	HighWater       time.Time
	// LayoutEnd is when the layout's time field runs out: from then on the
	// generator issues nothing (ErrLayoutExhausted).
	LayoutEnd time.Time
	// ClockSeq is the clockseq value IDs are issued under, 0 without a
	// clockseq field; Bumps counts this process's bumps of it.
	ClockSeq, Bumps uint64

	// StatsLease: a worker ID leased from a store (LeaseStatusReporter).

	// Lease is the lease's status.
	Lease LeaseStatus

	// StatsSegment: a segment allocator, which issues from ranges fetched
	// from a store.

	// Segments counts the successful fetches (segments), the first
	// included; FetchErrors the failed fetch attempts.
	Segments, FetchErrors int64
	// FetchLatency is the total latency of the successful fetches and
	// MaxFetchLatency the slowest.
	FetchLatency, MaxFetchLatency time.Duration
	// Remaining is the IDs held in memory, issuable without a store round
	// trip: those left in the current and the next segment.
	Remaining int64
	// Step is the size of the latest segment, in IDs.
	Step int64
	// Waits counts the calls that found both segments empty and waited for
	// a fetch; Unavailable the calls that got ErrUnavailable.
	Waits, Unavailable int64
	// Rate is the consumption rate in IDs/s (a moving average),
	// P99FetchLatency the p99 of the recent fetch latencies, and
	// StepBoundTooSmall tells that the largest step allowed lasts less
	// than P99FetchLatency at Rate, so that callers wait at each switch
	// whatever the timing. All three are zero for a fixed prefetch.
	Rate              float64
	P99FetchLatency   time.Duration
	StepBoundTooSmall bool

	// StatsTickets: ticket servers a generator round-robins over.

	// TicketServers is how many there are; TicketServersDown how many are
	// down now (not joined yet, or skipped for a cooldown after a failure).
	TicketServers, TicketServersDown int
}

// A StatsKind names groups of Stats fields; the constants are bits that
// combine with |.
type StatsKind uint8

// The groups of Stats fields.
const (
	StatsClock   StatsKind = 1 << iota // the Snowflake core's clock and counters
	StatsLease                         // Lease
	StatsSegment                       // a segment allocator's counters
	StatsTickets                       // ticket servers up and down
)

// Has reports whether s's generator fills every group of fields in k.
func (s Stats) Has(k StatsKind) bool { return s.Kinds&k == k }

// MeanFetchLatency returns FetchLatency / Segments, 0 before the first
// fetch.
func (s Stats) MeanFetchLatency() time.Duration {
	if s.Segments == 0 {
		return 0
	}
	return s.FetchLatency / time.Duration(s.Segments)
}

// A StatsReporter is a Generator that keeps counters: Stats returns them
// and issues nothing. Find one with StatsOf, which looks through wrappers.
type StatsReporter interface {
	Stats() Stats
}

// A Readier is a Generator that can tell whether it is able to issue IDs
// now, issuing nothing: a clock inside its layout's lifetime, a worker-ID
// lease held, a store within reach. Ready returns nil when it can, else an
// error saying why not, of the kind Next would return. Find one with
// ReadyOf, which looks through wrappers.
type Readier interface {
	Ready(ctx context.Context) error
}

// StatsOf returns the Stats of g, or of the generator g wraps: it walks
// the chain of Unwrap() Generator methods from g, as net/http's
// ResponseController walks Unwrap() http.ResponseWriter, and returns the
// Stats of the first StatsReporter on it. ok is false, and the Stats zero,
// when there is none: a generator that keeps no counters.
func StatsOf(g Generator) (s Stats, ok bool) {
	if r, ok := unwrapTo[StatsReporter](g); ok {
		return r.Stats(), true
	}
	return Stats{}, false
}

// ReadyOf returns the Readier of g, or of the generator g wraps: the first
// Readier on the chain of Unwrap() Generator methods from g, as StatsOf
// walks it. ok is false when there is none; a server then probes g with
// Next, or takes it to be ready.
func ReadyOf(g Generator) (r Readier, ok bool) {
	return unwrapTo[Readier](g)
}

// unwrapTo returns the first T on g's Unwrap chain.
func unwrapTo[T any](g Generator) (T, bool) {
	for g != nil {
		if t, ok := g.(T); ok {
			return t, true
		}
		u, ok := g.(interface{ Unwrap() Generator })
		if !ok {
			break
		}
		g = u.Unwrap()
	}
	var zero T
	return zero, false
}
