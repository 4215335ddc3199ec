// Package workerid gives a node its identity, the worker ID (and the
// datacenter ID where the layout has one) that keeps its Snowflake IDs apart
// from every other live node's. A [Source] is an idgen.Lease: pass it as
// snowflake.Config.Lease. [Open] opens a source from its URL form; each
// also has a constructor of its own.
//
// # Worker ID sources
//
// Fixed at start, never lost, nothing to release (a [Static]):
//
//   - [NewStatic] (URL static:N): a number from the configuration.
//   - [Env] (env): the IDGEN_WORKER_ID environment variable, read with
//     the getenv the program passes.
//   - [Ordinal] (ordinal[:offset]): a Kubernetes StatefulSet ordinal, the
//     N of hostname name-N, plus an offset.
//   - [IP] (ip[:bits]): the low bits of the first private IPv4 address, as
//     Sonyflake's default; safe only on a fixed network.
//   - [HostnameHash] (hostname-hash?accept_collisions=true): an FNV-1a
//     hash of the hostname modulo the space, with a [Warner] warning that
//     two hosts may collide.
//
// Leased from a store, renewed, and lost when the renewals stop (see the
// lease algorithm below):
//
//   - [Postgres] ([OpenPostgres], postgres://): a row per worker ID in a
//     PostgreSQL table (idgen_workers), taken with SELECT ... FOR UPDATE
//     SKIP LOCKED.
//   - [MySQL] ([OpenMySQL], mysql://): the same rows in MariaDB or MySQL,
//     taken with a conditional UPDATE.
//   - [Etcd] ([OpenEtcd], etcd://): a key created only if absent and
//     attached to an etcd lease.
//   - [ZK] ([OpenZK], zk://): an ephemeral ZooKeeper node, which ends with
//     the session, as Leaf's.
//   - [Redis] ([OpenRedis], redis://): a key set with SET NX PX; see Redis
//     for why it is the weakest of the five (asynchronous replication).
//
// # The lease algorithm
//
// The five leases run one algorithm; each store supplies the same
// operations, every one of them conditional: acquire, renew, release, and
// two writes of the high-water mark. Times are read on LeaseConfig.Clock,
// except the TTL, which runs on the store's clock.
//
// Timing. The store keeps a lease TTL (default 30 s) after its last
// renewal. The node renews every RenewEvery (default TTL/10, 3 s) and
// trusts its identity until LostAfter (default TTL/2, 15 s) after the start
// of its last successful renewal. A configuration without
// RenewEvery < LostAfter < TTL is refused with ErrConfig. A renewal that
// succeeded extended the lease on the store after it started, so the store
// holds the lease until at least that start + TTL, while the node stops
// issuing at that start + LostAfter: TTL - LostAfter earlier (15 s by
// default), a margin for the two clocks measuring time differently. At
// start, [OpenPostgres] compares the local clock with the server's and
// [OpenEtcd] with its live peers' records; beyond LeaseConfig.MaxSkew
// (default 10 s) opening fails with ErrClockSkew.
//
// Acquire. Opening acquires before it returns. The preferred worker ID is
// LeaseConfig.Pin (then that one alone: ErrWorkerIDHeld while a live lease
// holds it), else the one the LeaseConfig.StateFile names (ZK: else the one
// its forever/<node> names). The free IDs, those without a live lease, are
// tried in this order: the IDs whose stored high-water mark has passed (by
// the lease's clock) or that have none, the preferred one first, then the
// lowest; then the IDs whose mark is still ahead, the earliest mark first,
// so that a node restarted inside the high-water window takes another ID
// rather than wait out its old one's. An ID a concurrent node took first
// is skipped; with every ID held, acquire fails with idgen.ErrNoWorkerIDs.
// Taking an ID raises its generation, the fencing token: PostgreSQL's and
// MySQL's generation column + 1, Redis's INCR counter, etcd's create
// revision of the key, ZooKeeper's creation zxid of the node. The acquire
// also reads the ID's stored high-water mark, the previous holder's. The
// ID is written to the state file and published as a new *idgen.Identity
// {WorkerID, DatacenterID, Generation}, trusted until the acquire's start
// + LostAfter.
//
// Renew. A goroutine the Source owns renews every RenewEvery:
// PostgreSQL and MySQL set the row's expires_at to the server's now() +
// TTL, Redis extends the key's PEXPIRE, etcd sends a keep-alive and
// rewrites the lease record with its wall time, and ZooKeeper, whose
// session its client keeps alive, checks that the node is still this
// session's and writes forever/<node>. One attempt gives up
// (LostAfter - RenewEvery) / 2 after it starts, or at the deadline if
// sooner, so that two attempts fit in the time a lease rides out (etcd
// moves to its next member after a failure). Then:
//
//   - A renewal that succeeded and started before the deadline moves the
//     deadline to its start + LostAfter and writes the mark ahead (below).
//   - A failure before the deadline is retried after RenewEvery/4 (at least
//     10 ms).
//   - A lease the store no longer holds for this node (it expired and may
//     have passed to another), or a deadline that passed, loses the
//     identity: the ID is released (best effort, waiting at most
//     RenewEvery) and the goroutine acquires again at once, then every
//     RenewEvery/4 (at least 10 ms) until an acquire succeeds, each bounded
//     by LostAfter. A new acquire gives a new *Identity with a higher
//     generation, and perhaps another worker ID.
//
// Lost. At the deadline, Identity returns nil and the channel Lost returned
// is closed. A snowflake.Generator given the Source as its Lease reads
// Identity on every ID and fails with idgen.ErrLeaseLost while it is nil,
// so no ID is issued under a worker ID that may have passed to another
// node. LeaseStatus gives the time since the last good renewal, for
// metrics and alerts.
//
// Fencing. Every write after the acquire (renewal, release, mark) applies
// only while the lease is still this node's at its generation: PostgreSQL
// and MySQL update WHERE generation = gen AND owner = owner; Redis runs a
// Lua script that compares the key's token (owner and generation); etcd
// runs a transaction comparing the key's lease and create revision;
// ZooKeeper checks the node's creation zxid and session before it writes.
// A write of a node whose lease passed on changes nothing: the renewal
// loses the identity, and a mark's Store returns idgen.ErrLeaseLost.
//
// High-water mark. A lease is a snowflake.HighWaterStore, so that the
// next holder of a worker ID does not issue under a tick the last one
// issued. Load returns the mark read at acquire; a generator reads it at
// every new identity and applies its rollback policy while its clock is
// behind it. At acquire and after each good renewal, the renewal goroutine
// writes a mark ahead: the renewal's start + LostAfter + [AheadSlack]
// (1 s), and never below the previous holder's mark or a mark already
// asked for, covering every ID the node may issue before it would count
// itself lost. Store returns at once for a mark at or below it, with no
// round trip on the request path; a higher mark is written synchronously,
// for at most LostAfter (and not past the loss of the identity or Close),
// and a store that does not answer gives idgen.ErrUnavailable. Stored
// marks only rise.
//
// Release. Close stops the renewals, loses the identity, and, when a mark
// was written ahead under this generation, replaces it with the highest
// mark the generator asked Store for (or the previous holder's, if
// higher): the one write that moves a mark down, so that the next holder
// need not wait out the time written ahead, which no ID reached. It then
// releases the ID: PostgreSQL and MySQL expire the row at once and clear
// its owner, Redis deletes the key, etcd revokes the lease, and ZooKeeper
// deletes the node; Close waits at most RenewEvery for the store. A
// released ID is free at once; one whose release did not reach the store
// is free when its TTL runs out. A loss releases the same way.
//
// Sources: Twitter Engineering, "Announcing Snowflake" (2010); Baidu
// uid-generator's WORKER_NODE table; Meituan Leaf's ZooKeeper snowflake
// mode (the ephemeral claim, the forever node and its startup clock
// check); Sony's sonyflake (the low IP bits); CosId's and yitter's Redis
// worker ID distributors; Martin Kleppmann, "How to do distributed
// locking" (2016), the fencing token.
package workerid
