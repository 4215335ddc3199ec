package compare

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/idgenkit/idgen/internal/throwaway"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgEngine is the PostgreSQL engine: one meta connection for DDL and
// metrics, one per writer.
type pgEngine struct {
	*harness
	pgcfg   *pgx.ConnConfig
	meta    *pgx.Conn   // DDL and metrics
	writers []*pgx.Conn // one per writer
	schema  string

	stattuple, walinspect extension
	noCheckpoint, noFlush bool
	noSlot                bool
	ioStats               bool  // pg_stat_io (PostgreSQL 16 or later)
	sharedBuffers         int64 // bytes; 0 when unknown
}

var _ engine = (*pgEngine)(nil)

func parsePGConfig(dsn string) (*pgx.ConnConfig, error) {
	c, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, dsnErr(err)
	}
	return c, nil
}

// removeStale removes the throwaway servers whose owner is gone.
func removeStale() ([]string, error) { return throwaway.RemoveStale() }

func (h *pgEngine) connect(ctx context.Context, rep *Report, sc *Scenario) error {
	pgcfg := h.pgcfg
	if pgcfg.ConnectTimeout == 0 {
		pgcfg.ConnectTimeout = 10 * time.Second
	}
	pgcfg.RuntimeParams["application_name"] = "idgen-compare"
	dial := func() (*pgx.Conn, error) {
		c, err := pgx.ConnectConfig(ctx, pgcfg)
		if err != nil {
			return nil, fmt.Errorf("compare: %w", &storedsn.ConnectError{Target: storedsn.PostgresTarget(&pgcfg.Config), Class: ErrConnect, Err: err})
		}
		return c, nil
	}
	var err error
	if h.meta, err = dial(); err != nil {
		return err
	}
	for range h.cfg.Writers {
		c, err := dial()
		if err != nil {
			return err
		}
		h.writers = append(h.writers, c)
		// Commits write their WAL but do not wait for the disk: the run
		// measures the index, not the disk's fsync latency.
		if _, err := c.Exec(ctx, "SET synchronous_commit = off"); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	}
	return h.setup(ctx, rep, sc)
}

func (h *pgEngine) close() {
	h.dropSchema()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range append(h.writers, h.meta) {
		if c != nil {
			c.Close(ctx)
		}
	}
}

// setup reads the server's settings, finds the extensions and creates the
// run's schema.
func (h *pgEngine) setup(ctx context.Context, rep *Report, sc *Scenario) error {
	// Read the cumulative statistics afresh on every query.
	_, _ = h.meta.Exec(ctx, "SET stats_fetch_consistency = none")
	var server, version, sb string
	var num int
	if err := h.meta.QueryRow(ctx, "SELECT version(), current_setting('server_version'), current_setting('server_version_num')::int, current_setting('shared_buffers')").
		Scan(&server, &version, &num, &sb); err != nil {
		return err
	}
	sc.ServerVersion, sc.Buffer, sc.major = version, sb, num/10000
	rep.addServer(server, version)
	if rep.SharedBuffers == "" {
		rep.SharedBuffers = sb
	}
	if err := h.meta.QueryRow(ctx, "SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'").Scan(&h.sharedBuffers); err != nil {
		h.sharedBuffers = 0
	}
	sc.BufferBytes = h.sharedBuffers
	if sc.DataBytes > 0 && sc.BufferBytes > 0 {
		sc.MemoryRatio = float64(sc.DataBytes) / float64(sc.BufferBytes)
	}
	var direct, ioMethod string
	if h.meta.QueryRow(ctx, "SELECT setting FROM pg_settings WHERE name = 'debug_io_direct'").Scan(&direct) == nil && direct != "" {
		sc.DirectIOSetting = "debug_io_direct = " + direct
	}
	if h.meta.QueryRow(ctx, "SELECT setting FROM pg_settings WHERE name = 'io_method'").Scan(&ioMethod) == nil {
		sc.IOMethod = ioMethod
	}
	h.ioStats = sc.major >= 16
	if !h.ioStats {
		h.noteOnce("pg_stat_io", "PostgreSQL %d has no pg_stat_io (16 or later): device reads and writes not measured", sc.major)
	}
	var created bool
	if h.stattuple, created = ensureExtension(ctx, h.meta, "pgstattuple"); !h.stattuple.ok() {
		h.noteOnce("pgstattuple", "pgstattuple unavailable (%v): leaf pages, density and fragmentation not measured; install postgresql-contrib and run as a superuser", h.stattuple.err)
	} else if created && !rep.Throwaway {
		h.note("created extension pgstattuple in schema %s (left installed)", h.stattuple.schema)
	}
	if h.walinspect, created = ensureExtension(ctx, h.meta, "pg_walinspect"); !h.walinspect.ok() {
		h.noteOnce("pg_walinspect", "pg_walinspect unavailable (%v): WAL page splits and full-page image bytes not measured; it needs PostgreSQL 15 or later and a superuser", h.walinspect.err)
	} else if created && !rep.Throwaway {
		h.note("created extension pg_walinspect in schema %s (left installed)", h.walinspect.schema)
	}
	schema, err := createUnique(h.cfg.Schema, "schema", func(name string) (bool, error) {
		_, err := h.meta.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize())
		var pe *pgconn.PgError
		return errors.As(err, &pe) && pe.Code == "42P06", err // duplicate_schema
	})
	if err != nil {
		return err
	}
	h.schema = schema
	rep.addSchema(schema)
	if h.cfg.Keep && h.cfg.DSN != "" {
		h.note("tables kept in schema %s; drop them with: DROP SCHEMA %s CASCADE", h.schema, h.schema)
	}
	// The server-generated keys this server can give (ServerKeys).
	sc.serverPK = map[string]bool{}
	for _, k := range serverKeys {
		sc.serverPK[k.Name] = sc.major >= k.MinPostgres
	}
	return nil
}

// dropSchema drops the run's schema and its tables, unless Keep.
func (h *pgEngine) dropSchema() {
	if h.cfg.Keep || h.schema == "" || h.meta == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := h.meta.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{h.schema}.Sanitize()+" CASCADE"); err != nil {
		h.cfg.logger().Warn("dropping the run's schema", "schema", h.schema, "err", err)
		h.prog.Note(fmt.Sprintf("dropping schema %s: %v", h.schema, err))
	}
}

// warmUp sends one batch per writer, and the harness check's statements,
// into a scratch table, so that the first strategy measured does not pay
// for the connections' first COPY (catalog caches, plans).
func (h *pgEngine) warmUp(ctx context.Context, rows []*plan) error {
	t, err := h.createTable(ctx, "warmup", rows[0])
	if err != nil {
		return fmt.Errorf("compare: warm-up: %w", err)
	}
	n := min(h.cfg.Rows, h.cfg.Writers*h.cfg.Batch)
	if _, err := h.load(ctx, rows[0], t, 1, n, nil); err != nil {
		return fmt.Errorf("compare: warm-up: %w", err)
	}
	for _, p := range rows[1:3] {
		if _, err := h.load(ctx, p, t, 1<<40, n, nil); err != nil {
			return fmt.Errorf("compare: warm-up: %w", err)
		}
		if _, err := h.meta.Exec(ctx, "DELETE FROM "+t.quoted+" WHERE id >= $1", int64(1<<40)); err != nil {
			return fmt.Errorf("compare: warm-up: %w", err)
		}
	}
	return h.dropTable(ctx, t)
}

// result returns a PostgreSQL trial's Result before its figures.
func (h *pgEngine) result(p *plan) Result {
	return h.newResult(p, rowShape{EnginePostgres, p.column, p.column, "copy", "insert-select unnest"})
}

// pgKeyColumn is the key column's definition of p's table.
func (p *plan) pgKeyColumn() string {
	switch {
	case p.serverKey != "":
		return p.column + " PRIMARY KEY DEFAULT " + serverKeyOf(p.serverKey).Default
	case p.scheme == nil && !p.series:
		return "bigserial PRIMARY KEY"
	}
	return p.column + " PRIMARY KEY"
}

func (h *pgEngine) createTable(ctx context.Context, name string, p *plan) (*table, error) {
	id := pgx.Identifier{h.schema, name}
	t := &table{name: name, quoted: id.Sanitize()}
	if _, err := h.meta.Exec(ctx, "CREATE TABLE "+t.quoted+" (id "+p.pgKeyColumn()+
		", created_at timestamptz NOT NULL, payload bytea NOT NULL) WITH (autovacuum_enabled = off)"); err != nil {
		return nil, err
	}
	var err error
	if t.id, err = lookupIdent(ctx, h.meta, t.quoted); err != nil {
		return nil, err
	}
	return t, nil
}

func (h *pgEngine) dropTable(ctx context.Context, t *table) error {
	_, err := h.meta.Exec(ctx, "DROP TABLE "+t.quoted)
	return err
}

// pgSnapshot is PostgreSQL's counters before a measured phase, and the
// WAL it holds for pg_walinspect.
type pgSnapshot struct {
	counters
	drop func()
}

// release drops the snapshot's replication slot; it runs the drop once.
func (s pgSnapshot) release() { s.drop() }

func (h *pgEngine) before(ctx context.Context, t *table) (snapshot, error) {
	if err := h.checkpoint(ctx); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	release := sync.OnceFunc(h.holdWAL(ctx))
	var c counters
	h.readIndex(ctx, t.id, &c)
	h.flushStats(ctx)
	c, err := h.readCountersInto(ctx, t.id, c)
	if err != nil {
		release()
		return nil, err
	}
	return pgSnapshot{c, release}, nil
}

func (h *pgEngine) after(ctx context.Context, t *table, p *plan, b snapshot, res *Result) error {
	bs := b.(pgSnapshot)
	defer bs.release()
	before := bs.counters
	h.flushStats(ctx)
	after, err := h.readCountersInto(ctx, t.id, counters{})
	if err != nil {
		return err
	}
	h.readIndex(ctx, t.id, &after)
	if res.IndexBytes, res.TableBytes, err = h.sizes(ctx, t.id); err != nil {
		return fmt.Errorf("sizes: %w", err)
	}
	res.WALBytes = int64(after.lsn - before.lsn)
	if after.leafOK {
		res.LeafPages = ptr(after.leafPages)
		res.AvgLeafDensity = ptr(after.density)
		res.LeafFragmentation = ptr(after.fragment)
		if before.leafOK {
			res.PageSplits = ptr(max(0, after.leafPages-max(before.leafPages, 1)))
		}
	}
	if before.walOK && after.walOK {
		res.WALFPI = ptr(after.walFPI - before.walFPI)
	}
	if before.statioOK && after.statioOK {
		res.IdxBlksRead = ptr(after.idxRead - before.idxRead)
		res.IdxBlksHit = ptr(after.idxHit - before.idxHit)
	}
	if before.ioOK && after.ioOK {
		res.DeviceReads = ptr(after.ioReads - before.ioReads)
		res.DeviceWrites = ptr(after.ioWrites - before.ioWrites)
	}
	if h.walinspect.ok() {
		splits, fpiBytes, err := h.walStats(ctx, t.id, before.lsn, after.lsn)
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			h.noteOnce("walinspect", "pg_get_wal_records_info failed (%v): WAL page splits and full-page image bytes not measured", err)
		} else {
			res.WALPageSplits, res.WALFPIBytes = ptr(splits), ptr(fpiBytes)
			if res.PageSplits == nil {
				res.PageSplits = ptr(splits)
			}
		}
	}
	if h.sharedBuffers > 0 {
		res.IndexFitsCache = ptr(res.IndexBytes <= h.sharedBuffers)
	}
	return nil
}

func (h *pgEngine) readCountersInto(ctx context.Context, id ident, c counters) (counters, error) {
	n, err := h.readCounters(ctx, id)
	if err != nil {
		return c, err
	}
	n.leafPages, n.leafOK, n.density, n.fragment = c.leafPages, c.leafOK, c.density, c.fragment
	return n, nil
}

func (h *pgEngine) target(ctx context.Context, t *table, p *plan) (readTarget, error) {
	return h.pgTarget(ctx, t.quoted, t.id)
}

// unavailable names the nil metrics of r. Device reads and writes are
// not listed: PostgreSQL 15 has no pg_stat_io, a note says so.
func unavailable(r *Result) []string {
	if r.Engine == EngineMariaDB {
		return unavailableMariaDB(r)
	}
	return missing([]metric{
		{"leaf_pages", r.LeafPages == nil},
		{"avg_leaf_density", r.AvgLeafDensity == nil},
		{"leaf_fragmentation", r.LeafFragmentation == nil},
		{"page_splits", r.PageSplits == nil},
		{"wal_page_splits", r.WALPageSplits == nil},
		{"wal_fpi", r.WALFPI == nil},
		{"wal_fpi_bytes", r.WALFPIBytes == nil},
		{"idx_blks_read", r.IdxBlksRead == nil},
		{"idx_blks_hit", r.IdxBlksHit == nil},
	})
}

// A metric is a metric's JSON name and whether it was left nil.
type metric struct {
	name string
	nil  bool
}

// missing names the metrics left nil.
func missing(ms []metric) []string {
	var out []string
	for _, m := range ms {
		if m.nil {
			out = append(out, m.name)
		}
	}
	return out
}
