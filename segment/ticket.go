package segment

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// DefaultTicketName names a ticket server's sequence (PostgreSQL), table
// (MySQL) or key (Redis, "idgen:ticket:{tickets64}").
const DefaultTicketName = "tickets64"

// A TicketServer issues tickets of one residue class: Offset, Offset +
// Increment, Offset + 2·Increment, ... (in increasing order), one round
// trip per ticket. Implementations are safe for concurrent use.
type TicketServer interface {
	// Ticket returns the server's next ticket.
	Ticket(ctx context.Context) (int64, error)
	// Close releases the server's connections.
	Close() error
	// String returns the DSN with any password redacted.
	String() string
}

// TicketConfig places one ticket server among n.
type TicketConfig struct {
	// Name is the sequence (PostgreSQL), table (MySQL) or key (Redis) the
	// server counts in: letters, digits and '_', starting with a letter.
	// Zero means DefaultTicketName.
	Name string
	// Increment is n, the number of servers; 1 to 65,535. Zero means 1.
	Increment int64
	// Offset is k, this server's residue class, 1 to Increment. Zero means 1.
	Offset int64
}

var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)

func (c *TicketConfig) validate() error {
	if c.Name == "" {
		c.Name = DefaultTicketName
	}
	if c.Increment == 0 {
		c.Increment = 1
	}
	if c.Offset == 0 {
		c.Offset = 1
	}
	switch {
	case !identRE.MatchString(c.Name):
		return fmt.Errorf("%w: ticket name %q: want letters, digits and _, starting with a letter, at most 63", ErrConfig, c.Name)
	case c.Increment < 1 || c.Increment > 65535:
		return fmt.Errorf("%w: ticket increment %d: want 1 to 65535", ErrConfig, c.Increment)
	case c.Offset < 1 || c.Offset > c.Increment:
		return fmt.Errorf("%w: ticket offset %d: want 1 to the increment %d", ErrConfig, c.Offset, c.Increment)
	}
	return nil
}

// ticketBackend is a TicketServer that can report and change its class.
type ticketBackend interface {
	TicketServer
	// state reads the server's stored class and how far it has counted; n,
	// the number of servers, converts a Redis counter of the format before
	// the class was stored.
	state(ctx context.Context, n int64) (ticketState, error)
	// setup makes the server count in class k mod n, its next ticket the
	// smallest such above floor, and returns that ticket. Unless reset is
	// set, a class another client stored meanwhile is kept (ErrResidue if it
	// is not k of n): the counter never moves back under a running client.
	setup(ctx context.Context, k, n, floor int64, reset bool) (int64, error)
}

// ticketState is what a ticket server holds.
type ticketState struct {
	Exists    bool  // the sequence, table or key exists
	Offset    int64 // the stored class, 1 to Increment; 0 when none is stored
	Increment int64
	High      int64 // no ticket above High has been issued
}

// firstAbove returns the smallest v > floor with v ≡ k (mod n).
func firstAbove(floor, k, n int64) int64 {
	floor = max(floor, 0)
	return floor + 1 + ((k-floor-1)%n+n)%n
}

// OpenTicketServer connects to the ticket server dsn names, by its scheme
// (postgres://, mysql://, redis://), creates its sequence, table or key
// when missing and checks that an existing one counts in cfg's residue class
// (else ErrResidue, saying how to renumber it).
func OpenTicketServer(ctx context.Context, dsn string, cfg TicketConfig) (TicketServer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	b, err := openTicketBackend(ctx, dsn, cfg.Name)
	if err != nil {
		return nil, err
	}
	st, err := b.state(ctx, cfg.Increment)
	switch {
	case err != nil:
	case st.Offset == 0:
		_, err = b.setup(ctx, cfg.Offset, cfg.Increment, st.High, false)
	case st.Offset != cfg.Offset || st.Increment != cfg.Increment:
		err = fmt.Errorf("%w: %s counts in class %d of %d, not %d of %d; renumber the servers with `idgen ticket init --dsn URL1,...,URLn --name %s --reset`",
			ErrResidue, cfg.Name, st.Offset, st.Increment, cfg.Offset, cfg.Increment, cfg.Name)
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("segment: ticket server %s: %w", b, err)
	}
	return b, nil
}

// openTicketBackend connects to the ticket server at dsn; it creates nothing.
func openTicketBackend(ctx context.Context, dsn, name string) (ticketBackend, error) {
	u, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		pool, err := openPool(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return &pgTicket{pool: pool, dsn: Redact(dsn), name: name, seq: pgx.Identifier{name}.Sanitize()}, nil
	case "mysql":
		db, err := openDB(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return &mysqlTicket{db: db, dsn: Redact(dsn), name: name}, nil
	default:
		c, err := openRedis(ctx, dsn)
		if err != nil {
			return nil, err
		}
		key := "idgen:ticket:{" + name + "}"
		return &redisTicket{c: c, dsn: Redact(dsn), key: key, class: key + ":class"}, nil
	}
}

// pgTicket is a PostgreSQL sequence, START k INCREMENT n: the sequence
// itself keeps the class.
type pgTicket struct {
	pool *pgxpool.Pool
	dsn  string
	name string
	seq  string // quoted identifier
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
		st.Offset = ((start-1)%inc+inc)%inc + 1
	}
	if !called {
		st.High = last - 1
	}
	return st, nil
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
	return next, nil
}

func (t *pgTicket) Ticket(ctx context.Context) (int64, error) {
	var v int64
	if err := t.pool.QueryRow(ctx, `SELECT nextval($1::regclass)`, t.seq).Scan(&v); err != nil {
		return 0, storeErr(t.dsn, "ticket", err)
	}
	return v, nil
}

func (t *pgTicket) Close() error   { t.pool.Close(); return nil }
func (t *pgTicket) String() string { return t.dsn }

// mysqlTicket is Flickr's ticket server: a one-row table whose
// auto-increment counts in the class set by the session's
// auto_increment_increment and auto_increment_offset, on a dedicated
// connection (LAST_INSERT_ID is per connection). The table's comment keeps
// the class: "idgen ticket server: offset k, increment n".
type mysqlTicket struct {
	db   *sql.DB
	dsn  string
	name string
	mu   sync.Mutex
	cfg  TicketConfig // the class; zero until state or setup reads or sets it
	conn *sql.Conn    // the dedicated connection; nil until first use and after an error
}

var mysqlClassRE = regexp.MustCompile(`^idgen ticket server: offset (\d+), increment (\d+)$`)

func mysqlClassComment(k, n int64) string {
	return fmt.Sprintf("idgen ticket server: offset %d, increment %d", k, n)
}

func (t *mysqlTicket) state(ctx context.Context, _ int64) (ticketState, error) {
	c, err := t.db.Conn(ctx)
	if err != nil {
		return ticketState{}, storeErr(t.dsn, "read table "+t.name, err)
	}
	defer c.Close()
	st, err := t.read(ctx, c)
	if err != nil {
		return st, storeErr(t.dsn, "read table "+t.name, err)
	}
	if st.Offset != 0 {
		t.mu.Lock()
		t.cfg = TicketConfig{Name: t.name, Offset: st.Offset, Increment: st.Increment}
		t.mu.Unlock()
	}
	return st, nil
}

// read reads the table's class (its comment) and High: the larger of its
// highest id and AUTO_INCREMENT - 1. The one row's id alone is not enough:
// two sessions' REPLACEs can commit in the other order than they took
// their values, leaving the lower one in the table. MySQL 8 caches
// AUTO_INCREMENT in information_schema for information_schema_stats_expiry
// (24 h by default), so read sets it to 0 for c's session first; MariaDB
// has no such cache and no such variable (error 1193).
func (t *mysqlTicket) read(ctx context.Context, c *sql.Conn) (ticketState, error) {
	_, err := c.ExecContext(ctx, "SET SESSION information_schema_stats_expiry = 0")
	if me := (*mysql.MySQLError)(nil); errors.As(err, &me) && me.Number == 1193 {
		err = nil
	}
	if err != nil {
		return ticketState{}, err
	}
	var st ticketState
	var comment string
	var autoInc sql.NullInt64
	err = c.QueryRowContext(ctx, `SELECT TABLE_COMMENT, AUTO_INCREMENT FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`, t.name).Scan(&comment, &autoInc)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err == nil {
		err = c.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM `"+t.name+"`").Scan(&st.High)
	}
	if err != nil {
		return st, err
	}
	st.Exists = true
	st.High = max(st.High, autoInc.Int64-1)
	if m := mysqlClassRE.FindStringSubmatch(comment); m != nil {
		st.Offset, _ = strconv.ParseInt(m[1], 10, 64)
		st.Increment, _ = strconv.ParseInt(m[2], 10, 64)
	}
	return st, nil
}

// mysqlSetupLock is the named lock (GET_LOCK) under which clients set up
// ticket tables, one at a time per server, and how long one waits for it.
const (
	mysqlSetupLock        = "idgen_tickets"
	mysqlSetupLockSeconds = 60
)

// setup holds the server's setup lock while it creates the table and,
// unless another client stored a class meanwhile (kept, or ErrResidue if
// it is not k of n) and reset is not set, sets the class comment and
// AUTO_INCREMENT. It must not ALTER a table in use: InnoDB raises a
// requested AUTO_INCREMENT only to the table's highest id + 1, and after
// two REPLACEs committed out of order that id is below tickets already
// issued, which would then be issued again.
func (t *mysqlTicket) setup(ctx context.Context, k, n, floor int64, reset bool) (int64, error) {
	next, err := t.setupLocked(ctx, k, n, floor, reset)
	if err != nil {
		return 0, storeErr(t.dsn, "set up table "+t.name, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cfg = TicketConfig{Name: t.name, Offset: k, Increment: n}
	if t.conn != nil { // its session counts in the old class
		discard(t.conn)
		t.conn = nil
	}
	return next, nil
}

func (t *mysqlTicket) setupLocked(ctx context.Context, k, n, floor int64, reset bool) (int64, error) {
	c, err := t.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer discard(c) // ends the session, and with it the lock
	var got sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", mysqlSetupLock, mysqlSetupLockSeconds).Scan(&got); err != nil {
		return 0, err
	}
	if got.Int64 != 1 {
		return 0, serverError{fmt.Errorf("lock %s not granted within %d s: another client is setting up ticket tables", mysqlSetupLock, mysqlSetupLockSeconds)}
	}
	if _, err := c.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS `"+t.name+"` ("+
		"id bigint unsigned NOT NULL auto_increment, "+
		"stub char(1) NOT NULL default '', "+
		"PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=InnoDB"); err != nil {
		return 0, err
	}
	st, err := t.read(ctx, c)
	if err != nil {
		return 0, err
	}
	next := firstAbove(max(floor, st.High), k, n)
	switch {
	case st.Offset == 0 || reset:
	case st.Offset != k || st.Increment != n:
		return 0, serverError{fmt.Errorf("%w: table %s was set up meanwhile as class %d of %d, not %d of %d", ErrResidue, t.name, st.Offset, st.Increment, k, n)}
	default:
		return next, nil
	}
	_, err = c.ExecContext(ctx, fmt.Sprintf("ALTER TABLE `%s` AUTO_INCREMENT = %d, COMMENT = '%s'", t.name, next, mysqlClassComment(k, n)))
	return next, err
}

// dedicated returns the dedicated connection, opening it and setting the
// session's auto-increment class when needed. t.mu is held.
func (t *mysqlTicket) dedicated(ctx context.Context) (*sql.Conn, error) {
	if t.conn != nil {
		return t.conn, nil
	}
	if t.cfg.Increment == 0 {
		return nil, fmt.Errorf("%w: table %s has no ticket class; run `idgen ticket init --dsn URL --name %s`", ErrNotInstalled, t.name, t.name)
	}
	c, err := t.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf("SET SESSION auto_increment_increment = %d, auto_increment_offset = %d",
		t.cfg.Increment, t.cfg.Offset)); err != nil {
		discard(c)
		return nil, err
	}
	t.conn = c
	return c, nil
}

// discard closes c and keeps database/sql from reusing it.
func discard(c *sql.Conn) {
	c.Raw(func(any) error { return driver.ErrBadConn })
	c.Close()
}

// Ticket runs Flickr's pair on the dedicated connection:
//
//	REPLACE INTO tickets64 (stub) VALUES ('a');
//	SELECT LAST_INSERT_ID();
func (t *mysqlTicket) Ticket(ctx context.Context) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, err := t.dedicated(ctx)
	if err != nil {
		return 0, storeErr(t.dsn, "ticket", err)
	}
	var v int64
	if _, err = c.ExecContext(ctx, "REPLACE INTO `"+t.name+"` (stub) VALUES ('a')"); err == nil {
		err = c.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&v)
	}
	if err == nil && (v-t.cfg.Offset)%t.cfg.Increment != 0 {
		err = fmt.Errorf("%w: table %s issued %d, not in class %d mod %d", ErrResidue, t.name, v, t.cfg.Offset, t.cfg.Increment)
	}
	if err != nil {
		discard(c)
		t.conn = nil
		return 0, storeErr(t.dsn, "ticket", err)
	}
	return v, nil
}

func (t *mysqlTicket) Close() error {
	t.mu.Lock()
	if t.conn != nil {
		t.conn.Close()
		t.conn = nil
	}
	t.mu.Unlock()
	return t.db.Close()
}

func (t *mysqlTicket) String() string { return t.dsn }

// redisTicket is INCRBY n on key "idgen:ticket:{name}", which holds the last
// ticket; the hash "idgen:ticket:{name}:class" keeps the class (fields
// offset and increment).
type redisTicket struct {
	c     *redis.Client
	dsn   string
	key   string
	class string
}

// redisTicketNext adds the stored increment; nil when no class is stored.
var redisTicketNext = redis.NewScript(`
local n = redis.call('HGET', KEYS[2], 'increment')
if not n then return false end
return redis.call('INCRBY', KEYS[1], n)`)

func (t *redisTicket) Ticket(ctx context.Context) (int64, error) {
	v, err := redisTicketNext.Run(ctx, t.c, []string{t.key, t.class}).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("%w: key %s has no ticket class on %s; run `idgen ticket init --dsn URL`", ErrNotInstalled, t.class, t.dsn)
	}
	if err != nil {
		return 0, storeErr(t.dsn, "ticket", redisErr(err))
	}
	return v, nil
}

func (t *redisTicket) state(ctx context.Context, n int64) (ticketState, error) {
	var st ticketState
	var last *redis.StringCmd
	var class *redis.SliceCmd
	_, err := t.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		last = p.Get(ctx, t.key)
		class = p.HMGet(ctx, t.class, "offset", "increment")
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return st, storeErr(t.dsn, "read key "+t.key, redisErr(err))
	}
	v, err := last.Int64()
	if err == nil {
		st.Exists, st.High = true, v
	}
	if f := class.Val(); len(f) == 2 && f[0] != nil && f[1] != nil {
		st.Exists = true
		st.Offset, _ = strconv.ParseInt(fmt.Sprint(f[0]), 10, 64)
		st.Increment, _ = strconv.ParseInt(fmt.Sprint(f[1]), 10, 64)
	} else if st.Exists {
		// Before the class was stored, ticket = (INCR - 1)·n + k ≤ INCR·n.
		st.High = v * n
	}
	return st, nil
}

// redisTicketSetup stores the class and the last ticket; unless ARGV[4]
// is "reset", only where no class is stored yet. It returns the stored
// class.
var redisTicketSetup = redis.NewScript(`
if ARGV[4] == 'reset' or redis.call('EXISTS', KEYS[2]) == 0 then
	redis.call('SET', KEYS[1], ARGV[3])
	redis.call('HSET', KEYS[2], 'offset', ARGV[1], 'increment', ARGV[2])
end
return redis.call('HMGET', KEYS[2], 'offset', 'increment')`)

func (t *redisTicket) setup(ctx context.Context, k, n, floor int64, reset bool) (int64, error) {
	next := firstAbove(floor, k, n)
	mode := ""
	if reset {
		mode = "reset"
	}
	v, err := redisTicketSetup.Run(ctx, t.c, []string{t.key, t.class}, k, n, next-n, mode).StringSlice()
	if err != nil {
		return 0, storeErr(t.dsn, "set up key "+t.key, redisErr(err))
	}
	if len(v) != 2 || v[0] != strconv.FormatInt(k, 10) || v[1] != strconv.FormatInt(n, 10) {
		return 0, fmt.Errorf("%w: key %s on %s was set up meanwhile as %v, not class %d of %d", ErrResidue, t.class, t.dsn, v, k, n)
	}
	return next, nil
}

func (t *redisTicket) Close() error   { return t.c.Close() }
func (t *redisTicket) String() string { return t.dsn }
