package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idgenkit/idgen"
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

func (p *Plan) loadState(ctx context.Context, conn *pgx.Conn) error {
	if err := p.readState(ctx, conn); err != nil {
		return fmt.Errorf("migrate: read the state table %s: %w", p.stateTable(), err)
	}
	return nil
}

func (p *Plan) readState(ctx context.Context, conn *pgx.Conn) error {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", p.stateTable()).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return nil
	}
	err := conn.QueryRow(ctx, "SELECT phase, spec, time_column, key_column, key_type, pk_name, started, fks FROM "+p.stateTable()+
		" WHERE tbl = $1", p.Table).Scan(&p.Phase, &p.To, &p.TimeColumn, &p.Key, &p.KeyType, &p.PKName, &p.Start, &p.FKs)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	p.Start = p.Start.UTC()
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
		strings.Join(p.prepareSQL(), ";\n"), strings.Join(p.swapSQL(), ";\n"))
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
		return nil, inputf("Options.Batch %d must be at least 1", opt.Batch)
	}
	if opt.MaxLag == 0 {
		opt.MaxLag = DefaultMaxLag
	}
	switch {
	case opt.ChunkTime < 0 || opt.ChunkTime > 0 && opt.ChunkTime < time.Millisecond:
		return nil, inputf("Options.ChunkTime %v must be at least 1ms (or 0: fixed batches)", opt.ChunkTime)
	case opt.MaxLag < 0:
		return nil, inputf("Options.MaxLag %v must be positive", opt.MaxLag)
	case opt.MaxActive < 0:
		return nil, inputf("Options.MaxActive %d must be at least 0 (0: no limit)", opt.MaxActive)
	}
	p, err := Inspect(ctx, conn, opt)
	if err != nil {
		return nil, err
	}
	if p.Phase == "" && !p.OrderHolds {
		return p, fmt.Errorf("%w: %s's maximum key is %s but Options.To %q issues keys from %s; choose an earlier epoch or a longer time field",
			ErrOrder, p.qtable(), p.MaxKey, clip(p.To), p.FirstKey)
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
		return p, inputf("the migration of %s was reverted; Finish on %s removes what it left, then Run migrates anew",
			p.qtable(), p.Table)
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
		return nil, fmt.Errorf("migrate: another run is migrating %s (advisory lock held)", p.qtable())
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
		` + stateColumns + `)`},
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
	if _, err := tx.Exec(ctx, "INSERT INTO "+p.stateTable()+
		" (tbl, spec, time_column, key_column, key_type, pk_name, phase, started, fks) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
		p.Table, p.To, p.TimeColumn, p.Key, p.KeyType, p.PKName, phaseBackfill, p.Start, fks); err != nil {
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
	update := fmt.Sprintf("UPDATE %s AS t SET %s = v.n::%s FROM unnest($1::text[], $2::text[]) AS v(o, n) WHERE t.%s = v.o::%s",
		t, nc, p.NewType, key, p.KeyType)
	mapping := fmt.Sprintf("INSERT INTO %s (old_key, new_key) SELECT o::%s, n::%s FROM unnest($1::text[], $2::text[]) AS v(o, n) ON CONFLICT (old_key) DO UPDATE SET new_key = EXCLUDED.new_key",
		p.mapTable(), p.KeyType, p.NewType)
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
		err = pgx.BeginFunc(ctx, m.conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, update, olds, news); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, mapping, olds, news); err != nil {
				return err
			}
			m.size.observe(len(olds), time.Since(start))
			_, err := tx.Exec(ctx, save, p.Table, lastTime, lastKey, lastNew, len(olds), m.size.rate, m.lag.Milliseconds(), m.active)
			return err
		})
		if err != nil {
			return err
		}
		cursorTime, cursorKey = lastTime, &lastKey
		done += int64(len(olds))
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

// createIndex builds an index CONCURRENTLY, first dropping an invalid one
// an interrupted build left behind.
func (m *migration) createIndex(ctx context.Context, name, def string) error {
	var valid *bool
	err := m.conn.QueryRow(ctx, `SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`, m.p.Schema, name).Scan(&valid)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if valid != nil && *valid {
		return nil
	}
	qname := pgx.Identifier{m.p.Schema, name}.Sanitize()
	if valid != nil {
		if _, err := m.conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+qname); err != nil {
			return err
		}
	}
	_, err = m.conn.Exec(ctx, fmt.Sprintf("CREATE %s", fmt.Sprintf(def, ident(name))))
	return err
}

func (m *migration) index(ctx context.Context) error {
	p := m.p
	if err := m.addCheck(ctx, p.qtable(), p.checkName(), fmt.Sprintf("CHECK (%s IS NOT NULL)", ident(p.newCol()))); err != nil {
		return err
	}
	if err := m.createIndex(ctx, p.uniqueIndex(), fmt.Sprintf("UNIQUE INDEX CONCURRENTLY %%s ON %s (%s)", p.qtable(), ident(p.newCol()))); err != nil {
		return err
	}
	return m.uniqueIndexes(ctx, "_idgen_new", p.newCol())
}

// uniqueIndexes builds, for each unique constraint composite foreign keys
// reference, its unique index with the key column as col, named
// RefConstraint+suffix.
func (m *migration) uniqueIndexes(ctx context.Context, suffix, col string) error {
	for _, fk := range m.p.uniques() {
		if err := m.createIndex(ctx, fk.RefConstraint+suffix, fmt.Sprintf("UNIQUE INDEX CONCURRENTLY %%s ON %s (%s)",
			m.p.qtable(), m.p.uniqueColumns(fk, col))); err != nil {
			return err
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
	for i := st.child; i < len(p.FKs); i++ {
		fk := p.FKs[i]
		block := int64(0)
		if i == st.child {
			block = st.block
		}
		if err := m.child(ctx, i, fk, block); err != nil {
			return fmt.Errorf("%s.%s: %w", fk.Table, fk.Column, err)
		}
	}
	return nil
}

func (m *migration) child(ctx context.Context, i int, fk FK, block int64) error {
	p := m.p
	var blocks, tuples int64
	if err := m.conn.QueryRow(ctx, `SELECT pg_relation_size(c.oid) / current_setting('block_size')::bigint, greatest(c.reltuples, 0)::bigint
		FROM pg_class c WHERE c.oid = to_regclass($1)`, fk.qtable()).Scan(&blocks, &tuples); err != nil {
		return err
	}
	perBlock := 1.0 // rows per heap block
	if blocks > 0 && tuples > 0 {
		perBlock = float64(tuples) / float64(blocks)
	}
	set := fmt.Sprintf("UPDATE %[1]s AS c SET %[2]s = p.%[3]s FROM %[4]s AS p WHERE p.%[5]s = c.%[6]s AND c.%[2]s IS NULL AND c.%[6]s IS NOT NULL",
		fk.qtable(), ident(fk.newCol()), ident(p.newCol()), p.qtable(), ident(p.Key), ident(fk.Column))
	save := "UPDATE " + p.stateTable() + " SET child = $2, block = $3, updated = now() WHERE tbl = $1"
	at, finish := m.phase(fmt.Sprintf("backfill %s.%s", fk.Table, fk.Column), "blocks", blocks, block)
	for block < blocks {
		live, err := m.gate(ctx)
		if err != nil {
			return err
		}
		m.size.set(live.batch, live.chunkTime)
		end := block + max(1, int64(float64(m.size.n)/perBlock))
		start := time.Now()
		err = pgx.BeginFunc(ctx, m.conn, func(tx pgx.Tx) error {
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
	// Rows an update moved behind the cursor; normally none.
	if _, err := m.conn.Exec(ctx, set); err != nil {
		return err
	}
	if err := m.addCheck(ctx, fk.qtable(), fk.checkName(), fk.check()); err != nil {
		return err
	}
	if fk.Indexed {
		if err := m.createIndex(ctx, fk.indexName(), fmt.Sprintf("INDEX CONCURRENTLY %%s ON %s (%s)", fk.qtable(), ident(fk.newCol()))); err != nil {
			return err
		}
	}
	_, err := m.conn.Exec(ctx, save, p.Table, i+1, 0)
	return err
}

func (m *migration) swap(ctx context.Context) error {
	took, err := m.lockedTx(ctx, m.p.swapSQL(), phaseValidate)
	if err != nil {
		return err
	}
	m.logf("swapped %s.%s and %d foreign key(s) in %v", m.p.Table, m.p.Key, len(m.p.FKs), took.Round(time.Millisecond))
	return nil
}

// lockedTx runs stmts (which take their locks under lock_timeout) and
// records phase (unless "") in one transaction, retried on a lock timeout, and returns
// how long the transaction that committed took.
func (m *migration) lockedTx(ctx context.Context, stmts []string, phase string) (time.Duration, error) {
	p := m.p
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := pgx.BeginFunc(ctx, m.conn, func(tx pgx.Tx) error {
			for _, s := range stmts {
				if _, err := tx.Exec(ctx, s); err != nil {
					return fmt.Errorf("%w (in %.80q)", err, s)
				}
			}
			if phase == "" {
				return nil
			}
			_, err := tx.Exec(ctx, "UPDATE "+p.stateTable()+" SET phase = $2, updated = now() WHERE tbl = $1", p.Table, phase)
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

func (m *migration) validate(ctx context.Context) error {
	for _, fk := range m.p.FKs {
		if _, err := m.conn.Exec(ctx, fmt.Sprintf("ALTER TABLE %s VALIDATE CONSTRAINT %s", fk.qtable(), ident(fk.Name))); err != nil {
			return err
		}
	}
	return nil
}
