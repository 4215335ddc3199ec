package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// Phases of a migration, as recorded in the state table.
const (
	phaseBackfill = "backfill"
	phaseIndex    = "index"
	phaseChildren = "children"
	phaseSwap     = "swap"
	phaseValidate = "validate"
	phaseDone     = "done"
	phaseReverted = "reverted"
)

// state is a migration's row of the state table.
type state struct {
	phase      string
	cursorTime *string
	cursorKey  *string
	lastNew    *string
	rowsDone   int64
	child      int
	block      int64
}

func (p *Plan) loadState(ctx context.Context, conn querier) error {
	if err := p.readState(ctx, conn); err != nil {
		return fmt.Errorf("migrate: read the state table %s: %w", p.stateTable(), err)
	}
	return nil
}

func (p *Plan) readState(ctx context.Context, conn querier) error {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", p.stateTable()).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return nil
	}
	var sh shape
	err := conn.QueryRow(ctx, "SELECT phase, spec, time_column, key_column, key_type, pk_name, started, fks, coalesce(to_jsonb(s)->'shape', '{}') FROM "+
		p.stateTable()+" s WHERE tbl = $1", p.Table).Scan(&p.Phase, &p.To, &p.TimeColumn, &p.Key, &p.KeyType, &p.PKName, &p.Start, &p.FKs, &sh)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	p.Start = p.Start.UTC()
	p.Indexes, p.Sequence, p.SequenceOwned, p.SequenceShared, p.Identity, p.Quiet =
		sh.Indexes, sh.Sequence, sh.SequenceOwned, sh.SequenceShared, sh.Identity, sh.Quiet
	return err
}

func (m *migration) state(ctx context.Context) (state, error) {
	var s state
	err := m.conn.QueryRow(ctx, "SELECT phase, cursor_time, cursor_key, last_new, rows_done, child, block FROM "+
		m.p.stateTable()+" WHERE tbl = $1", m.p.Table).Scan(&s.phase, &s.cursorTime, &s.cursorKey, &s.lastNew, &s.rowsDone, &s.child, &s.block)
	return s, err
}

type migration struct {
	conn    *pgx.Conn
	p       *Plan
	opt     Options
	samples []lsnSample   // the primary's WAL positions at past checks
	lag     time.Duration // measured at the last check
	active  int
	size    sizer
}

func (m *migration) logf(format string, args ...any) {
	if m.opt.Log != nil {
		m.opt.Log.Info(fmt.Sprintf(format, args...), "table", m.p.qtable())
	}
}

// phase starts a Progress phase and returns its reporter: at(done)
// reports done units of total, finish() ends the phase once all is done.
func (m *migration) phase(name, unit string, total, done int64) (at func(int64), finish func()) {
	pr := m.opt.Progress
	if pr == nil {
		return func(int64) {}, func() {}
	}
	start := time.Now()
	pr.Phase(name, unit, total, done)
	return pr.At, func() { pr.PhaseDone(time.Since(start)) }
}

func (m *migration) setPhase(ctx context.Context, phase string) error {
	_, err := m.conn.Exec(ctx, "UPDATE "+m.p.stateTable()+" SET phase = $2, child = 0, block = 0, updated = now() WHERE tbl = $1", m.p.Table, phase)
	m.p.Phase = phase
	if err == nil {
		m.logf("phase %s", phase)
	}
	return err
}

// WriteDryRun writes the plan (Write) and the DDL of Run's prepare and swap
// transactions, as Run with DryRun would run them.
func (p *Plan) WriteDryRun(w io.Writer) error {
	if err := p.Write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "-- dry run: nothing changed. The prepare transaction would run:\n%s;\n-- and the swap transaction:\n%s;\n",
		strings.Join(p.prepareSQL(), ";\n"), strings.Join(append(p.lockSQL(), p.switchSQL(true, p.deps)...), ";\n"))
	return err
}

// Run migrates opt.Table to opt.To, or resumes the migration recorded in
// the state table, and returns the plan it followed. Input errors wrap
// ErrInput and a bigint → Snowflake plan whose order does not hold wraps
// ErrOrder; both come before any change. A canceled ctx stops Run between
// statements; run it again to resume. With opt.DryRun it returns the plan
// and changes nothing (Plan.WriteDryRun shows the DDL).
func Run(ctx context.Context, conn *pgx.Conn, opt Options) (*Plan, error) {
	if opt.Batch == 0 {
		opt.Batch = DefaultBatch
	}
	if opt.Batch < 1 {
		return nil, fieldf("Options.Batch", fmt.Sprint(opt.Batch), "want at least 1")
	}
	if opt.MaxLag == 0 {
		opt.MaxLag = DefaultMaxLag
	}
	switch {
	case opt.ChunkTime < 0 || opt.ChunkTime > 0 && opt.ChunkTime < time.Millisecond:
		return nil, fieldf("Options.ChunkTime", opt.ChunkTime.String(), "want at least 1ms (or 0: fixed batches)")
	case opt.MaxLag < 0:
		return nil, fieldf("Options.MaxLag", opt.MaxLag.String(), "want a positive duration")
	case opt.MaxActive < 0:
		return nil, fieldf("Options.MaxActive", fmt.Sprint(opt.MaxActive), "want at least 0 (0: no limit)")
	}
	p, err := Inspect(ctx, conn, opt)
	if err != nil {
		return p, err
	}
	if p.Phase == "" && !p.OrderHolds {
		return p, fmt.Errorf("%w: %w", ErrOrder, &idgen.FieldError{Field: "Options.To", Value: echo.Quote(p.To),
			Allowed: fmt.Sprintf("issues keys from %s, but %s's maximum key is %s; choose an earlier epoch or a longer time field", p.FirstKey, p.qtable(), p.MaxKey)})
	}
	m := &migration{conn: conn, p: p, opt: opt}
	if opt.DryRun {
		return p, nil
	}
	if p.Phase == phaseDone {
		m.logf("%s is already migrated to %s", p.qtable(), p.To)
		return p, nil
	}
	if p.Phase == phaseReverted {
		if !opt.StartOver {
			return p, inputf("the migration of %s was reverted; Discard drops what it left (idgen migrate discard), or Run with StartOver (run --yes) drops it and migrates anew",
				p.qtable())
		}
		if err := discard(ctx, conn, opt.Table); err != nil {
			return p, withStep(err, "discard the reverted migration")
		}
		m.logf("dropped what the reverted migration of %s left; migrating anew", p.qtable())
		opt.StartOver = false
		return Run(ctx, conn, opt)
	}
	unlock, err := p.lock(ctx, conn)
	if err != nil {
		return p, err
	}
	defer unlock()
	if p.Phase == "" {
		if err := m.prepare(ctx); err != nil {
			return p, withStep(err, "prepare")
		}
	} else {
		m.logf("resuming the migration of %s to %s at phase %s", p.qtable(), p.To, p.Phase)
	}
	// This run's batch settings, which Set may change while it runs.
	if _, err := conn.Exec(ctx, p.addStateColumns()); err != nil {
		return p, withStep(err, "update the state table %s", p.stateTable())
	}
	if _, err := conn.Exec(ctx, "UPDATE "+p.stateTable()+" SET batch = $2, chunk_ms = $3, hold = '' WHERE tbl = $1",
		p.Table, opt.Batch, opt.ChunkTime.Milliseconds()); err != nil {
		return p, withStep(err, "record the batch settings")
	}
	steps := []struct {
		phase, next string
		do          func(context.Context) error
	}{
		{phaseBackfill, phaseIndex, m.backfill},
		{phaseIndex, phaseChildren, m.index},
		{phaseChildren, phaseSwap, m.children},
		{phaseSwap, "", m.swap},
		{phaseValidate, phaseDone, m.validate},
	}
	for _, s := range steps {
		if p.Phase != s.phase {
			continue
		}
		if err := s.do(ctx); err != nil {
			return p, fmt.Errorf("migrate: %s phase: %w", s.phase, err)
		}
		if s.next != "" {
			if err := m.setPhase(ctx, s.next); err != nil {
				return p, withStep(err, "record phase %s", s.next)
			}
		}
	}
	return p, nil
}

// lock takes the table's migration lock, a session advisory lock on its
// name: one run, revert or finish per table at a time.
func (p *Plan) lock(ctx context.Context, conn *pgx.Conn) (unlock func(), err error) {
	name := p.Schema + "." + p.Table
	var locked bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtext('idgen_migrate'), hashtext($1))", name).Scan(&locked); err != nil {
		return nil, withStep(err, "lock %s", p.qtable())
	}
	if !locked {
		// Who: a run going on, or the session of a killed run whose
		// statement (a CREATE INDEX CONCURRENTLY, say) still runs.
		var pid int
		var state, query string
		_ = conn.QueryRow(ctx, `SELECT a.pid, coalesce(a.state, ''), left(coalesce(a.query, ''), 60) FROM pg_locks l
			JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND l.classid = hashtext('idgen_migrate')::oid AND l.objid = hashtext($1)::oid AND l.objsubid = 2`, name).Scan(&pid, &state, &query)
		return nil, fmt.Errorf("migrate: another session holds the migration lock of %s (pid %d, %s: %q): a run going on, or the session of an interrupted run whose last statement still runs; stop the run or wait for it, or end the session with SELECT pg_terminate_backend(%d), then try again",
			p.qtable(), pid, state, query, pid)
	}
	return func() {
		conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext('idgen_migrate'), hashtext($1))", name)
	}, nil
}

func (m *migration) prepare(ctx context.Context) error {
	p := m.p
	tx, err := m.conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	stmts := append([]string{`CREATE TABLE IF NOT EXISTS ` + p.stateTable() + ` (
		tbl text PRIMARY KEY, spec text NOT NULL, time_column text NOT NULL, key_column text NOT NULL,
		key_type text NOT NULL, pk_name text NOT NULL, phase text NOT NULL, started timestamptz NOT NULL,
		cursor_time text, cursor_key text, last_new text, rows_done bigint NOT NULL DEFAULT 0,
		child int NOT NULL DEFAULT 0, block bigint NOT NULL DEFAULT 0, fks jsonb NOT NULL, updated timestamptz NOT NULL DEFAULT now(),
		` + stateColumns + `)`, p.addStateColumns()},
		p.prepareSQL()...)
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return fmt.Errorf("%w (in %.80q)", err, s)
		}
	}
	fks := p.FKs
	if fks == nil {
		fks = []FK{} // a table no other table references: [], not NULL
	}
	sh := shape{Indexes: p.Indexes, Sequence: p.Sequence, SequenceOwned: p.SequenceOwned, SequenceShared: p.SequenceShared,
		Identity: p.Identity, Quiet: p.Quiet}
	if _, err := tx.Exec(ctx, "INSERT INTO "+p.stateTable()+
		" (tbl, spec, time_column, key_column, key_type, pk_name, phase, started, fks, shape) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
		p.Table, p.To, p.TimeColumn, p.Key, p.KeyType, p.PKName, phaseBackfill, p.Start, fks, sh); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	p.Phase = phaseBackfill
	m.logf("prepared: column %s, mapping table %s, function %s(), triggers on %s and %d child table(s)",
		p.newCol(), p.mapTable(), p.keyFunc(), p.Table, len(p.FKs))
	return nil
}

// keyer issues the backfill's keys in order.
type keyer struct {
	p     *Plan
	g     idgen.AtGenerator
	floor time.Time // no key before this time: the last key's tick on resume
	n     int64     // keys issued before, for UUIDv7 without a time column
}

func (m *migration) newKeyer(ctx context.Context, st state) (*keyer, error) {
	p := m.p
	k := &keyer{p: p, n: st.rowsDone}
	if p.NewType != "bigint" {
		k.g = strategies.NewUUIDv7()
		return k, nil
	}
	g, err := snowflake.New(ctx, snowflake.Config{Layout: p.Layout, Nodes: p.Nodes})
	if err != nil {
		return nil, err
	}
	k.g = g
	if st.lastNew != nil {
		// Resume: bring NewAt's sequence to the last key issued, so that the
		// next key is above it.
		id, err := p.Scheme.Parse(*st.lastNew)
		if err != nil {
			return nil, err
		}
		v, _ := id.Uint64()
		parts, err := p.Layout.Decompose(v)
		if err != nil {
			return nil, err
		}
		k.floor = parts.Time
		for i := uint64(0); i <= parts.Sequence; i++ {
			if _, err := g.NewAt(k.floor); err != nil {
				return nil, err
			}
		}
	}
	return k, nil
}

// key returns the key of the next row, created at t (zero without a time
// column).
func (k *keyer) key(t time.Time) (idgen.ID, error) {
	if t.IsZero() {
		t = k.p.Start
		if k.p.NewType != "bigint" {
			// 256 keys per ms, 256 ns apart: UUIDv7's rand_a holds the
			// sub-millisecond time in 256 ns units, so keys keep the
			// current key order.
			t = t.Truncate(time.Millisecond).Add(time.Duration(k.n/256)*time.Millisecond + time.Duration(k.n%256)*256)
		}
	}
	if t.Before(k.floor) {
		t = k.floor
	}
	k.n++
	return k.g.NewAt(t)
}

func (m *migration) backfill(ctx context.Context) error {
	p := m.p
	st, err := m.state(ctx)
	if err != nil {
		return err
	}
	k, err := m.newKeyer(ctx, st)
	if err != nil {
		return err
	}
	key, nc, t := ident(p.Key), ident(p.newCol()), p.qtable()
	var left int64
	if err := m.conn.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s IS NULL", t, nc)).Scan(&left); err != nil {
		return err
	}
	total := st.rowsDone + left
	at, finish := m.phase("backfill "+p.Table, "rows", total, st.rowsDone)
	var q string
	if p.TimeColumn != "" {
		tc := ident(p.TimeColumn)
		q = fmt.Sprintf("SELECT t.%[1]s::text, t.%[2]s::timestamptz, t.%[2]s::text FROM %[3]s t WHERE t.%[4]s IS NULL AND ($1::text IS NULL OR (t.%[2]s, t.%[1]s) > ($1::%[5]s, $2::%[6]s)) ORDER BY t.%[2]s, t.%[1]s LIMIT $3",
			key, tc, t, nc, p.TimeType, p.KeyType)
	} else {
		q = fmt.Sprintf("SELECT t.%[1]s::text, NULL::timestamptz, NULL::text FROM %[2]s t WHERE t.%[3]s IS NULL AND ($1::text IS NULL OR t.%[1]s > $2::%[4]s) ORDER BY t.%[1]s LIMIT $3",
			key, t, nc, p.KeyType)
	}
	// Rows whose key changed since they were read (a key update gives the
	// row its new key and mapping at once) are skipped: their new keys are
	// a gap, never a wrong mapping.
	update := fmt.Sprintf(`WITH u AS (UPDATE %[1]s AS t SET %[2]s = v.n::%[3]s FROM unnest($1::text[], $2::text[]) AS v(o, n)
		WHERE t.%[4]s = v.o::%[5]s AND t.%[2]s IS NULL RETURNING t.%[4]s AS o, t.%[2]s AS n)
		INSERT INTO %[6]s (old_key, new_key) SELECT o, n FROM u ON CONFLICT (old_key) DO UPDATE SET new_key = EXCLUDED.new_key`,
		t, nc, p.NewType, key, p.KeyType, p.mapTable())
	save := "UPDATE " + p.stateTable() + " SET cursor_time = $2, cursor_key = $3, last_new = $4, rows_done = rows_done + $5, rate = $6, lag_ms = $7, active = $8, updated = now() WHERE tbl = $1"
	if _, err := m.conn.Exec(ctx, "UPDATE "+p.stateTable()+" SET rows_total = $2 WHERE tbl = $1", p.Table, total); err != nil {
		return err
	}
	cursorTime, cursorKey := st.cursorTime, st.cursorKey
	done := st.rowsDone
	olds, news := make([]string, 0, m.opt.Batch), make([]string, 0, m.opt.Batch)
	for {
		if cursorKey == nil {
			cursorTime = nil
		} else if cursorTime == nil {
			cursorTime = new(string) // any non-NULL $1 enables the cursor
		}
		live, err := m.gate(ctx)
		if err != nil {
			return err
		}
		m.size.set(live.batch, live.chunkTime)
		start := time.Now()
		rows, err := m.conn.Query(ctx, q, cursorTime, cursorKey, m.size.n)
		if err != nil {
			return err
		}
		olds, news = olds[:0], news[:0]
		var lastTime *string
		for rows.Next() {
			var old string
			var created *time.Time
			if err := rows.Scan(&old, &created, &lastTime); err != nil {
				rows.Close()
				return err
			}
			var at time.Time
			if created != nil {
				at = *created
			}
			id, err := k.key(at)
			if err != nil {
				rows.Close()
				return fmt.Errorf("key for %s = %s: %w", p.Key, old, err)
			}
			olds, news = append(olds, old), append(news, id.String())
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(olds) == 0 {
			finish() // not on an error: the phase is not done
			return nil
		}
		lastKey, lastNew := olds[len(olds)-1], news[len(news)-1]
		var n int64
		err = m.batchTx(ctx, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, update, olds, news)
			if err != nil {
				return err
			}
			n = tag.RowsAffected()
			m.size.observe(len(olds), time.Since(start))
			_, err = tx.Exec(ctx, save, p.Table, lastTime, lastKey, lastNew, n, m.size.rate, m.lag.Milliseconds(), m.active)
			return err
		})
		if err != nil {
			return err
		}
		cursorTime, cursorKey = lastTime, &lastKey
		done += n
		at(done)
		if m.opt.OnBatch != nil {
			m.opt.OnBatch(done, total)
		}
	}
}

// constraintExists reports whether table has the named constraint.
func (m *migration) constraintExists(ctx context.Context, table, name string) (bool, error) {
	var ok bool
	err := m.conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass($1) AND conname = $2)", table, name).Scan(&ok)
	return ok, err
}

// addCheck adds a CHECK NOT VALID, then validates it (no lock that blocks
// writes while it scans).
func (m *migration) addCheck(ctx context.Context, table, name, check string) error {
	ok, err := m.constraintExists(ctx, table, name)
	if err != nil {
		return err
	}
	if !ok {
		if _, err := m.conn.Exec(ctx, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s %s NOT VALID", table, ident(name), check)); err != nil {
			return err
		}
	}
	_, err = m.conn.Exec(ctx, fmt.Sprintf("ALTER TABLE %s VALIDATE CONSTRAINT %s", table, ident(name)))
	return err
}

// batchTx runs f in a transaction of the backfill; with Plan.Quiet the
// user's triggers and rules do not fire in it (session_replication_role
// = replica: the backfill changes only the migration's own columns).
func (m *migration) batchTx(ctx context.Context, f func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, m.conn, func(tx pgx.Tx) error {
		if m.p.Quiet {
			if _, err := tx.Exec(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
				return err
			}
		}
		return f(tx)
	})
}

// createIndex runs create, a CREATE INDEX CONCURRENTLY of the index
// schema.name, first dropping an invalid one an interrupted build left
// behind; it does nothing when a valid one exists.
func (m *migration) createIndex(ctx context.Context, schema, name, create string) error {
	var valid *bool
	err := m.conn.QueryRow(ctx, `SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`, schema, name).Scan(&valid)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if valid != nil && *valid {
		return nil
	}
	if valid != nil {
		if _, err := m.conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+pgx.Identifier{schema, name}.Sanitize()); err != nil {
			return err
		}
	}
	_, err = m.conn.Exec(ctx, create)
	return err
}

// movedOn returns the moved columns of the table (a partition's are its
// partitioned table's).
func (p *Plan) movedOn(schema, table string) map[string]bool {
	q := pgx.Identifier{schema, table}.Sanitize()
	for _, c := range p.childColumns() {
		if slices.Contains(c.leaves, q) {
			return p.moved(c.schema, c.table)
		}
	}
	return p.moved(schema, table)
}

// buildTwin builds ix's twin named with suffix on the columns with
// colSuffix (the new columns, or after the swap the old ones):
// CONCURRENTLY, or for an index on a partitioned table ON ONLY that table,
// then CONCURRENTLY on each partition, attached.
func (m *migration) buildTwin(ctx context.Context, ix Index, suffix, colSuffix string) error {
	moved := m.p.movedOn(ix.Schema, ix.Table)
	name := twinName(ix.Name, suffix)
	if len(ix.Parts) == 0 {
		return m.createIndex(ctx, ix.Schema, name, ix.createSQL(name, ix.qtable(), moved, colSuffix, false))
	}
	if _, err := m.conn.Exec(ctx, fmt.Sprintf("DO $d$ BEGIN IF to_regclass(%s) IS NULL THEN EXECUTE %s; END IF; END $d$",
		quoteLiteral(ix.qname(name)), quoteLiteral(ix.createSQL(name, ix.qtable(), moved, colSuffix, true)))); err != nil {
		return err
	}
	for _, part := range ix.Parts {
		pname := twinName(part.Name, suffix)
		if err := m.createIndex(ctx, part.Schema, pname, ix.createSQL(pname, part.qtable(), moved, colSuffix, false)); err != nil {
			return err
		}
		if _, err := m.conn.Exec(ctx, fmt.Sprintf(`DO $d$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass(%s)
			AND inhparent = to_regclass(%s)) THEN ALTER INDEX %s ATTACH PARTITION %s; END IF; END $d$`,
			quoteLiteral(part.qname(pname)), quoteLiteral(ix.qname(name)), ix.qname(name), part.qname(pname))); err != nil {
			return err
		}
	}
	return nil
}

// columnOf returns the moved foreign key column whose table (or
// partition) holds ix and that ix uses, if any.
func (p *Plan) columnOf(ix Index) (childColumn, bool) {
	q := pgx.Identifier{ix.Schema, ix.Table}.Sanitize()
	for _, c := range p.childColumns() {
		if q != c.qtable() && !slices.Contains(c.leaves, q) {
			continue
		}
		for _, k := range ix.Keys {
			if k.Column == c.column {
				return c, true
			}
		}
		if slices.Contains(ix.Include, c.column) {
			return c, true
		}
	}
	return childColumn{}, false
}

func (m *migration) index(ctx context.Context) error {
	p := m.p
	if err := m.addCheck(ctx, p.qtable(), p.checkName(), fmt.Sprintf("CHECK (%s IS NOT NULL)", ident(p.newCol()))); err != nil {
		return err
	}
	// The table's own indexes on the key; those that also use a foreign
	// key column (self-reference) wait for its backfill.
	for _, ix := range p.Indexes {
		if _, child := p.columnOf(ix); !child {
			if err := m.buildTwin(ctx, ix, newSuffix, newSuffix); err != nil {
				return fmt.Errorf("index %s: %w", ix.Name, err)
			}
		}
	}
	return nil
}

func (m *migration) children(ctx context.Context) error {
	p := m.p
	st, err := m.state(ctx)
	if err != nil {
		return err
	}
	us := p.units()
	for i := st.child; i < len(us); i++ {
		u := us[i]
		block := int64(0)
		if i == st.child {
			block = st.block
		}
		if err := m.child(ctx, i, u, block); err != nil {
			return fmt.Errorf("%s.%s: %w", u.table, u.col.column, err)
		}
		if i+1 == len(us) || !us[i+1].col.same(u.col) {
			if err := m.childDone(ctx, u.col); err != nil {
				return fmt.Errorf("%s.%s: %w", u.col.qtable(), u.col.column, err)
			}
		}
		if _, err := m.conn.Exec(ctx, "UPDATE "+p.stateTable()+" SET child = $2, block = 0, updated = now() WHERE tbl = $1", p.Table, i+1); err != nil {
			return err
		}
	}
	return nil
}

// childSet is the UPDATE that sets c's new column from the parent's new key.
func (m *migration) childSet(c childColumn, table string) string {
	p := m.p
	return fmt.Sprintf("UPDATE %[1]s AS c SET %[2]s = p.%[3]s FROM %[4]s AS p WHERE p.%[5]s = c.%[6]s AND c.%[2]s IS NULL AND c.%[6]s IS NOT NULL",
		table, ident(c.newCol()), ident(p.newCol()), p.qtable(), ident(p.Key), ident(c.column))
}

// child backfills u's table's new column in batches of heap blocks.
func (m *migration) child(ctx context.Context, i int, u unit, block int64) error {
	p := m.p
	var blocks, tuples int64
	if err := m.conn.QueryRow(ctx, `SELECT pg_relation_size(c.oid) / current_setting('block_size')::bigint, greatest(c.reltuples, 0)::bigint
		FROM pg_class c WHERE c.oid = to_regclass($1)`, u.table).Scan(&blocks, &tuples); err != nil {
		return err
	}
	perBlock := 1.0 // rows per heap block
	if blocks > 0 && tuples > 0 {
		perBlock = float64(tuples) / float64(blocks)
	}
	set := m.childSet(u.col, u.table)
	save := "UPDATE " + p.stateTable() + " SET child = $2, block = $3, updated = now() WHERE tbl = $1"
	at, finish := m.phase(fmt.Sprintf("backfill %s.%s", strings.Trim(u.table[strings.LastIndex(u.table, ".")+1:], `"`), u.col.column), "blocks", blocks, block)
	for block < blocks {
		live, err := m.gate(ctx)
		if err != nil {
			return err
		}
		m.size.set(live.batch, live.chunkTime)
		end := block + max(1, int64(float64(m.size.n)/perBlock))
		start := time.Now()
		err = m.batchTx(ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, set+fmt.Sprintf(" AND c.ctid >= '(%d,0)'::tid AND c.ctid < '(%d,0)'::tid", block, end)); err != nil {
				return err
			}
			m.size.observe(int(float64(end-block)*perBlock), time.Since(start))
			_, err := tx.Exec(ctx, save, p.Table, i, end)
			return err
		})
		if err != nil {
			return err
		}
		at(min(end, blocks))
		if m.opt.OnBatch != nil {
			m.opt.OnBatch(min(end, blocks), blocks)
		}
		block = end
	}
	finish()
	return nil
}

// childDone completes c once its tables are backfilled: rows an update
// moved behind the cursor (normally none), the CHECK that proves the new
// column complete, and the twins of the indexes on it.
func (m *migration) childDone(ctx context.Context, c childColumn) error {
	if err := m.batchTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, m.childSet(c, c.qtable()))
		return err
	}); err != nil {
		return err
	}
	if err := m.addCheck(ctx, c.qtable(), c.checkName(), c.check(c.column, c.newCol())); err != nil {
		return err
	}
	for _, ix := range m.p.Indexes {
		if ixc, ok := m.p.columnOf(ix); ok && ixc.same(c) {
			if err := m.buildTwin(ctx, ix, newSuffix, newSuffix); err != nil {
				return fmt.Errorf("index %s: %w", ix.Name, err)
			}
		}
	}
	return nil
}

// depsTx reads the dependents in tx (search_path pg_catalog), refusing
// those that appeared since the plan and cannot be re-created.
func (p *Plan) depsTx(ctx context.Context, tx pgx.Tx) (*depSet, error) {
	if _, err := tx.Exec(ctx, "SET LOCAL search_path = pg_catalog"); err != nil {
		return nil, err
	}
	p.knowRecorded()
	d, err := p.readDeps(ctx, tx)
	if err != nil {
		return nil, err
	}
	if len(d.refusals) > 0 {
		return nil, &ShapeError{Table: p.qtable(), Refusals: append(d.refusals, Refusal{Shape: "migration in progress", Object: p.qtable(),
			Why: "the shapes above appeared after run started", Workaround: "remove them", Abort: true})}
	}
	return d, nil
}

func (m *migration) swap(ctx context.Context) error {
	took, err := m.lockedTx(ctx, func(tx pgx.Tx) ([]string, error) {
		d, err := m.p.depsTx(ctx, tx)
		if err != nil {
			return nil, err
		}
		return m.p.switchSQL(true, d), nil
	}, phaseValidate)
	if err != nil {
		return err
	}
	m.logf("swapped %s.%s and %d foreign key(s) in %v", m.p.Table, m.p.Key, len(m.p.FKs), took.Round(time.Millisecond))
	return nil
}

// lockedTx runs, in one transaction, the lock statements, then the
// statements build returns (it may read the catalogs under those locks),
// and records phase (unless ""); it is retried on a lock timeout, and
// returns how long the transaction that committed took.
func (m *migration) lockedTx(ctx context.Context, build func(pgx.Tx) ([]string, error), phase string) (time.Duration, error) {
	p := m.p
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := pgx.BeginFunc(ctx, m.conn, func(tx pgx.Tx) error {
			for _, s := range p.lockSQL() {
				if _, err := tx.Exec(ctx, s); err != nil {
					return err
				}
			}
			stmts, err := build(tx)
			if err != nil {
				return err
			}
			for _, s := range stmts {
				if _, err := tx.Exec(ctx, s); err != nil {
					return fmt.Errorf("%w (in %.80q)", err, s)
				}
			}
			if phase == "" {
				return nil
			}
			_, err = tx.Exec(ctx, "UPDATE "+p.stateTable()+" SET phase = $2, updated = now() WHERE tbl = $1", p.Table, phase)
			return err
		})
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55P03" && attempt < 10 {
			if m.opt.Log != nil {
				m.opt.Log.Warn(fmt.Sprintf("%s: lock timeout (attempt %d), retrying", phase, attempt), "table", m.p.qtable())
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		if phase != "" {
			p.Phase = phase
		}
		return time.Since(start), nil
	}
}

// stmts is a lockedTx build of fixed statements.
func stmts(s []string) func(pgx.Tx) ([]string, error) {
	return func(pgx.Tx) ([]string, error) { return s, nil }
}

// validate validates the foreign keys the swap re-added NOT VALID (no
// lock that blocks writes); one declared on a partitioned table is
// validated on each partition, then added back on the partitioned table,
// which attaches the partitions' copies without a scan.
func (m *migration) validate(ctx context.Context) error {
	p := m.p
	for _, fk := range p.FKs {
		if fk.Clones == nil {
			if _, err := m.conn.Exec(ctx, fmt.Sprintf("ALTER TABLE %s VALIDATE CONSTRAINT %s", fk.qtable(), ident(fk.Name))); err != nil {
				return err
			}
			continue
		}
		ok, err := m.constraintExists(ctx, fk.qtable(), fk.Name)
		if err != nil || ok {
			return err
		}
		for i, l := range fk.Leaves {
			if _, err := m.conn.Exec(ctx, fmt.Sprintf("ALTER TABLE %s VALIDATE CONSTRAINT %s", l, ident(fk.Clones[i]))); err != nil {
				return err
			}
		}
		add := []string{fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s %s", fk.qtable(), ident(fk.Name), p.fkDef(fk))}
		if fk.Comment != "" {
			add = append(add, fmt.Sprintf("COMMENT ON CONSTRAINT %s ON %s IS %s", ident(fk.Name), fk.qtable(), quoteLiteral(fk.Comment)))
		}
		if err := pgx.BeginFunc(ctx, m.conn, func(tx pgx.Tx) error {
			for _, s := range add {
				if _, err := tx.Exec(ctx, s); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}
