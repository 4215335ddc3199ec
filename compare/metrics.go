package compare

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// An extension the metrics need. schema is where it is installed; err why
// it is not.
type extension struct {
	name   string
	schema string
	err    error
}

func (e extension) ok() bool { return e.err == nil && e.schema != "" }

// fn returns the schema-qualified name of the extension's function.
func (e extension) fn(name string) string {
	return pgx.Identifier{e.schema, name}.Sanitize()
}

// ensureExtension finds the extension, or creates it in the default schema
// and leaves it installed. It returns whether the run created it.
func ensureExtension(ctx context.Context, conn *pgx.Conn, name string) (extension, bool) {
	find := func() (string, error) {
		var schema string
		err := conn.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = $1`, name).Scan(&schema)
		return schema, err
	}
	if s, err := find(); err == nil {
		return extension{name: name, schema: s}, false
	}
	_, cerr := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+pgx.Identifier{name}.Sanitize())
	// A concurrent run may have created it between find and create.
	if s, err := find(); err == nil {
		return extension{name: name, schema: s}, cerr == nil
	}
	if cerr == nil {
		cerr = errors.New("created but not found in pg_extension")
	}
	return extension{name: name, err: cerr}, false
}

// ident is a relation's identity for the metric queries.
type ident struct {
	table, index uint32 // OIDs
	filenode     uint32 // the index's relfilenode, as WAL names it
	database     uint32
}

func lookupIdent(ctx context.Context, conn *pgx.Conn, table string) (ident, error) {
	var id ident
	err := conn.QueryRow(ctx, `SELECT c.oid, i.indexrelid, pg_relation_filenode(i.indexrelid),
		(SELECT oid FROM pg_database WHERE datname = current_database())
		FROM pg_class c JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
		WHERE c.oid = $1::regclass`, table).Scan(&id.table, &id.index, &id.filenode, &id.database)
	return id, err
}

// counters are the server-wide and per-index counters read before and
// after the measured phase.
type counters struct {
	lsn               uint64
	walFPI            int64
	walOK             bool
	idxRead, idxHit   int64
	statioOK          bool
	leafPages         int64
	leafOK            bool
	density, fragment float64
	ioReads, ioWrites int64 // pg_stat_io, relation data
	ioOK              bool
}

// readCounters reads the LSN and the cumulative statistics. The writers
// must have flushed their statistics first (flushStats).
func (h *pgEngine) readCounters(ctx context.Context, id ident) (counters, error) {
	var c counters
	var lsn string
	if err := h.meta.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&lsn); err != nil {
		return c, fmt.Errorf("reading the WAL insert LSN: %w", err)
	}
	var err error
	if c.lsn, err = parseLSN(lsn); err != nil {
		return c, err
	}
	if err := h.meta.QueryRow(ctx, "SELECT wal_fpi FROM pg_stat_wal").Scan(&c.walFPI); err == nil {
		c.walOK = true
	} else {
		h.noteOnce("pg_stat_wal", "pg_stat_wal unreadable (%v): wal_fpi not measured", err)
	}
	if err := h.meta.QueryRow(ctx, `SELECT coalesce(idx_blks_read, 0), coalesce(idx_blks_hit, 0)
		FROM pg_statio_user_indexes WHERE indexrelid = $1`, id.index).Scan(&c.idxRead, &c.idxHit); err == nil {
		c.statioOK = true
	} else {
		h.noteOnce("statio", "pg_statio_user_indexes unreadable (%v): index blocks read/hit not measured", err)
	}
	if h.ioStats {
		// Every process's reads and writes of relation data (tables and
		// indexes; not WAL), server-wide: backends, checkpointer, background
		// writer and, on PostgreSQL 18, the I/O workers.
		if err := h.meta.QueryRow(ctx, `SELECT coalesce(sum(reads), 0)::bigint, coalesce(sum(writes), 0)::bigint
			FROM pg_stat_io WHERE object = 'relation'`).Scan(&c.ioReads, &c.ioWrites); err == nil {
			c.ioOK = true
		} else {
			h.noteOnce("pg_stat_io", "pg_stat_io unreadable (%v): device reads and writes not measured", err)
		}
	}
	return c, nil
}

// readIndex reads pgstatindex; it reads every page of the index, so it runs
// outside the window of the block counters.
func (h *pgEngine) readIndex(ctx context.Context, id ident, c *counters) {
	if !h.stattuple.ok() {
		return
	}
	var leaf, internal int64
	err := h.meta.QueryRow(ctx, "SELECT leaf_pages, internal_pages, avg_leaf_density, leaf_fragmentation FROM "+
		h.stattuple.fn("pgstatindex")+"($1::oid::regclass)", id.index).Scan(&leaf, &internal, &c.density, &c.fragment)
	if err != nil {
		h.noteOnce("pgstatindex", "pgstatindex failed (%v): leaf pages, density and fragmentation not measured", err)
		return
	}
	c.leafPages, c.leafOK = leaf, true
}

// flushStats makes every connection's pending statistics visible in the
// cumulative views (PostgreSQL 15's pg_stat_force_next_flush; a backend
// flushes before it reports ready for the next query).
func (h *pgEngine) flushStats(ctx context.Context) {
	if h.noFlush {
		return
	}
	for _, c := range append([]*pgx.Conn{h.meta}, h.writers...) {
		if _, err := c.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
			h.noFlush = true
			h.note("pg_stat_force_next_flush failed (%v; PostgreSQL 15 or later needed): wal_fpi and index block counts may lag", err)
			return
		}
	}
}

// walStats reads the measured phase's WAL with pg_walinspect: the leaf
// page splits of the index and the bytes of full-page images.
func (h *pgEngine) walStats(ctx context.Context, id ident, from, to uint64) (splits, fpiBytes int64, err error) {
	// pg_walinspect refuses an end past the flushed WAL, and the writers
	// commit without waiting for the flush: wait for the WAL writer, which
	// flushes asynchronous commits within 3 × wal_writer_delay (600 ms by
	// default). WAL past the writers' last commit is not theirs.
	// A transaction that gets an xid commits synchronously on the meta
	// connection: its commit flushes the WAL up to its own record, past
	// the phase's, at once (the loop below then rarely waits).
	if _, err := h.meta.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil {
		return 0, 0, err
	}
	var f uint64
	for deadline := time.Now().Add(2 * time.Second); ; {
		var flushed string
		if err := h.meta.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn()::text").Scan(&flushed); err != nil {
			return 0, 0, err
		}
		if f, err = parseLSN(flushed); err != nil {
			return 0, 0, err
		}
		if f >= to || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	to = min(to, f)
	if to <= from {
		return 0, 0, nil
	}
	// PostgreSQL 15 describes a split as "level 0, firstrightoff ...",
	// 16 and later as "level: 0, firstrightoff: ...".
	block0 := fmt.Sprintf(`^blkref #0: rel \d+/%d/%d `, id.database, id.filenode)
	err = h.meta.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE resource_manager = 'Btree' AND record_type IN ('SPLIT_L', 'SPLIT_R')
			AND description ~ '^level:? 0,' AND block_ref ~ $3),
		coalesce(sum(fpi_length), 0)
		FROM `+h.walinspect.fn("pg_get_wal_records_info")+`($1::pg_lsn, $2::pg_lsn)`,
		formatLSN(from), formatLSN(to), block0).Scan(&splits, &fpiBytes)
	return splits, fpiBytes, err
}

// holdWAL keeps the measured phase's WAL from being recycled by the
// checkpoints inside it until walStats has read it, with a temporary
// physical replication slot (dropped by the returned func, or by the server
// when the session ends). Without pg_walinspect it does nothing.
func (h *pgEngine) holdWAL(ctx context.Context) (release func()) {
	if !h.walinspect.ok() || h.noSlot {
		return func() {}
	}
	slot := h.schema + "_wal"
	if _, err := h.meta.Exec(ctx, "SELECT pg_create_physical_replication_slot($1, true, true)", slot); err != nil {
		h.noSlot = true
		h.note("cannot hold the WAL with a temporary replication slot (%v): checkpoints during a long phase may recycle WAL before pg_walinspect reads it", err)
		return func() {}
	}
	return func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		h.meta.Exec(c, "SELECT pg_drop_replication_slot($1)", slot)
	}
}

func (h *pgEngine) sizes(ctx context.Context, id ident) (index, table int64, err error) {
	err = h.meta.QueryRow(ctx, "SELECT pg_relation_size($1::oid::regclass), pg_relation_size($2::oid::regclass)",
		id.index, id.table).Scan(&index, &table)
	return index, table, err
}

// checkpoint runs CHECKPOINT; without the privilege it notes why once.
func (h *pgEngine) checkpoint(ctx context.Context) error {
	if h.noCheckpoint {
		return nil
	}
	_, err := h.meta.Exec(ctx, "CHECKPOINT")
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
		h.noCheckpoint = true
		h.note("CHECKPOINT refused (%s): the measured phases start without one, so full-page images are undercounted", pe.Message)
		return nil
	}
	return err
}

func parseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("compare: bad LSN %q", s)
	}
	return h<<32 | l, nil
}

func formatLSN(v uint64) string { return fmt.Sprintf("%X/%X", v>>32, uint32(v)) }
