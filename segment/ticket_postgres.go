package segment

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idgenkit/idgen"
)

// pgTicketLock is the first key of the advisory locks of ticket sessions
// and resets; the second is hashtext of the sequence's schema and name, as
// `current_schema() || '.' || name`.
const pgTicketLock = 0x69647469 // "idti"

// pgTicketKey is the advisory lock's key pair in SQL, for the name $2.
const pgTicketKey = `$1::int, hashtext(coalesce(current_schema(), '') || '.' || $2)`

// pgTicket is a PostgreSQL sequence, START k INCREMENT n: the sequence
// itself keeps the class. Tickets are drawn on one session connection that
// holds a shared advisory lock on the sequence, which a reset's exclusive
// lock cannot take while it lives.
type pgTicket struct {
	pool *pgxpool.Pool
	dsn  string
	name string
	seq  string // quoted identifier

	mu     sync.Mutex
	k, n   int64     // the class read or set; 0 until then
	sess   *pgx.Conn // the session; nil until the first ticket and after an error
	closed bool
}

func (t *pgTicket) state(ctx context.Context, _ int64) (ticketState, error) {
	var st ticketState
	var start, inc int64
	err := t.pool.QueryRow(ctx, `SELECT seqstart, seqincrement FROM pg_sequence WHERE seqrelid = to_regclass($1)`, t.seq).Scan(&start, &inc)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, storeErr(t.dsn, "read sequence "+t.name, err)
	}
	var last int64
	var called bool
	if err := t.pool.QueryRow(ctx, `SELECT last_value, is_called FROM `+t.seq).Scan(&last, &called); err != nil {
		return st, storeErr(t.dsn, "read sequence "+t.name, err)
	}
	st = ticketState{Exists: true, Increment: inc, High: last}
	if inc > 0 {
		st.Offset = pgClass(start, inc)
		t.setClass(st.Offset, inc)
	}
	if !called {
		st.High = last - 1
	}
	return st, nil
}

// pgClass is the residue class, 1 to inc, of a sequence that starts at
// start.
func pgClass(start, inc int64) int64 { return ((start-1)%inc+inc)%inc + 1 }

// setClass records the class and ends a session opened in another.
func (t *pgTicket) setClass(k, n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if (t.k != k || t.n != n) && t.sess != nil {
		t.sess.Close(context.Background())
		t.sess = nil
	}
	t.k, t.n = k, n
}

func (t *pgTicket) setup(ctx context.Context, k, n, floor int64, reset bool) (int64, error) {
	next := firstAbove(floor, k, n)
	err := pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('idgen_tickets'))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE SEQUENCE IF NOT EXISTS %s AS bigint START %d INCREMENT %d MINVALUE 1`, t.seq, next, n)); err != nil {
			return err
		}
		if reset {
			_, err := tx.Exec(ctx, fmt.Sprintf(`ALTER SEQUENCE %s INCREMENT %d START WITH %d RESTART WITH %d`, t.seq, n, next, next))
			return err
		}
		var start, inc int64
		if err := tx.QueryRow(ctx, `SELECT seqstart, seqincrement FROM pg_sequence WHERE seqrelid = $1::regclass`, t.seq).Scan(&start, &inc); err != nil {
			return err
		}
		if inc != n || (start-k)%n != 0 {
			return fmt.Errorf("%w: sequence %s was set up meanwhile as START %d INCREMENT %d, not class %d of %d", ErrResidue, t.name, start, inc, k, n)
		}
		return nil
	})
	if err != nil {
		return 0, storeErr(t.dsn, "set up sequence "+t.name, err)
	}
	t.setClass(k, n)
	return next, nil
}

// connect opens a connection of its own, outside the pool.
func (t *pgTicket) connect(ctx context.Context) (*pgx.Conn, error) {
	return pgx.ConnectConfig(ctx, t.pool.Config().ConnConfig.Copy())
}

// session returns the session connection, opening it when needed: the
// shared lock, then the class check. t.mu is held.
func (t *pgTicket) session(ctx context.Context) (*pgx.Conn, error) {
	if t.sess != nil {
		return t.sess, nil
	}
	if t.closed {
		return nil, idgen.ErrClosed
	}
	if t.n == 0 {
		return nil, fmt.Errorf("%w: sequence %s has no ticket class; run `idgen ticket init --dsn URL --name %s`", errTicketNotInstalled, t.name, t.name)
	}
	c, err := t.connect(ctx)
	if err != nil {
		return nil, storeErr(t.dsn, "ticket session", err)
	}
	var locked bool
	var start, inc int64
	err = c.QueryRow(ctx, `SELECT pg_try_advisory_lock_shared(`+pgTicketKey+`)`, pgTicketLock, t.name).Scan(&locked)
	if err == nil && locked {
		err = c.QueryRow(ctx, `SELECT seqstart, seqincrement FROM pg_sequence WHERE seqrelid = to_regclass($1)`, t.seq).Scan(&start, &inc)
	}
	switch {
	case err != nil:
		err = storeErr(t.dsn, "ticket session", err)
	case !locked:
		err = fencing("sequence " + t.name + " on " + t.dsn)
	case inc != t.n || pgClass(start, inc) != t.k:
		err = classChanged("sequence "+t.name+" on "+t.dsn, t.k, t.n, pgClass(start, max(inc, 1)), inc)
	}
	if err != nil {
		c.Close(ctx)
		return nil, err
	}
	t.sess = c
	return c, nil
}

func (t *pgTicket) Ticket(ctx context.Context) (int64, error) {
	var v [1]int64
	err := t.Tickets(ctx, v[:])
	return v[0], err
}

// Tickets draws dst from the sequence, pgTicketBatch per round trip:
// nextval over generate_series.
func (t *pgTicket) Tickets(ctx context.Context, dst []int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(dst) > 0 {
		c, err := t.session(ctx)
		if err != nil {
			return err
		}
		k := min(len(dst), pgTicketBatch)
		rows, _ := c.Query(ctx, `SELECT nextval($1::regclass) FROM generate_series(1, $2::int) ORDER BY 1`, t.seq, k)
		got := 0
		var v int64
		_, err = pgx.ForEachRow(rows, []any{&v}, func() error {
			if got < k {
				dst[got] = v
			}
			got++
			return checkResidue("sequence "+t.name, v, t.k, t.n)
		})
		if err == nil && got != k {
			err = fmt.Errorf("%d tickets of %d", got, k)
		}
		if err != nil {
			if !errors.Is(err, ErrResidue) {
				err = storeErr(t.dsn, "ticket", err)
			}
			t.sess.Close(ctx)
			t.sess = nil
			return err
		}
		dst = dst[k:]
	}
	return nil
}

// fence takes the exclusive lock on a connection of its own, held until
// release; a shared lock held by a session refuses it.
func (t *pgTicket) fence(ctx context.Context) (func(), error) {
	c, err := t.connect(ctx)
	if err != nil {
		return nil, storeErr(t.dsn, "fence sequence "+t.name, err)
	}
	var locked bool
	if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+pgTicketKey+`)`, pgTicketLock, t.name).Scan(&locked); err != nil {
		c.Close(ctx)
		return nil, storeErr(t.dsn, "fence sequence "+t.name, err)
	}
	if !locked {
		var live int64
		var pids string
		err := c.QueryRow(ctx, `SELECT count(*), coalesce(string_agg(pid::text, ', ' ORDER BY pid), '') FROM pg_locks
			WHERE locktype = 'advisory' AND objsubid = 2 AND granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND classid::bigint = ($1::int::bigint & 4294967295)
			AND objid::bigint = (hashtext(coalesce(current_schema(), '') || '.' || $2)::bigint & 4294967295)`,
			pgTicketLock, t.name).Scan(&live, &pids)
		c.Close(ctx)
		if err != nil {
			return nil, storeErr(t.dsn, "fence sequence "+t.name, err)
		}
		return nil, inUse("sequence "+t.name+" on "+t.dsn, live, "backend pids "+pids)
	}
	return func() { c.Close(context.Background()) }, nil
}

func (t *pgTicket) Close() error {
	t.mu.Lock()
	if t.sess != nil {
		t.sess.Close(context.Background())
		t.sess = nil
	}
	t.closed = true
	t.mu.Unlock()
	t.pool.Close()
	return nil
}

func (t *pgTicket) String() string { return t.dsn }
