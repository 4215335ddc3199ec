package segment

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/lazyre"
)

// mysqlTicket is Flickr's ticket server: a one-row table whose
// auto-increment counts in the class set by the session's
// auto_increment_increment and auto_increment_offset, on a dedicated
// connection (LAST_INSERT_ID is per connection). The table's comment keeps
// the class: "idgen ticket server: offset k, increment n".
type mysqlTicket struct {
	db     *sql.DB // with multiStatements: a batch is one round trip
	dsn    string
	dbName string // the DSN's database, for the named locks
	name   string
	mu     sync.Mutex
	cfg    TicketConfig // the class; zero until state or setup reads or sets it
	conn   *sql.Conn    // the session connection; nil until first use and after an error
	group  int          // tickets per REPLACE statement, by the session's innodb_autoinc_lock_mode
}

var mysqlClassRE = lazyre.MustCompile(`^idgen ticket server: offset (\d+), increment (\d+)$`)

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
		if t.conn != nil && (t.cfg.Offset != st.Offset || t.cfg.Increment != st.Increment) { // a session in another class
			discard(t.conn)
			t.conn = nil
		}
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
	if m := mysqlClassRE().FindStringSubmatch(comment); m != nil {
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

// Sessions and resets are MySQL named locks (GET_LOCK), which are
// exclusive: a generator's session holds one of mysqlSessionSlots slot
// locks of its table, and a reset holds the table's reset lock while it
// checks that no slot is held, and until it is done. A session takes its
// slot first and then checks the reset lock, a reset takes its lock first
// and then checks the slots: whichever comes second sees the other.
const mysqlSessionSlots = 128

// mysqlTicketGroup is the most rows of one REPLACE (see Tickets).
const mysqlTicketGroup = 16

// lockName names a named lock of the table: "idgen_tk_<crc32 of
// database.table>_<what>", within MySQL's 64 characters.
func (t *mysqlTicket) lockName(what string) string {
	return fmt.Sprintf("idgen_tk_%08x_%s", crc32.ChecksumIEEE([]byte(t.dbName+"."+t.name)), what)
}

func newMySQLTicket(db *sql.DB, dsn, dbName, name string) *mysqlTicket {
	return &mysqlTicket{db: db, dsn: dsn, dbName: dbName, name: name}
}

// dedicated returns the session connection, opening it when needed: the
// session's auto-increment class, a slot lock, the reset lock free, and the
// table's class unchanged. t.mu is held.
func (t *mysqlTicket) dedicated(ctx context.Context) (*sql.Conn, error) {
	if t.conn != nil {
		return t.conn, nil
	}
	if t.cfg.Increment == 0 {
		return nil, fmt.Errorf("%w: table %s has no ticket class; run `idgen ticket init --dsn URL --name %s`", errTicketNotInstalled, t.name, t.name)
	}
	c, err := t.db.Conn(ctx)
	if err != nil {
		return nil, storeErr(t.dsn, "ticket session", err)
	}
	if err := t.openSession(ctx, c); err != nil {
		discard(c)
		return nil, err
	}
	t.conn = c
	return c, nil
}

func (t *mysqlTicket) openSession(ctx context.Context, c *sql.Conn) error {
	fail := func(err error) error { return storeErr(t.dsn, "ticket session", err) }
	if _, err := c.ExecContext(ctx, fmt.Sprintf("SET SESSION auto_increment_increment = %d, auto_increment_offset = %d",
		t.cfg.Increment, t.cfg.Offset)); err != nil {
		return fail(err)
	}
	first, slot := rand.IntN(mysqlSessionSlots), -1
	for i := range mysqlSessionSlots {
		s := (first + i) % mysqlSessionSlots
		var got sql.NullInt64
		if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", t.lockName(strconv.Itoa(s))).Scan(&got); err != nil {
			return fail(err)
		}
		if got.Int64 == 1 {
			slot = s
			break
		}
	}
	if slot < 0 {
		return fmt.Errorf("%w: table %s on %s: all %d session slots are held by live generators", idgen.ErrUnavailable, t.name, t.dsn, mysqlSessionSlots)
	}
	var free sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT IS_FREE_LOCK(?)", t.lockName("reset")).Scan(&free); err != nil {
		return fail(err)
	}
	if free.Int64 != 1 {
		return fencing("table " + t.name + " on " + t.dsn)
	}
	st, err := t.read(ctx, c)
	if err != nil {
		return fail(err)
	}
	if st.Offset != t.cfg.Offset || st.Increment != t.cfg.Increment {
		return classChanged("table "+t.name+" on "+t.dsn, t.cfg.Offset, t.cfg.Increment, st.Offset, st.Increment)
	}
	var mode int
	if err := c.QueryRowContext(ctx, "SELECT @@innodb_autoinc_lock_mode").Scan(&mode); err != nil {
		return fail(err)
	}
	t.group = 1
	if mode <= 1 {
		t.group = mysqlTicketGroup
	}
	return nil
}

// discard closes c and keeps database/sql from reusing it: its session
// ends, and with it any lock it held.
func discard(c *sql.Conn) {
	c.Raw(func(any) error { return driver.ErrBadConn })
	c.Close()
}

func (t *mysqlTicket) Ticket(ctx context.Context) (int64, error) {
	var v [1]int64
	err := t.Tickets(ctx, v[:])
	return v[0], err
}

// Tickets runs Flickr's REPLACE and SELECT LAST_INSERT_ID() on the session
// connection, mysqlTicketBatch tickets per round trip (multiStatements):
//
//	REPLACE INTO tickets64 (stub) VALUES ('a'), ('a'), ... (t.group rows);
//	SELECT LAST_INSERT_ID();
//	... (one pair per group)
//
// A REPLACE of several rows is a "simple insert": under
// innodb_autoinc_lock_mode 0 or 1 (MariaDB's default) it takes its
// auto-increment values in one block, consecutive in the session's class,
// the first of which LAST_INSERT_ID() returns. Under mode 2 (MySQL 8's)
// the values of one statement may interleave with another session's, so a
// group is one row. Groups stay small because each row of a REPLACE
// deletes the one before it, and the delete-marked entries of the unique
// stub key it must pass grow with the group (1,000 rows in one transaction
// ran at 67 tickets/s, 10 at 943/s here).
func (t *mysqlTicket) Tickets(ctx context.Context, dst []int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(dst) > 0 {
		c, err := t.dedicated(ctx)
		if err != nil {
			return err
		}
		k := min(len(dst), mysqlTicketBatch)
		if err := t.batch(ctx, c, dst[:k]); err != nil {
			discard(c)
			t.conn = nil
			if !errors.Is(err, ErrResidue) {
				err = storeErr(t.dsn, "ticket", err)
			}
			return err
		}
		dst = dst[k:]
	}
	return nil
}

func (t *mysqlTicket) batch(ctx context.Context, c *sql.Conn, dst []int64) error {
	var q strings.Builder
	var groups []int
	for left := len(dst); left > 0; {
		g := min(left, t.group)
		q.WriteString("REPLACE INTO `" + t.name + "` (stub) VALUES ('a')")
		q.WriteString(strings.Repeat(",('a')", g-1))
		q.WriteString(";SELECT LAST_INSERT_ID();")
		groups = append(groups, g)
		left -= g
	}
	rows, err := c.QueryContext(ctx, q.String())
	if err != nil {
		return err
	}
	defer rows.Close()
	i, got := 0, 0
	for {
		for rows.Next() {
			if got == len(groups) {
				return fmt.Errorf("more than %d groups", len(groups))
			}
			var first int64
			if err := rows.Scan(&first); err != nil {
				return err
			}
			if err := checkResidue("table "+t.name, first, t.cfg.Offset, t.cfg.Increment); err != nil {
				return err
			}
			for j := range groups[got] {
				dst[i] = first + int64(j)*t.cfg.Increment
				i++
			}
			got++
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if got != len(groups) {
		return fmt.Errorf("%d groups of tickets of %d", got, len(groups))
	}
	return nil
}

// fence takes the reset lock on a connection of its own, held until
// release, and refuses while any session slot is held.
func (t *mysqlTicket) fence(ctx context.Context) (func(), error) {
	fail := func(err error) (func(), error) { return nil, storeErr(t.dsn, "fence table "+t.name, err) }
	c, err := t.db.Conn(ctx)
	if err != nil {
		return fail(err)
	}
	var got sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", t.lockName("reset")).Scan(&got); err != nil {
		discard(c)
		return fail(err)
	}
	if got.Int64 != 1 {
		discard(c)
		return nil, fmt.Errorf("%w: table %s on %s: another ticket init --reset is running", ErrInUse, t.name, t.dsn)
	}
	calls := make([]string, mysqlSessionSlots)
	for s := range calls {
		calls[s] = "IS_USED_LOCK('" + t.lockName(strconv.Itoa(s)) + "')"
	}
	var holders sql.NullString
	if err := c.QueryRowContext(ctx, "SELECT CONCAT_WS(', ', "+strings.Join(calls, ", ")+")").Scan(&holders); err != nil {
		discard(c)
		return fail(err)
	}
	if holders.String != "" {
		discard(c)
		return nil, inUse("table "+t.name+" on "+t.dsn, int64(strings.Count(holders.String, ",")+1), "connection ids "+holders.String)
	}
	return func() { discard(c) }, nil
}

func (t *mysqlTicket) Close() error {
	t.mu.Lock()
	if t.conn != nil {
		discard(t.conn)
		t.conn = nil
	}
	t.mu.Unlock()
	return t.db.Close()
}

func (t *mysqlTicket) String() string { return t.dsn }
