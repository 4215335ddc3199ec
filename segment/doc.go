// Package segment issues dense 64-bit IDs from a database, without worker
// IDs: the segment allocator of Meituan's Leaf, Flickr's ticket servers, and
// Instagram's PL/pgSQL IDs.
//
// # Segment allocator (Leaf)
//
// A [Store] holds one row per biz tag:
//
//	idgen_segments(biz_tag text primary key, max_id bigint not null,
//	               step int not null, description text,
//	               updated_at timestamptz not null default now())
//
// Reserving a segment adds step to max_id atomically; the range
// (max_id - step, max_id] then belongs to the caller, which hands it out from
// memory. The store is chosen by the DSN's scheme ([Open]):
//
//	postgres://  one round trip: UPDATE ... RETURNING (pgx/v5 pool)
//	mysql://     Leaf's transaction: UPDATE, then SELECT (go-sql-driver/mysql)
//	redis://     INCRBY on key "idgen:segment:{<tag>}" (go-redis/v9)
//
// An [Allocator] keeps two segments (Leaf's double buffer): once
// Config.Prefetch of the current one is used (10 % by default), the next is
// fetched in the background, so a switch never waits on the store while it
// answers within that window. The step adapts: it doubles when a segment
// lasted under 15 minutes and halves when one lasted over 30, within
// [Config.MinStep, Config.MaxStep].
//
// The adaptive prefetcher (the default; package prefetch) raises the step
// to at least 2 × rate × p99 fetch latency × Config.Safety and starts a
// fetch once fewer than rate × p99 × Safety IDs remain. What it cannot
// avoid: before the first ID is issued the rate is unknown, so the first
// segment (Config.Step or the tag's step) is sized blind, and the second
// fetch starts once the first IDs show a rate ([FirstSample] IDs, or 10 %
// of the segment when fewer). When the first segment runs out before that
// fetch returns (1000 IDs last 50 µs at 20 M IDs/s; a fetch takes
// milliseconds), the first switch waits: only a reservation of about rate
// × latency IDs made before the rate is known would avoid it, which means
// the max step for every tag, and a tag used at 10 IDs/s would lose that
// many at each restart. Config.Rate, a hint of the rate, avoids it: New
// then reserves the second segment before it returns. After the first
// segment the rate is measured (or, when the IDs came in a burst, under
// 1 ms, known to be high: the step is then the max step at once, and the
// next fetch again starts after FirstSample IDs), and no later switch
// waits unless rate × fetch latency comes to over Safety times what the
// figures said when the segment was fetched (a fetch over Safety × the p99
// of the recent ones, a rate that rose that much, or both), or the max step
// lasts less than one fetch (Stats().StepBoundTooSmall, Config.OnLimit).
// The raise never keeps a step past what lasts 30 minutes
// (Config.ShrinkAbove) at the newest rate measured, so the steps of a tag
// that slows down halve by Leaf's rule. IDs lost at a crash or Close are
// those of the two segments held, at most 2 × Config.MaxStep.
//
// When the store is down the allocator keeps serving what it holds and
// retries with backoff; Next returns idgen.ErrUnavailable only once both
// segments are empty. NextN is all or nothing: a request larger than what
// the allocator holds while the store is down fails whole and leaves every
// held ID to the requests that follow.
//
// max_id never passes 2^63-1: near the top the store reserves what is left
// (a short last segment), and once max_id is 2^63-1 the allocator hands out
// what it holds and then fails with ErrExhausted ("biz tag exhausted"),
// which waiting does not mend; move to a new biz tag.
//
// Segment IDs increase strictly within one allocator (and within one
// goroutine), but IDs of allocators sharing a tag interleave by segment, not
// by time: the scheme is not TimeOrdered. A restart loses the unused rest of
// the allocator's segments (a gap), never issues an ID twice.
//
// # Ticket servers (Flickr)
//
// A [TicketServer] issues IDs in its residue class: server k of n issues
// k, k+n, k+2n, ... so that n servers never collide. Each server keeps its
// own class, so a list of servers may come in any order; [InitTickets]
// (`idgen ticket init`) sets them up or renumbers them. [Tickets]
// round-robins over n servers and fails over when one is down; [DialTickets]
// starts with the servers that answer and takes the others in when they do.
// Next costs one round trip per ticket; NextN takes a batch from one server
// ([TicketBatcher]) in as few as the store allows. Servers:
//
//	postgres://  a sequence per server, CREATE SEQUENCE ... START k INCREMENT n
//	             (the class is the sequence's own START and INCREMENT);
//	             a batch is nextval over generate_series, 10,000 per round trip
//	mysql://     REPLACE INTO tickets64 (stub) VALUES ('a'); SELECT LAST_INSERT_ID()
//	             on a dedicated connection with auto_increment_increment = n,
//	             auto_increment_offset = k (the class is the table's comment);
//	             a batch is 1,024 tickets per round trip, 16 per REPLACE under
//	             innodb_autoinc_lock_mode 0 or 1, one under 2
//	redis://     INCRBY n on key idgen:ticket:{tickets64}, which holds the last
//	             ticket (the class is the hash idgen:ticket:{tickets64}:class);
//	             a batch of m is one INCRBY m·n
//
// Renumbering servers under a running generator would issue IDs twice, so
// a generator draws tickets only within a session, and `ticket init
// --reset` refuses (ErrInUse) while one is live: a PostgreSQL session holds
// a shared advisory lock on the sequence, a MySQL session one of 128 named
// locks of the table, from the client's first ticket to its Close; a Redis
// session is renewed by each ticket and lapses a minute after the last.
// A reset fences every server before it reads how far they counted, and no
// session opens until it is done. A client whose session ended without its
// knowing (a connection cut, a Redis session lapsed) checks its server's
// class when it opens the next: a class changed meanwhile stops the client
// with ErrResidue rather than let it issue in the old one.
//
// # Instagram
//
// [InstallInstagram] installs the PL/pgSQL function idgen_instagram_id(seq,
// shard) that composes, inside PostgreSQL,
//
//	 63                            23 22        10 9                0
//	+--------------------------------+------------+------------------+
//	| time: ms since 1314220021721   | shard      | sequence:        |
//	| (2011-08-24T21:07:01.721Z)     | 0 to 8191  | nextval(seq)%1024|
//	| 41 bits                        | 13 bits    | 10 bits          |
//	+--------------------------------+------------+------------------+
//
// which [Instagram] fetches. Its scheme is the snowflake preset "instagram",
// so the IDs decompose into time, shard and sequence. Unique while a shard's
// sequence advances fewer than 1024 times within one millisecond.
//
// Sources: Meituan tech blog, "Leaf: Meituan's distributed ID generation
// system" (2017); Flickr code.flickr.net, "Ticket Servers: Distributed Unique
// Primary Keys on the Cheap" (2010); Instagram Engineering, "Sharding & IDs at
// Instagram" (2012).
package segment
