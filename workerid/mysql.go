package workerid

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idgenkit/idgen"
	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/internal/storetls"
)

// MySQLConfig configures a MariaDB/MySQL lease.
type MySQLConfig struct {
	LeaseConfig
	// Table is the lease table, created if missing. Empty means
	// "idgen_workers".
	Table string
	// OpenTimeout bounds OpenMySQL's wait for the server, within ctx:
	// the connection's handshake, the table's creation and the first
	// acquire. Zero means DefaultMySQLOpenTimeout.
	OpenTimeout time.Duration
}

// DefaultMySQLOpenTimeout is MySQLConfig.OpenTimeout when zero. It does not
// depend on the lease's timings: the read timeout once derived from them
// (350 ms with TTL 2 s, RenewEvery 300 ms, LostAfter 1 s) also bounded the
// handshake and the table's creation, and failed an open on a busy
// machine (TestMySQLOpenSlowHandshake). 10 s: the slowest of 30 opens,
// each creating its table, took 0.28 s under -race beside two busy loops
// on a shared 2-core machine (load average 13), 36 times less.
const DefaultMySQLOpenTimeout = 10 * time.Second

// MySQL is a Source leasing a worker ID from a MariaDB or MySQL table, the
// shape of Baidu uid-generator's WORKER_NODE with a lease instead of a row
// per start, one row per worker ID:
//
//	namespace varchar(190), worker_id int, owner varchar(255),
//	generation bigint, expires_at datetime(6), high_water bigint
//	(Unix nanoseconds), modified datetime(6),
//	PRIMARY KEY (namespace, worker_id)
//
// WORKER_NODE inserts a row, and so takes a new worker ID, at every start,
// until the space runs out; here a restarted node takes a row whose lease
// expired (by the server's clock), and a released row is free at once, so
// IDs do not leak. Acquire reads the free rows, orders them as the backend
// interface says (the preferred ID if its high-water mark has passed, else
// the lowest whose mark has passed, else the earliest mark), and takes the
// first with an UPDATE ... WHERE expires_at < NOW(6), which raises its
// generation; a concurrent acquirer that lost the row tries the next.
// Renewals set expires_at = NOW(6) + TTL where the generation and owner are
// still this node's. The row's high_water holds the generator's high-water
// mark (MySQL is a snowflake.HighWaterStore).
type MySQL struct {
	*lease
}

var _ Source = (*MySQL)(nil)

// OpenMySQL connects to dsn (mysql://user:pass@host:port/db?param=value, the
// driver's parameters), creates the table and the rows of the space if
// missing, and acquires a worker ID before it returns. Errors: a server that
// cannot be reached wraps idgen.ErrUnavailable; every ID held,
// idgen.ErrNoWorkerIDs; a bad configuration, ErrConfig.
func OpenMySQL(ctx context.Context, dsn string, cfg MySQLConfig) (*MySQL, error) {
	if cfg.OpenTimeout == 0 {
		cfg.OpenTimeout = DefaultMySQLOpenTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.OpenTimeout)
	defer cancel()
	b, lc, err := dialMySQL(ctx, dsn, cfg)
	if err != nil {
		return nil, err
	}
	l, err := open(ctx, b, lc)
	if err != nil {
		return nil, err
	}
	return &MySQL{l}, nil
}

// dialMySQL is OpenMySQL up to the acquire: it returns the backend,
// connected and checked, and the resolved configuration.
func dialMySQL(ctx context.Context, dsn string, cfg MySQLConfig) (*myBackend, LeaseConfig, error) {
	lc, err := cfg.LeaseConfig.resolve()
	if err != nil {
		return nil, lc, err
	}
	if cfg.Table == "" {
		cfg.Table = DefaultTable
	}
	if !tableRE().MatchString(cfg.Table) {
		return nil, lc, fmt.Errorf("%w: table %q: want a lower-case SQL identifier", ErrConfig, cfg.Table)
	}
	if len(lc.Namespace) > 190 {
		return nil, lc, fmt.Errorf("%w: namespace %s: want at most 190 bytes", ErrConfig, echo.Quote(lc.Namespace))
	}
	mc, err := storedsn.MySQL(dsn)
	if err != nil {
		return nil, lc, fmt.Errorf("%w: MySQL DSN: %v", ErrConfig, err)
	}
	mc.ClientFoundRows = true // a renewal or mark that changes nothing still matched its row
	// No read timeout unless the DSN sets one (readTimeout=): each request
	// of the lease has a context that ends with its attempt ((LostAfter -
	// RenewEvery) / 2 for a renewal, see attemptEnd; OpenTimeout at open),
	// and the driver closes a connection whose context ends, mid-read
	// too, so a cut connection does not outlive its attempt. A read
	// timeout derived from the renewal timing also bounded the handshake
	// and the table's creation, and failed an open on a busy machine.
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, lc, fmt.Errorf("%w: MySQL DSN %q: %v", ErrConfig, redact.Spec(dsn), err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	b := &myBackend{mc: mc, db: db, t: cfg.Table, ns: lc.Namespace, max: lc.max(), owner: lc.Owner, ttl: lc.TTL, dsn: redact.Spec(dsn)}
	if err := b.init(ctx); err != nil {
		db.Close()
		return nil, lc, storetls.Explain(err, mc.TLS)
	}
	return b, lc, nil
}

type myBackend struct {
	mc    *mysql.Config // for MySQLWhy
	db    *sql.DB
	t     string
	ns    string
	max   int64
	owner string
	ttl   time.Duration
	dsn   string
}

func (b *myBackend) unreachable(err error) error {
	err = storedsn.MySQLWhy(err, b.mc)
	if !storedsn.Answered(err) {
		return storedsn.Connect(b.dsn, nil, err)
	}
	return fmt.Errorf("%w: workerid: MySQL %s: %v", idgen.ErrUnavailable, b.dsn, err)
}

// init creates the table and the space's missing rows, under a named lock
// so that concurrent first starts do not race.
func (b *myBackend) init(ctx context.Context) error {
	var have int64
	err := b.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+b.t+` WHERE namespace = ? AND worker_id <= ?`, b.ns, b.max).Scan(&have)
	if err == nil && have == b.max+1 {
		return nil // the usual start: nothing to create
	}
	c, err := b.db.Conn(ctx)
	if err != nil {
		return b.unreachable(err)
	}
	defer c.Close()
	var got sql.NullInt64
	if err := c.QueryRowContext(ctx, `SELECT GET_LOCK(?, 30)`, "idgen_workers:"+b.t).Scan(&got); err != nil {
		return b.unreachable(err)
	}
	defer func() {
		// Past ctx too (the lock outlives a failed init), but bounded: a
		// server that stopped answering must not hold OpenMySQL. A
		// connection whose context ends is closed, and the lock with it.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultMySQLOpenTimeout)
		defer cancel()
		c.ExecContext(rctx, `SELECT RELEASE_LOCK(?)`, "idgen_workers:"+b.t)
	}()
	if _, err := c.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+b.t+` (
	namespace  varchar(190) NOT NULL,
	worker_id  int NOT NULL,
	owner      varchar(255) NOT NULL DEFAULT '',
	generation bigint NOT NULL DEFAULT 0,
	expires_at datetime(6) NOT NULL DEFAULT '1000-01-01 00:00:00',
	high_water bigint NULL,
	modified   datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
	PRIMARY KEY (namespace, worker_id))`); err != nil {
		return b.unreachable(err)
	}
	const batch = 1024
	for lo := int64(0); lo <= b.max; lo += batch {
		hi := min(lo+batch-1, b.max)
		var sb strings.Builder
		args := make([]any, 0, 2*(hi-lo+1))
		sb.WriteString(`INSERT IGNORE INTO ` + b.t + ` (namespace, worker_id) VALUES `)
		for id := lo; id <= hi; id++ {
			if id > lo {
				sb.WriteByte(',')
			}
			sb.WriteString("(?,?)")
			args = append(args, b.ns, id)
		}
		if _, err := c.ExecContext(ctx, sb.String(), args...); err != nil {
			return b.unreachable(err)
		}
	}
	return nil
}

func (b *myBackend) acquire(ctx context.Context, w want, clk idgen.Clock) (id, gen int64, hw time.Time, err error) {
	rows, err := b.db.QueryContext(ctx, `SELECT worker_id, high_water FROM `+b.t+`
	WHERE namespace = ? AND worker_id <= ? AND expires_at < NOW(6)`, b.ns, b.max)
	if err != nil {
		return 0, 0, hw, b.unreachable(err)
	}
	var free []int64
	marks := map[int64]time.Time{}
	for rows.Next() {
		var (
			n    int64
			mark sql.NullInt64
		)
		if err := rows.Scan(&n, &mark); err != nil {
			rows.Close()
			return 0, 0, hw, b.unreachable(err)
		}
		free = append(free, n)
		if mark.Valid {
			marks[n] = time.Unix(0, mark.Int64)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, hw, b.unreachable(err)
	}
	for _, id := range acquireOrder(free, marks, w, clk.Now()) {
		// LAST_INSERT_ID(expr) hands the new generation back in the result.
		res, err := b.db.ExecContext(ctx, `UPDATE `+b.t+`
	SET owner = ?, generation = LAST_INSERT_ID(generation + 1), expires_at = NOW(6) + INTERVAL ? MICROSECOND
	WHERE namespace = ? AND worker_id = ? AND expires_at < NOW(6)`, b.owner, b.ttl.Microseconds(), b.ns, id)
		if err != nil {
			return 0, 0, hw, b.unreachable(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			continue // taken meanwhile
		}
		if gen, err = res.LastInsertId(); err != nil {
			return 0, 0, hw, b.unreachable(err)
		}
		// Read the mark after the UPDATE: the previous holder can no
		// longer store one.
		var mark sql.NullInt64
		if err := b.db.QueryRowContext(ctx, `SELECT high_water FROM `+b.t+` WHERE namespace = ? AND worker_id = ?`, b.ns, id).Scan(&mark); err != nil {
			return 0, 0, hw, b.unreachable(err)
		}
		if mark.Valid {
			hw = time.Unix(0, mark.Int64)
		}
		return id, gen, hw, nil
	}
	return 0, 0, hw, fmt.Errorf("%w: workerid: all %d worker IDs of namespace %q in table %s are leased", idgen.ErrNoWorkerIDs, b.max+1, b.ns, b.t)
}

func (b *myBackend) exec(ctx context.Context, query string, args ...any) error {
	res, err := b.db.ExecContext(ctx, query, args...)
	if err != nil {
		return b.unreachable(err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errGone
	}
	return nil
}

func (b *myBackend) renew(ctx context.Context, id, gen int64) error {
	return b.exec(ctx, `UPDATE `+b.t+` SET expires_at = NOW(6) + INTERVAL ? MICROSECOND
	WHERE namespace = ? AND worker_id = ? AND generation = ? AND owner = ?`, b.ttl.Microseconds(), b.ns, id, gen, b.owner)
}

func (b *myBackend) release(ctx context.Context, id, gen int64, settle *time.Time) error {
	var mark sql.NullInt64 // NULL: none
	if settle != nil && !settle.IsZero() {
		mark = sql.NullInt64{Int64: settle.UnixNano(), Valid: true}
	}
	// A mark write still running when this UPDATE commits waits for the
	// row lock, then finds its owner gone.
	err := b.exec(ctx, `UPDATE `+b.t+` SET expires_at = '1000-01-01 00:00:00', owner = '',
	high_water = IF(?, ?, high_water)
	WHERE namespace = ? AND worker_id = ? AND generation = ? AND owner = ?`, settle != nil, mark, b.ns, id, gen, b.owner)
	if errors.Is(err, errGone) {
		return nil
	}
	return err
}

func (b *myBackend) storeMark(ctx context.Context, id, gen int64, mark time.Time) error {
	return b.exec(ctx, `UPDATE `+b.t+` SET high_water = GREATEST(COALESCE(high_water, 0), ?)
	WHERE namespace = ? AND worker_id = ? AND generation = ? AND owner = ?`, mark.UnixNano(), b.ns, id, gen, b.owner)
}

func (b *myBackend) close() { b.db.Close() }
