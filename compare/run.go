package compare

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/idgenkit/idgen/internal/redact"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// harness holds a run's connections and what the server can measure.
type harness struct {
	cfg     Config
	prog    Progress
	meta    *pgx.Conn   // DDL and metrics
	writers []*pgx.Conn // one per writer
	schema  string
	payload []byte

	stattuple, walinspect extension
	noCheckpoint, noFlush bool
	noSlot                bool
	notes                 []string
	seed                  uint64
	clock                 clock   // Config.Span's simulated clock
	sample                *sample // the keys kept for the reads; nil when off
	sharedBuffers         int64   // bytes; 0 when unknown
	noted                 map[string]bool
}

// Run compares the strategies of cfg on one PostgreSQL server (cfg.DSN, or
// a throwaway cluster) and returns the report. Input errors wrap
// ErrBadInput and are returned before any database is touched; an
// unreachable server wraps ErrConnect; missing server binaries for the
// throwaway cluster wrap ErrNoPostgres. Metrics the server cannot give are
// left out with a note, and the run goes on.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	switch cfg.Engine {
	case EngineMariaDB:
		return runMariaDB(ctx, cfg)
	case EngineAll:
		return runAll(ctx, cfg)
	}
	prog := cfg.Progress
	if prog == nil {
		prog = nopProgress{}
	}
	var pgcfg *pgx.ConnConfig
	if cfg.DSN != "" {
		if pgcfg, err = pgx.ParseConfig(cfg.DSN); err != nil {
			return nil, fmt.Errorf("%w: dsn: %w", ErrBadInput, err)
		}
	}
	plans, notes, err := buildPlans(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer closePlans(plans)

	rep := newReport(cfg, EnginePostgres, prog)
	if cfg.DSN == "" {
		cl, stop, err := startThrowaway(cfg, prog, "PostgreSQL cluster", "shared_buffers="+cfg.SharedBuffers, func() (*Cluster, error) {
			return StartCluster(ctx, ClusterConfig{SharedBuffers: cfg.SharedBuffers, Keep: cfg.Keep})
		})
		if err != nil {
			return nil, err
		}
		defer stop()
		if cfg.Keep {
			notes = append(notes, fmt.Sprintf("cluster kept in %s; start it with: %s; connect with: psql -h %s -U postgres",
				cl.Dir(), cl.StartCommand(), cl.Dir()))
		}
		rep.Throwaway = true
		if pgcfg, err = pgx.ParseConfig(cl.DSN()); err != nil {
			return nil, err
		}
	}
	h := newHarness(cfg, prog, rep, plans, notes)
	if err := h.connect(ctx, pgcfg); err != nil {
		return nil, err
	}
	defer h.close()
	if err := h.setup(ctx, rep); err != nil {
		return nil, err
	}
	defer h.dropSchema()
	if cfg.Keep && cfg.DSN != "" {
		h.note("tables kept in schema %s; drop them with: DROP SCHEMA %s CASCADE", h.schema, h.schema)
	}

	if err := h.warmUp(ctx, plans[0]); err != nil {
		return nil, err
	}
	return h.finish(ctx, rep, reportRows(plans), h.runOne)
}

func (h *harness) note(format string, args ...any) {
	msg := redact.Spec(fmt.Sprintf(format, args...))
	h.notes = append(h.notes, msg)
	h.prog.Note(msg)
}

func (h *harness) noteOnce(key, format string, args ...any) {
	if !h.noted[key] {
		h.noted[key] = true
		h.note(format, args...)
	}
}

func (h *harness) connect(ctx context.Context, pgcfg *pgx.ConnConfig) error {
	if pgcfg.ConnectTimeout == 0 {
		pgcfg.ConnectTimeout = 10 * time.Second
	}
	pgcfg.RuntimeParams["application_name"] = "idgen-compare"
	where := fmt.Sprintf("%s:%d/%s", pgcfg.Host, pgcfg.Port, pgcfg.Database)
	dial := func() (*pgx.Conn, error) {
		c, err := pgx.ConnectConfig(ctx, pgcfg)
		if err != nil {
			return nil, fmt.Errorf("%w at %s: %w", ErrConnect, where, err)
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
	return nil
}

func (h *harness) close() {
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
func (h *harness) setup(ctx context.Context, rep *Report) error {
	// Read the cumulative statistics afresh on every query.
	_, _ = h.meta.Exec(ctx, "SET stats_fetch_consistency = none")
	if err := h.meta.QueryRow(ctx, "SELECT version(), current_setting('server_version'), current_setting('shared_buffers')").Scan(&rep.Server, &rep.ServerVersion, &rep.SharedBuffers); err != nil {
		return err
	}
	if err := h.meta.QueryRow(ctx, "SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'").Scan(&h.sharedBuffers); err != nil {
		h.sharedBuffers = 0
	}
	var created bool
	if h.stattuple, created = ensureExtension(ctx, h.meta, "pgstattuple"); !h.stattuple.ok() {
		h.note("pgstattuple unavailable (%v): leaf pages, density and fragmentation not measured; install postgresql-contrib and run as a superuser", h.stattuple.err)
	} else if created && !rep.Throwaway {
		h.note("created extension pgstattuple in schema %s (left installed)", h.stattuple.schema)
	}
	if h.walinspect, created = ensureExtension(ctx, h.meta, "pg_walinspect"); !h.walinspect.ok() {
		h.note("pg_walinspect unavailable (%v): WAL page splits and full-page image bytes not measured; it needs PostgreSQL 15 or later and a superuser", h.walinspect.err)
	} else if created && !rep.Throwaway {
		h.note("created extension pg_walinspect in schema %s (left installed)", h.walinspect.schema)
	}
	schema := h.cfg.Schema
	for try := 0; ; try++ {
		if h.cfg.Schema == "" {
			var b [4]byte
			rand.Read(b[:])
			schema = "idgen_compare_" + hex.EncodeToString(b[:])
		}
		_, err := h.meta.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P06" { // duplicate_schema
			if h.cfg.Schema != "" {
				return badInput("schema %q already exists; the run only uses a schema it creates", schema)
			}
			if try < 3 {
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("compare: creating schema %s: %w", schema, err)
		}
		break
	}
	h.schema, rep.Schema = schema, schema
	return nil
}

// dropSchema drops the run's schema and its tables, unless Keep.
func (h *harness) dropSchema() {
	if h.cfg.Keep || h.schema == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := h.meta.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{h.schema}.Sanitize()+" CASCADE"); err != nil {
		h.cfg.logger().Warn("dropping the run's schema", "schema", h.schema, "err", err)
		h.prog.Note(fmt.Sprintf("dropping schema %s: %v", h.schema, err))
	}
}

// warmUp sends one batch per writer, and the Reference's statement, into a
// scratch table, so that the first strategy measured does not pay for the
// connections' first COPY (catalog caches, plans).
func (h *harness) warmUp(ctx context.Context, baseline *plan) error {
	table := pgx.Identifier{h.schema, "warmup"}
	if _, err := h.meta.Exec(ctx, "CREATE TABLE "+table.Sanitize()+
		" (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL, payload bytea NOT NULL) WITH (autovacuum_enabled = off)"); err != nil {
		return fmt.Errorf("compare: warm-up: %w", err)
	}
	n := min(h.cfg.Rows, h.cfg.Writers*h.cfg.Batch)
	if _, err := h.load(ctx, baseline, table, 1, n, nil); err != nil {
		return fmt.Errorf("compare: warm-up: %w", err)
	}
	for _, p := range []*plan{{spec: ClientSeries, series: true}, {spec: Reference, series: true, server: true}} {
		if _, err := h.load(ctx, p, table, 1<<40, n, nil); err != nil {
			return fmt.Errorf("compare: warm-up: %w", err)
		}
		if _, err := h.meta.Exec(ctx, "DELETE FROM "+table.Sanitize()+" WHERE id >= $1", int64(1<<40)); err != nil {
			return fmt.Errorf("compare: warm-up: %w", err)
		}
	}
	_, err := h.meta.Exec(ctx, "DROP TABLE "+table.Sanitize())
	return err
}

// tableName names the table of row i (0 for the Baseline and the harness
// check) in round (1, 2, ...): t01_snowflake, then t01_r2_snowflake.
func tableName(i, round int, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "t%02d_", i)
	if round > 1 {
		fmt.Fprintf(&b, "r%d_", round)
	}
	for _, r := range strings.ToLower(name) {
		if b.Len() >= 40 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func (h *harness) runOne(ctx context.Context, round, i int, p *plan) (Result, error) {
	cfg := h.cfg
	h.clock.round = round
	table := pgx.Identifier{h.schema, tableName(i, round, p.name)}
	res := Result{
		Engine: EnginePostgres, Strategy: p.label, Scheme: p.name, Column: p.column, Method: "copy", WorkerKey: p.workerKey,
		Rows: cfg.Rows, Writers: writersOf(p, cfg.Writers), Batch: cfg.Batch, Preload: cfg.Preload, KeyBytes: p.keyBytes,
	}
	keyCol := p.column + " PRIMARY KEY"
	switch {
	case p.series:
		res.Scheme = "bigint"
	case p.scheme == nil:
		keyCol = "bigserial PRIMARY KEY"
		res.Scheme = Baseline
	default:
		res.Scheme = p.scheme.Name
	}
	switch {
	case p.server:
		res.Method = "insert-select"
	case cfg.Batch == 1:
		res.Method = "insert"
	case p.series:
		res.Method = "insert-select unnest"
	}
	if _, err := h.meta.Exec(ctx, "CREATE TABLE "+table.Sanitize()+" (id "+keyCol+
		", created_at timestamptz NOT NULL, payload bytea NOT NULL) WITH (autovacuum_enabled = off)"); err != nil {
		return res, fmt.Errorf("%s: creating table: %w", p.label, err)
	}
	if !cfg.Keep {
		defer func() {
			c, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if _, err := h.meta.Exec(c, "DROP TABLE "+table.Sanitize()); err != nil {
				h.prog.Note(fmt.Sprintf("dropping %s: %v", table.Sanitize(), err))
			}
		}()
	}
	id, err := lookupIdent(ctx, h.meta, table)
	if err != nil {
		return res, fmt.Errorf("%s: %w", p.label, err)
	}
	h.sample = h.startSample(p, round, i)
	defer func() { h.sample = nil }()
	if cfg.Preload > 0 {
		h.prog.Phase(p.label, "preload", cfg.Preload)
		ph, err := h.load(ctx, p, table, 1, cfg.Preload, h.prog.Rows)
		if err != nil {
			return res, err
		}
		h.prog.PhaseDone(ph.elapsed)
	}
	if err := h.checkpoint(ctx); err != nil {
		return res, fmt.Errorf("%s: checkpoint: %w", p.label, err)
	}
	release := h.holdWAL(ctx)
	defer release()
	var before, after counters
	h.readIndex(ctx, id, &before)
	h.flushStats(ctx)
	if before, err = h.readCountersInto(ctx, id, before); err != nil {
		return res, err
	}

	h.prog.Phase(p.label, "measure", cfg.Rows)
	ph, err := h.load(ctx, p, table, int64(cfg.Preload)+1, cfg.Rows, h.prog.Rows)
	if err != nil {
		return res, err
	}
	h.prog.PhaseDone(ph.elapsed)

	h.flushStats(ctx)
	if after, err = h.readCountersInto(ctx, id, after); err != nil {
		return res, err
	}
	h.readIndex(ctx, id, &after)

	res.Seconds = ph.elapsed.Seconds()
	res.RowsPerSec = float64(cfg.Rows) / ph.elapsed.Seconds()
	res.RowsPerSecTenths = ph.tenths
	if len(ph.latencies) > 0 {
		res.P50Ms = ptr(percentile(ph.latencies, 0.50))
		res.P99Ms = ptr(percentile(ph.latencies, 0.99))
	}
	if res.IndexBytes, res.TableBytes, err = h.sizes(ctx, id); err != nil {
		return res, fmt.Errorf("%s: sizes: %w", p.label, err)
	}
	res.IndexBytesPerRow = float64(res.IndexBytes) / float64(cfg.Preload+cfg.Rows)
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
	if h.walinspect.ok() {
		splits, fpiBytes, err := h.walStats(ctx, id, before.lsn, after.lsn)
		if err != nil {
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
	if err := h.readBack(ctx, p, &res, round, i, func() (readTarget, error) { return h.pgTarget(ctx, table, id) }); err != nil {
		return res, err
	}
	res.Unavailable = unavailable(&res)
	return res, nil
}

func (h *harness) readCountersInto(ctx context.Context, id ident, c counters) (counters, error) {
	n, err := h.readCounters(ctx, id)
	if err != nil {
		return c, err
	}
	n.leafPages, n.leafOK, n.density, n.fragment = c.leafPages, c.leafOK, c.density, c.fragment
	return n, nil
}

// unavailable names the nil metrics of r.
func unavailable(r *Result) []string {
	if r.Engine == EngineMariaDB {
		return unavailableMariaDB(r)
	}
	var out []string
	for _, m := range []struct {
		name string
		nil  bool
	}{
		{"leaf_pages", r.LeafPages == nil},
		{"avg_leaf_density", r.AvgLeafDensity == nil},
		{"leaf_fragmentation", r.LeafFragmentation == nil},
		{"page_splits", r.PageSplits == nil},
		{"wal_page_splits", r.WALPageSplits == nil},
		{"wal_fpi", r.WALFPI == nil},
		{"wal_fpi_bytes", r.WALFPIBytes == nil},
		{"idx_blks_read", r.IdxBlksRead == nil},
		{"idx_blks_hit", r.IdxBlksHit == nil},
	} {
		if m.nil {
			out = append(out, m.name)
		}
	}
	return out
}
