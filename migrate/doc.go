// Package migrate moves a PostgreSQL table from one key scheme to another
// (bigserial or UUIDv4 keys to Snowflake or UUIDv7 keys) while the
// application keeps writing, without losing a row.
//
// A migration of table t with primary key column id and the children c1, c2
// whose foreign keys reference it (single-column, or composite through a
// unique constraint of t that includes id; t itself when
// self-referencing; a partitioned table, or partitions of one, the new
// column and triggers then going on the partitioned table) runs in phases,
// each recorded in the state table idgen_migrate_state (one row per table,
// in t's schema) so that Run resumes where an interrupted run stopped:
//
//	prepare   one transaction: add t.id_idgen_new and c.fk_idgen_new
//	          (nullable, no default: no table rewrite), the mapping table
//	          t_idgen_map(old PRIMARY KEY, new), the key function
//	          t_idgen_next() and the triggers that give rows inserted
//	          from now on their new key (and children their new foreign key)
//	backfill  batches of --batch rows in creation order (--time-column) or
//	          key order: new keys from AtGenerator.NewAt, written with the
//	          mapping rows and the cursor in one transaction per batch
//	index     CHECK (id_idgen_new IS NOT NULL) NOT VALID + VALIDATE, and a
//	          twin of each index and constraint on id (the primary key's
//	          among them) on id_idgen_new, CREATE ... CONCURRENTLY: no lock
//	          that blocks writes
//	children  per child (per partition), batches of heap blocks (TID range
//	          scans) set fk_idgen_new from the parent; CHECK + VALIDATE;
//	          twins of the indexes, primary keys and unique constraints on
//	          fk (a join table's key), CONCURRENTLY
//	swap      one short transaction under ACCESS EXCLUSIVE locks (lock_timeout
//	          5s, retried): drop the dependent views, rules and triggers,
//	          the foreign keys and the constraints on the moved columns,
//	          rename id to id_old and id_idgen_new to id (fk likewise), SET
//	          NOT NULL (proved by the validated CHECKs, no scan), the
//	          constraints re-added USING INDEX and the other indexes
//	          renamed into place (keeping their names; the old ones become
//	          *_idgen_old), foreign keys re-added NOT VALID where they were
//	          declared, id's default t_idgen_next(), and the views, rules
//	          and triggers re-created so that they read the new columns
//	validate  ALTER TABLE c VALIDATE CONSTRAINT (no lock that blocks
//	          writes); a foreign key declared on a partitioned table is
//	          validated on each partition, then added back on the
//	          partitioned table, which attaches the partitions' copies
//
// Inspect refuses up front, with a *ShapeError naming each shape and a
// workaround, what no run could finish (see Refusal): Run never starts a
// migration its plan does not promise to finish. Abort undoes a migration
// from any phase.
//
// Key updates during the migration propagate: the row keeps its new key
// (a row not backfilled yet gets one), its mapping row moves to the new
// old key, and children that follow through ON UPDATE CASCADE copy the
// new key into their new column. After the swap an update of the new key
// cascades through the re-created foreign keys.
//
// The backfill's batches run with session_replication_role = replica when
// the role may set it (superuser, or GRANT SET ON PARAMETER), so that the
// application's triggers and rules (last_updated) do not fire for them;
// otherwise the plan lists those that fire.
//
// The swap keeps the old key column's default and installs triggers that
// keep the old keys of rows inserted after it (and their mapping rows and
// children's old foreign keys), so that Revert can swap back in one short
// transaction; Finish then drops what the migration left (the old columns
// after a completed run, the new ones after Revert).
//
// Before each batch of the backfill and children phases, Run reads its
// state row and the server (see Options.MaxLag, MaxActive, ChunkTime): it
// waits while the run is paused (Set), a standby lags or too many backends
// are active, reporting through Options.OnThrottle, and takes a batch size
// set while it runs. GetStatus reads the progress the run records.
//
// Keys issued during the migration. For a Snowflake target, t_idgen_next()
// is PL/pgSQL parameterised by the layout: the tick of clock_timestamp()
// since the epoch, the node fields of the --to spec with the worker field
// (or the first node field) set to 2^bits-1, a worker ID reserved for the
// trigger, and the sequence field taken from a PostgreSQL sequence modulo
// 2^sequence bits (unique while fewer than 2^sequence rows are inserted in
// one tick; the unique index would refuse a duplicate). The backfill uses
// worker ID 2^bits-2. The application's generators must use other worker
// IDs. For a UUIDv7 target, t_idgen_next() is a PL/pgSQL UUIDv7 (RFC 9562):
// the 48-bit Unix ms of clock_timestamp() over gen_random_uuid()'s random
// bits with the version nibble set to 7.
//
// Order. For a bigint → Snowflake migration every new key must be larger
// than the current maximum key, so that keys issued before and after stay
// in one order (cursors such as "WHERE id > $last" keep working, and a
// value at most the old maximum is recognisably an old key, found in the
// mapping table). Inspect computes the smallest key the backfill can issue
// and Run refuses when it is not above the maximum.
//
// The old key columns stay, renamed to id_old and fk_old, nullable, with
// their indexes and the mapping table, until Finish, which drops them and
// the sequence of id_old's default when nothing else uses it. The key
// column becomes the table's last column (PostgreSQL cannot reorder
// columns without rewriting the table).
package migrate
