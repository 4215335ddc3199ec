// Package compare measures what each ID scheme costs a PostgreSQL B-tree:
// it inserts every chosen strategy's keys into its own table on the same
// server, with the same workload, and reports the index's physics side by
// side with a bigserial baseline.
//
// # Workload
//
// Each strategy gets a table
//
//	id          <the scheme's native column: bigint, uuid, bytea or text> PRIMARY KEY
//	created_at  timestamptz NOT NULL
//	payload     bytea NOT NULL          -- 100 bytes
//
// with autovacuum off, so that nothing but the inserts touches the index.
// The bigserial baseline's id is a bigserial filled by the server. Rows are
// inserted by Writers concurrent connections, each with its own generator
// and, when the strategy has a worker key (worker, machine, node, shard,
// process), its own worker ID: writer k appends "&worker=k" (or base+k when
// the spec sets one), so that k-sorted schemes interleave as they do in
// production. Writers claim batches of Batch rows from a shared counter and
// send each batch as one binary COPY (Batch > 1) or as single-row autocommit
// INSERTs of a prepared statement (Batch = 1). A COPY goes out in one
// write (query, data, CopyDone) and each writer keeps PipelineDepth
// batches in flight, so the server never waits on the client. Writers run with
// synchronous_commit = off: every batch still commits and writes its WAL,
// but does not wait for the disk, so the figures are the index's cost and
// not the disk's fsync latency.
//
// Phases: Preload rows (optional), then CHECKPOINT, then the Rows measured
// rows. Every metric below covers the measured phase only. After CHECKPOINT,
// the first change to each page writes a full-page image into the WAL; the
// FPI cost of scattering keys over many pages only shows in this state.
//
// A reference row, "generate_series", times a plain
// INSERT INTO t (created_at, payload) SELECT now(), $1 FROM generate_series(1, Rows)
// into a bigserial table of the same shape, in the same run: the bigserial
// baseline's rows/s should be close to it, which shows that the harness is
// not what it measures.
//
// # Metrics (one Result per strategy)
//
//	metric              unit     source
//	seconds             s        wall time of the measured phase (first batch sent to last batch acknowledged)
//	rows_per_sec        rows/s   rows / seconds
//	rows_per_sec_tenths rows/s   the same for each tenth of the rows, in order: the curve falls when the index outgrows shared_buffers
//	p50_ms, p99_ms      ms       batch latency percentiles: one COPY and its commit, from when the server could start it
//	                             (its send, or the previous batch's acknowledgement) to its acknowledgement; for batch 1,
//	                             one INSERT's round trip
//	index_bytes         bytes    pg_relation_size(index)
//	table_bytes         bytes    pg_relation_size(table), main fork
//	index_bytes_per_row bytes    index_bytes / (preload + rows)
//	key_bytes           bytes    the key datum: bigint 8, uuid 16, bytea and text length + 1 (varlena header)
//	leaf_pages          pages    pgstattuple's pgstatindex(index).leaf_pages
//	avg_leaf_density    %        pgstatindex(index).avg_leaf_density: used space over usable space of the leaf pages
//	leaf_fragmentation  %        pgstatindex(index).leaf_fragmentation: leaf pages whose right sibling sits at a lower block number
//	page_splits         splits   Δ leaf_pages over the measured phase (an insert-only B-tree gains one leaf page per leaf split; the
//	                             first page of an empty index is not a split); from WAL when pgstattuple is unavailable
//	wal_page_splits     splits   pg_walinspect's pg_get_wal_records_info over the phase's LSN range: Btree SPLIT_L and SPLIT_R
//	                             records at level 0 whose first block is this index (the cross-check of page_splits)
//	wal_bytes           bytes    pg_current_wal_insert_lsn() after minus before
//	wal_fpi             images   pg_stat_wal.wal_fpi after minus before
//	wal_fpi_bytes       bytes    sum(fpi_length) of pg_get_wal_records_info over the phase's LSN range
//	idx_blks_read       blocks   pg_statio_user_indexes.idx_blks_read delta: index blocks not found in shared_buffers
//	                             (read from the OS or disk, or added to the index: extending it counts as a read)
//	idx_blks_hit        blocks   pg_statio_user_indexes.idx_blks_hit delta: index blocks found in shared_buffers
//
// WAL and pg_stat_wal figures are server-wide: on a server shared with other
// work (DSN given) they include that work's WAL. The throwaway cluster has
// none. A metric that cannot be measured (pgstattuple or pg_walinspect not
// installable, no privilege for CHECKPOINT) is null in results.json, "n/a"
// in the table, and listed in the Result's Unavailable field; the Report's
// Notes say why.
//
// # Database
//
// With a DSN, tables go in a dedicated schema (idgen_compare_<random>) that
// the run creates and drops at the end unless Keep is set; nothing else is
// dropped. The extensions pgstattuple and pg_walinspect are created if
// missing and left installed (other sessions may use them). Without a DSN,
// Run provisions a throwaway cluster (see StartCluster): initdb and pg_ctl
// from PATH or /usr/lib/postgresql/*/bin, run as the postgres user when the
// process is root, listening on a Unix socket in a temporary directory that
// is removed afterwards.
package compare
