// Package compare measures what each ID scheme costs a PostgreSQL B-tree
// (and, with Engine "mariadb", an InnoDB clustered index):
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
// and, when the strategy has a worker key (a Snowflake layout's
// snowflake.Layout.WorkerField; else its worker or machine key), its own worker
// ID: writer k's spec gets worker=k (Spec.With; base+k when
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
// # Scenarios: in memory and out of memory
//
// A team picks an ID scheme for the day its table is many times its
// memory. On the throwaway servers, Config.Scenarios runs every row in
// two scenarios, one after the other, each on a server of its own:
//
//   - ScenarioInMemory: the configured buffer (SharedBuffers, BufferPool;
//     128MB), which holds all the data at the default sizes;
//   - ScenarioOutOfMemory: one buffer for every row, sized so that the
//     Baseline's final table and index (measured in memory, else
//     estimated at 171 B a row on PostgreSQL and 146 B on InnoDB) are
//     MemoryRatio (8) times the buffer, and misses that go to the device:
//     debug_io_direct = data on PostgreSQL 16 or later,
//     innodb_flush_method = O_DIRECT on InnoDB. A small buffer alone would
//     measure misses served from the OS page cache, in microseconds, not
//     what a table larger than the memory costs. The run checks that
//     direct I/O took effect: the setting, and the O_DIRECT flag of every
//     data file the server's processes hold open (/proc/PID/fdinfo);
//     Scenario.DirectIOCheck says what it found. PostgreSQL 15 has no
//     direct I/O: the scenario runs, with a note. InnoDB's buffer pool
//     cannot go below 6MB: below 340,000 rows the ratio is smaller, with a
//     note.
//
// The claim behind the scenario is that cost depends on the ratio of data
// to memory, not on the size: the opt-in TestScaleModel checks it at N
// and 8N rows. With a DSN the server's own settings are the one scenario,
// and Scenario.OSCache says whether its misses can be served from the OS
// page cache (no direct I/O setting) and what that means for the figures.
//
// Device reads and writes (Result.DeviceReads, DeviceWrites), over the
// measured phase, server-wide:
//
//	PostgreSQL ≥ 16  pg_stat_io: sum(reads), sum(writes) WHERE object = 'relation' (tables and indexes, every
//	                 process: backends, checkpointer, background writer, PostgreSQL 18's I/O workers), 8 kB blocks
//	InnoDB           SHOW GLOBAL STATUS Innodb_pages_read, Innodb_pages_written deltas, 16 kB pages
//
// They are the device's only with direct I/O; otherwise some are served
// by the OS page cache.
//
// # Keys the server generates
//
// ServerKeys are rows whose keys PostgreSQL generates as the column's
// DEFAULT: pg-uuidv7 (uuidv7(), PostgreSQL 18) and pg-uuidv4
// (gen_random_uuid(), 13). They are loaded the same way as the Baseline:
// binary COPY of created_at and payload, the server fills the key; so
// their ratio to the Baseline compares key schemes, not loading paths.
// The default strategies include those the server has. They get no reads
// after the inserts: the harness keeps the keys it sends.
//
// # Trials, statistics and the harness check
//
// The run has Runs rounds (default 3). Each round runs every row, the
// Baseline, the harness check's two rows and each strategy, on a fresh
// table, in an order shuffled by a PCG generator seeded with Seed (zero: a
// random seed, reported), so that drift on the machine hits every row
// alike. Each figure of a Result is the median over its trials. rows/s,
// p50 and p99 get a 95 % confidence interval: a percentile bootstrap of the
// median, Resamples (10,000) resamples of the trials, seeded. A ratio to
// the Baseline is the median of the per-round ratios (each trial paired
// with the Baseline of its round), with the bootstrap interval of those;
// one whose interval contains 1 is shown as "≈". With 5 trials or fewer a
// resample's median is always one of the trials, so the interval is their
// range. The structural figures (density, fragmentation, sizes, leaf
// pages, splits) get their spread across the trials: they depend on the
// order the keys arrive in, which Writers concurrent writers interleave
// differently in each trial (and random keys differ), so they vary by a
// little even on a quiet machine. A spread above MaxSpread, or a
// coefficient of variation of rows/s, p50 or p99 above MaxCV, is a
// Warning.
//
// The harness check compares like with like: the keys 1..Rows sent by the
// harness (row ClientSeries) against the same keys generated by the server
// (row Reference, "generate_series"), both into a bigint primary key of the
// same table shape, in the same batches, through the same prepared
// statement shape, one per batch: INSERT ... SELECT k, now(), $payload FROM
// unnest($keys::int8[]) for the harness, whose client encodes every key and
// sends it as a binary array, and INSERT ... SELECT g, now(), $payload FROM
// generate_series($lo, $hi) for the server. The two differ only in where
// the keys come from, so the ratio of their rows/s measures what the
// client and the wire add per key. It passes at HarnessThreshold (0.80) or
// above; a fail means the harness, not the server, limits the rows/s,
// which then pull the ratios between schemes towards 1.
//
// Why not COPY, the strategies' path: the server's own work differs
// between COPY FROM STDIN and INSERT ... SELECT (on PostgreSQL 15, one COPY
// per batch of 1000 rows costs the server more than the INSERT ... SELECT
// of the same rows), so a COPY harness set against a generate_series
// server measured that difference, not the harness: 0.65× on a quiet
// 2-core machine, while the client spent about 1 ms of CPU per batch of
// 1000 rows against the server's 1.4 ms, two batches in flight. The COPY
// path's rate for bigint keys is the Baseline row's.
//
// Why one writer on each side: the check asks whether the harness keeps
// the server busy. With one writer, the client's goroutines and the one
// backend each have a core on any machine of two or more cores, and the
// ratio answers that question. With the default 4 writers on 2 cores, the
// 4 backends and the client share 2 cores: the client's CPU then comes out
// of the server's, and the ratio measures how the machine shares its
// cores, a cost that every strategy's rows/s pay alike, not the harness.
// The table says so under the verdict when Writers is not 1.
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
//	device_reads        blocks   PostgreSQL ≥ 16: pg_stat_io sum(reads) WHERE object = 'relation' delta, server-wide (see Scenarios)
//	device_writes       blocks   the same for sum(writes)
//
// WAL and pg_stat_wal figures are server-wide: on a server shared with other
// work (DSN given) they include that work's WAL. The throwaway cluster has
// none. A metric that cannot be measured (pgstattuple or pg_walinspect not
// installable, no privilege for CHECKPOINT) is null in results.json, "n/a"
// in the table, and listed in the Result's Unavailable field; the Report's
// Notes say why.
//
// # MariaDB / InnoDB (Engine "mariadb")
//
// The same rows run on InnoDB, where the primary key is the clustered
// index: the leaf pages hold the whole rows, so a random key moves whole
// rows, not just a key and a pointer. The table is
//
//	id          BIGINT (64-bit keys), BINARY(16) (128-bit keys), VARBINARY or ASCII VARCHAR (others) NOT NULL PRIMARY KEY
//	created_at  DATETIME(6) NOT NULL
//	payload     BINARY(100) NOT NULL
//
// with ENGINE=InnoDB ROW_FORMAT=DYNAMIC STATS_PERSISTENT=1
// STATS_AUTO_RECALC=0; the Baseline's id is BIGINT AUTO_INCREMENT. Each
// batch is one multi-row INSERT of Batch rows (keys as decimal or X'..'
// literals), autocommitted; Batch 1 is single-row INSERTs. The Reference
// row of the harness check is INSERT ... SELECT seq FROM seq_<lo>_to_<hi>
// (MariaDB's sequence engine), one statement per batch; its ClientSeries
// row is the same INSERT ... SELECT over JSON_TABLE of the keys the client
// writes out as a JSON array (on MariaDB 10.11, 300 such batches of 1000
// keys took 1.21 s against the sequence engine's 1.19 s in one mariadb
// client session, where the multi-row INSERT of the schemes, which costs
// the server more, gave a 0.49× check). The throwaway
// server runs with innodb_flush_log_at_trx_commit = 2 (commits write the
// redo log but do not wait for the disk, like synchronous_commit = off).
// There is no CHECKPOINT: InnoDB's checkpoints are fuzzy and continuous.
//
//	metric                 unit    source (InnoDB's own)
//	rows_per_sec, p50_ms,  as above; a batch's latency is its INSERT statement's round trip
//	p99_ms
//	index_bytes            bytes   the clustered index (PRIMARY, which holds the rows): mysql.innodb_index_stats
//	                               stat 'size' × innodb_page_size, after ANALYZE TABLE ... PERSISTENT FOR ALL
//	secondary_index_bytes  bytes   the same for every other index of the table (0: the table has none)
//	table_bytes            bytes   index_bytes + secondary_index_bytes: an InnoDB table is its indexes
//	leaf_pages             pages   mysql.innodb_index_stats 'n_leaf_pages' of PRIMARY, after the same ANALYZE
//	avg_leaf_density       %       leaf fill: data bytes / (leaf_pages × innodb_page_size). The data bytes come from
//	                               an exact source, a full scan computing row sizes (leaf_fill_source): SELECT
//	                               COUNT(*) (and SUM(LENGTH(id)) for a variable-length key) times the DYNAMIC
//	                               record size, 5-byte header + key (+1 length byte if variable) + DB_TRX_ID 6 +
//	                               DB_ROLL_PTR 7 + DATETIME(6) 8 + payload 100, i.e. 134 bytes with a BIGINT key
//	                               (the same as information_schema.INNODB_BUFFER_PAGE's DATA_SIZE / NUMBER_RECORDS
//	                               of a leaf page). The scan works whether or not the index fits the buffer pool;
//	                               INNODB_BUFFER_PAGE only sees the cached pages and does not tell leaf from
//	                               internal pages. Sequential keys give about 15/16 (the MySQL manual)
//	page_splits            splits  information_schema.INNODB_METRICS 'index_page_splits' count delta: every page
//	                               split of every index, server-wide (at 20,000 rows, leaf_pages - 1 for appends;
//	                               a larger index adds its internal pages' splits)
//	page_merges            merges  INNODB_METRICS 'index_page_merge_successful' delta
//	wal_bytes              bytes   redo bytes: SHOW GLOBAL STATUS Innodb_lsn_current after minus before (MySQL:
//	                               "Log sequence number" of SHOW ENGINE INNODB STATUS)
//	buffer_pool_reads      pages   SHOW GLOBAL STATUS Innodb_buffer_pool_reads delta: reads InnoDB could not
//	                               satisfy from the buffer pool (server-wide)
//	buffer_pool_read_requests      Innodb_buffer_pool_read_requests delta: logical page reads
//	device_reads           pages   SHOW GLOBAL STATUS Innodb_pages_read delta (server-wide)
//	device_writes          pages   SHOW GLOBAL STATUS Innodb_pages_written delta (server-wide)
//
// The monitors index_page_splits, index_page_merge_attempts and
// index_page_merge_successful are enabled with SET GLOBAL
// innodb_monitor_enable for the run and disabled again at the end if they
// were off. leaf_fragmentation, wal_page_splits, wal_fpi, wal_fpi_bytes
// and idx_blks_* are PostgreSQL's and stay null. Without a DSN the run
// provisions a throwaway server: mariadb-install-db
// --auth-root-authentication-method=normal, then mariadbd --no-defaults
// --skip-networking on a Unix socket in a temporary directory with
// innodb_buffer_pool_size = BufferPool (InnoDB needs at least 6MB with 16 kB
// pages), as the mysql user when the process is root; the directory is
// removed afterwards. With a mysql:// DSN the tables go in a database the
// run creates (idgen_compare_<random>, or Schema) and drops.
//
// Engine "all" runs PostgreSQL, then MariaDB, with the same seed, and
// merges both into one Report: each row carries its engine and scenario,
// and its ratios are to the Baseline of its own engine and scenario.
//
// # Layout
//
// An engine (PostgreSQL's pgEngine, InnoDB's myEngine) speaks to its
// server: connect, create a table, warm up, load rows, read the counters
// before and after the measured phase, the sizes, the read target. One Run
// owns the scenarios, the rounds, the trials' phases, the samples and
// reads, and the summary. What people read (the tables, the decision
// table, report.html, the charts and the verdicts' words) is in
// compare/report; the statistics are internal/stats'; the throwaway
// servers internal/throwaway's.
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
