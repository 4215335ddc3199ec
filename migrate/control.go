package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultMaxLag is the standby replay lag above which Run waits before a
// batch when Options.MaxLag is zero.
const DefaultMaxLag = time.Second

// pollInterval is how often a waiting run checks again.
const pollInterval = 100 * time.Millisecond

// A Throttle reports that a run waits before its next batch, or goes on
// again, through Options.OnThrottle.
type Throttle struct {
	// Hold is true when the run starts waiting (or waits for another
	// reason), false when it goes on again.
	Hold bool
	// Paused reports a pause by Set (idgen migrate pause).
	Paused bool
	// Lag is the largest replay lag of the standbys measured last; Active
	// the number of active client backends (besides the run's own).
	Lag    time.Duration
	Active int
	// Reason says why the run waits, in words; empty when it goes on.
	Reason string
	// Field is the Options field whose limit the run waits on,
	// "Options.MaxLag" or "Options.MaxActive"; empty when paused or going
	// on. A program that sets the field from a flag names the flag.
	Field string
	// Waited is, when the run goes on, how long it waited.
	Waited time.Duration
}

// liveState is what a running migration reads from its state row and the
// server before each batch.
type liveState struct {
	paused    bool
	batch     int
	chunkTime time.Duration
	lag       time.Duration
	active    int
}

// lsnSample is the primary's WAL position at a time.
type lsnSample struct {
	at  time.Time
	lsn int64
}

// stateColumns are the state table's columns for live control and
// status, added to a state table an earlier version created.
const stateColumns = `paused boolean NOT NULL DEFAULT false, batch int NOT NULL DEFAULT 0, chunk_ms bigint NOT NULL DEFAULT 0,
	rows_total bigint NOT NULL DEFAULT 0, rate float8 NOT NULL DEFAULT 0, lag_ms bigint NOT NULL DEFAULT 0,
	active int NOT NULL DEFAULT 0, hold text NOT NULL DEFAULT '', shape jsonb NOT NULL DEFAULT '{}'`

func (p *Plan) addStateColumns() string {
	cols := strings.Split(stateColumns, ",")
	for i, c := range cols {
		cols[i] = " ADD COLUMN IF NOT EXISTS " + strings.TrimSpace(c)
	}
	return "ALTER TABLE " + p.stateTable() + strings.Join(cols, ",")
}

const liveQuery = `SELECT s.paused, s.batch, s.chunk_ms, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint,
	(SELECT min(pg_wal_lsn_diff(r.replay_lsn, '0/0'))::bigint FROM pg_stat_replication r WHERE r.replay_lsn IS NOT NULL),
	(SELECT coalesce(max(extract(epoch FROM r.replay_lag)), 0)::float8 FROM pg_stat_replication r),
	(SELECT count(*) FROM pg_stat_activity a WHERE a.state = 'active' AND a.backend_type = 'client backend'
		AND a.pid <> pg_backend_pid())::int
	FROM %s s WHERE s.tbl = $1`

// live reads the state row's settings, the standbys' replay lag and the
// active backends. The lag of a standby is the larger of its replay_lag
// and the time since the primary's WAL position first passed the standby's
// replay position (sampled at each check: replay_lag stops growing while a
// standby does not replay); 0 when every standby has replayed all WAL.
func (m *migration) live(ctx context.Context) (liveState, error) {
	var (
		l                liveState
		chunkMS, current int64
		replay           *int64
		replayLag        float64
	)
	err := m.conn.QueryRow(ctx, fmt.Sprintf(liveQuery, m.p.stateTable()), m.p.Table).Scan(
		&l.paused, &l.batch, &chunkMS, &current, &replay, &replayLag, &l.active)
	if err != nil {
		return l, err
	}
	l.chunkTime = time.Duration(chunkMS) * time.Millisecond
	now := time.Now()
	if n := len(m.samples); n == 0 || m.samples[n-1].lsn != current {
		m.samples = append(m.samples, lsnSample{now, current})
	}
	if replay == nil || *replay >= current {
		m.samples = m.samples[len(m.samples)-1:]
		return l, nil
	}
	i := 0
	for i < len(m.samples)-1 && m.samples[i].lsn <= *replay {
		i++
	}
	m.samples = m.samples[i:]
	l.lag = max(now.Sub(m.samples[0].at), time.Duration(replayLag*float64(time.Second)))
	return l, nil
}

// reason says why the run must wait with l, or "" when it may go on, and
// the Options field whose limit it waits on, if any.
func (m *migration) reason(l liveState) (why, field string) {
	switch {
	case l.paused:
		return fmt.Sprintf("paused (Set with Resume on %s goes on)", m.p.Table), ""
	case l.lag > m.opt.MaxLag:
		return fmt.Sprintf("replication lag %v over Options.MaxLag %v", l.lag.Round(time.Millisecond), m.opt.MaxLag), "Options.MaxLag"
	case m.opt.MaxActive > 0 && l.active > m.opt.MaxActive:
		return fmt.Sprintf("%d active backends over Options.MaxActive %d", l.active, m.opt.MaxActive), "Options.MaxActive"
	}
	return "", ""
}

// gate runs before each batch: it waits while the run is paused, a
// standby lags more than MaxLag or more than MaxActive backends are
// active, reporting through OnThrottle, and returns the live settings.
func (m *migration) gate(ctx context.Context) (liveState, error) {
	var (
		held    string // the kind of hold reported last
		since   time.Time
		written time.Time
	)
	for {
		l, err := m.live(ctx)
		if err != nil {
			return l, err
		}
		why, field := m.reason(l)
		m.lag, m.active = l.lag, l.active
		if why == "" {
			if held != "" {
				m.throttle(Throttle{Lag: l.lag, Active: l.active, Waited: time.Since(since)})
				if err := m.setHold(ctx, ""); err != nil {
					return l, err
				}
			}
			return l, nil
		}
		kind, _, _ := strings.Cut(why, " ")
		if kind != held {
			if held == "" {
				since = time.Now()
			}
			held = kind
			m.throttle(Throttle{Hold: true, Paused: l.paused, Lag: l.lag, Active: l.active, Reason: why, Field: field})
			written = time.Time{}
		}
		if time.Since(written) >= time.Second {
			if err := m.setHold(ctx, why); err != nil {
				return l, err
			}
			written = time.Now()
		}
		select {
		case <-ctx.Done():
			return l, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

func (m *migration) throttle(t Throttle) {
	if m.opt.OnThrottle != nil {
		m.opt.OnThrottle(t)
	}
}

func (m *migration) setHold(ctx context.Context, why string) error {
	_, err := m.conn.Exec(ctx, "UPDATE "+m.p.stateTable()+" SET hold = $2, lag_ms = $3, active = $4, updated = now() WHERE tbl = $1",
		m.p.Table, why, m.lag.Milliseconds(), m.active)
	return err
}

// A sizer sizes batches: fixed, or, with a chunk time, to take about that
// long each (the rate is a weighted average over the batches done, as
// pt-online-schema-change's --chunk-time), within [batch/10, 10×batch].
type sizer struct {
	n, batch int
	chunk    time.Duration
	rate     float64 // rows per second
}

// set applies the live settings; a new batch size restarts from it.
func (s *sizer) set(batch int, chunk time.Duration) {
	if batch <= 0 && s.batch == 0 {
		batch = DefaultBatch
	}
	if batch > 0 && batch != s.batch {
		s.batch, s.n = batch, batch
	}
	s.chunk = chunk
	if chunk == 0 {
		s.n = s.batch
	}
}

// observe records a batch of rows that took took, and sizes the next one.
func (s *sizer) observe(rows int, took time.Duration) {
	if rows <= 0 || took <= 0 {
		return
	}
	r := float64(rows) / took.Seconds()
	if s.rate == 0 {
		s.rate = r
	} else {
		s.rate = 0.25*s.rate + 0.75*r
	}
	if s.chunk > 0 {
		s.n = min(max(int(s.rate*s.chunk.Seconds()), max(1, s.batch/10)), s.batch*10)
	}
}

// A Setting changes a migration while it runs, through its state row:
// the run reads it before each batch. Zero fields leave the setting as is.
type Setting struct {
	Pause, Resume bool
	// Batch is the new batch size in rows; ChunkTime the new time per
	// batch (with a chunk time, Batch is the size to start from).
	Batch     int
	ChunkTime time.Duration
	// NoChunkTime goes back to batches of a fixed size.
	NoChunkTime bool
}

// Set applies s to table's migration. It wraps ErrInput when the table
// has no migration recorded, or s is out of range.
func Set(ctx context.Context, conn *pgx.Conn, table string, s Setting) error {
	switch {
	case s.Pause && s.Resume:
		return inputf("pause and resume at once")
	case s.Batch < 0:
		return fieldf("Setting.Batch", fmt.Sprint(s.Batch), "want at least 1")
	case s.ChunkTime < 0 || s.ChunkTime > 0 && s.ChunkTime < time.Millisecond:
		return fieldf("Setting.ChunkTime", s.ChunkTime.String(), "want at least 1ms")
	}
	p, err := recorded(ctx, conn, table)
	if err != nil {
		return withStep(err, "set table %q", clip(table))
	}
	if p.Phase == phaseDone || p.Phase == phaseReverted {
		what := "set"
		switch {
		case s.Pause:
			what = "pause"
		case s.Resume:
			what = "resume"
		}
		return inputf("the migration of %s has no batches left to run (phase %s): there is nothing to %s", p.qtable(), p.Phase, what)
	}
	if _, err := conn.Exec(ctx, p.addStateColumns()); err != nil {
		return withStep(err, "update the state table %s", p.stateTable())
	}
	chunk := int64(-1)
	if s.ChunkTime > 0 {
		chunk = s.ChunkTime.Milliseconds()
	} else if s.NoChunkTime {
		chunk = 0
	}
	_, err = conn.Exec(ctx, "UPDATE "+p.stateTable()+` SET
		paused = CASE WHEN $2 THEN true WHEN $3 THEN false ELSE paused END,
		batch = CASE WHEN $4 > 0 THEN $4 ELSE batch END,
		chunk_ms = CASE WHEN $5 >= 0 THEN $5 ELSE chunk_ms END, updated = now() WHERE tbl = $1`,
		p.Table, s.Pause, s.Resume, s.Batch, chunk)
	return withStep(err, "update the state table %s", p.stateTable())
}

// recorded returns the plan of table's recorded migration, or an error
// wrapping ErrInput when there is none.
func recorded(ctx context.Context, conn *pgx.Conn, table string) (*Plan, error) {
	p := &Plan{}
	err := conn.QueryRow(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = to_regclass($1)`, table).Scan(&p.Schema, &p.Table)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, inputf("table %q not found", clip(table))
	}
	if err != nil {
		return nil, tableErr(table, err)
	}
	if err := p.loadState(ctx, conn); err != nil {
		return nil, err
	}
	if p.Phase == "" {
		return nil, inputf("table %s has no migration recorded in %s", p.qtable(), p.stateTable())
	}
	return p, nil
}

// A Status is a migration's progress as its state row records it.
type Status struct {
	Table, Phase string
	// Running reports whether a run holds the table's migration lock now.
	Running bool
	// RowsDone and RowsTotal count the backfill's rows (RowsTotal is the
	// count when the backfill started or resumed, with RowsDone).
	RowsDone, RowsTotal int64
	// Rate is the backfill's rate in rows per second over the recent
	// batches; ETA the time left at that rate (0 when unknown or done).
	Rate float64
	ETA  time.Duration
	// Lag and Active are the standby replay lag and the active backends
	// the run measured last.
	Lag    time.Duration
	Active int
	// Paused reports a pause by Set; Hold why the run waits now ("" when
	// it does not).
	Paused bool
	Hold   string
	// Batch and ChunkTime are the live batch settings.
	Batch     int
	ChunkTime time.Duration
	// Child is the number of referencing tables (partitions counted one
	// by one) done, of Children, in the children phase.
	Child, Children int
	Updated         time.Time
}

// GetStatus returns table's migration status. It wraps ErrInput when the
// table has no migration recorded.
func GetStatus(ctx context.Context, conn *pgx.Conn, table string) (*Status, error) {
	st, err := getStatus(ctx, conn, table)
	return st, withStep(err, "status of table %q", clip(table))
}

func getStatus(ctx context.Context, conn *pgx.Conn, table string) (*Status, error) {
	p, err := recorded(ctx, conn, table)
	if err != nil {
		return nil, err
	}
	// to_jsonb: a state table of an earlier version lacks the live columns.
	var row struct {
		RowsDone  int64     `json:"rows_done"`
		RowsTotal int64     `json:"rows_total"`
		Rate      float64   `json:"rate"`
		LagMS     int64     `json:"lag_ms"`
		Active    int       `json:"active"`
		Paused    bool      `json:"paused"`
		Hold      string    `json:"hold"`
		Batch     int       `json:"batch"`
		ChunkMS   int64     `json:"chunk_ms"`
		Child     int       `json:"child"`
		Updated   time.Time `json:"updated"`
	}
	var raw []byte
	if err := conn.QueryRow(ctx, "SELECT to_jsonb(s) FROM "+p.stateTable()+" s WHERE s.tbl = $1", p.Table).Scan(&raw); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &row); err != nil {
		return nil, err
	}
	// Running: a session holds the lock Plan.lock takes (looked up, not
	// taken: taking it would refuse a run starting meanwhile).
	var running bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = hashtext('idgen_migrate')::oid AND objid = hashtext($1)::oid AND objsubid = 2)`, p.Schema+"."+p.Table).Scan(&running); err != nil {
		return nil, err
	}
	st := &Status{Table: p.qtable(), Phase: p.Phase, Running: running, RowsDone: row.RowsDone, RowsTotal: max(row.RowsTotal, row.RowsDone),
		Rate: row.Rate, Lag: time.Duration(row.LagMS) * time.Millisecond, Active: row.Active, Paused: row.Paused, Hold: row.Hold,
		Batch: row.Batch, ChunkTime: time.Duration(row.ChunkMS) * time.Millisecond, Child: row.Child, Children: len(p.units()),
		Updated: row.Updated.UTC()}
	if p.Phase == phaseBackfill && st.Rate > 0 {
		st.ETA = time.Duration(float64(st.RowsTotal-st.RowsDone) / st.Rate * float64(time.Second)).Round(time.Second)
	}
	if !st.Running {
		st.Hold = ""
	}
	return st, nil
}

// Write prints the status.
func (s *Status) Write(w io.Writer) error {
	var b strings.Builder
	phase := s.Phase + ", no run going on (idgen migrate run resumes it; idgen migrate abort --yes undoes it)"
	switch {
	case s.Phase == phaseDone:
		phase = "done: the keys are swapped (idgen migrate revert swaps back; finish --yes drops the old keys)"
	case s.Phase == phaseReverted:
		phase = "reverted: back on the old keys (next: idgen migrate discard drops the new ones; idgen migrate run --yes starts over)"
	case s.Running:
		phase = s.Phase + ", running"
	}
	fmt.Fprintf(&b, "table    %s\nphase    %s\n", s.Table, phase)
	pct := 100.0
	if s.RowsTotal > 0 {
		pct = 100 * float64(s.RowsDone) / float64(s.RowsTotal)
	}
	fmt.Fprintf(&b, "rows     %d of %d (%.1f%%)\n", s.RowsDone, s.RowsTotal, pct)
	eta := "-"
	if s.ETA > 0 {
		eta = s.ETA.String()
	}
	fmt.Fprintf(&b, "rate     %.0f rows/s, ETA %s\n", s.Rate, eta)
	if s.Phase == phaseChildren {
		fmt.Fprintf(&b, "children %d of %d done\n", s.Child, s.Children)
	}
	fmt.Fprintf(&b, "lag      %v (standby replay), %d active backends\n", s.Lag, s.Active)
	chunk := "fixed size"
	if s.ChunkTime > 0 {
		chunk = "sized to take " + s.ChunkTime.String()
	}
	fmt.Fprintf(&b, "batch    %d rows, %s\n", s.Batch, chunk)
	paused := "no"
	if s.Paused && s.Phase != phaseDone && s.Phase != phaseReverted {
		paused = "yes (idgen migrate resume goes on)"
	}
	fmt.Fprintf(&b, "paused   %s\n", paused)
	if s.Hold != "" {
		fmt.Fprintf(&b, "waiting  %s\n", s.Hold)
	}
	fmt.Fprintf(&b, "updated  %s\n", s.Updated.Format(time.RFC3339))
	_, err := io.WriteString(w, b.String())
	return err
}
