package segment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"

	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/idgenkit/idgen/internal/storetls"
)

// MySQL is the MySQL/MariaDB Store. A reservation is Leaf's own
// transaction: UPDATE max_id, then SELECT it back, then COMMIT (three round
// trips; the row lock keeps the pair atomic).
type MySQL struct {
	db  *sql.DB
	dsn string
}

var _ Store = (*MySQL)(nil)

// MySQLConfig converts a URL, mysql://user:pass@host:port/db?param=value, to
// the driver's Config (user:pass@tcp(host:port)/db?param=value). Port 3306
// is the default; query parameters are the driver's (timeout, tls, ...),
// and the files of package storetls: tls_ca, tls_cert, tls_key,
// tls_server_name (TLS that verifies the server's certificate and name;
// not with the driver's tls=) and password_file. A dial timeout of 5 s
// applies unless the URL sets timeout. Errors wrap ErrDSN.
func MySQLConfig(dsn string) (*mysql.Config, error) {
	cfg, err := storedsn.MySQL(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDSN, err)
	}
	return cfg, nil
}

// MySQLWhy returns err, an error of a connection of cfg (MySQLConfig's),
// with what the driver logged when err is its bare "invalid connection"
// (or database/sql's "bad connection" after it).
func MySQLWhy(err error, cfg *mysql.Config) error { return storedsn.MySQLWhy(err, cfg) }

// openDB opens a database/sql pool on a mysql:// URL and pings it; tune,
// when given, adjusts the driver's config first.
func openDB(ctx context.Context, dsn string, tune ...func(*mysql.Config)) (*sql.DB, error) {
	cfg, err := MySQLConfig(dsn)
	if err != nil {
		return nil, err
	}
	for _, f := range tune {
		f(cfg)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrDSN, Redact(dsn), err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		if nerr := noDatabase(dsn, err); nerr != nil {
			return nil, nerr
		}
		return nil, storedsn.Connect(dsn, ErrUnreachable, storetls.Explain(MySQLWhy(err, cfg), cfg.TLS))
	}
	return db, nil
}

// OpenMySQL connects to the MySQL or MariaDB at dsn (mysql://...).
func OpenMySQL(ctx context.Context, dsn string) (*MySQL, error) {
	db, err := openDB(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &MySQL{db: db, dsn: Redact(dsn)}, nil
}

func (s *MySQL) String() string { return s.dsn }

// Close closes the pool.
func (s *MySQL) Close() error { return s.db.Close() }

const mysqlSchema = `CREATE TABLE IF NOT EXISTS ` + Table + ` (
	biz_tag     varchar(128) NOT NULL PRIMARY KEY,
	max_id      bigint NOT NULL,
	step        int NOT NULL,
	description varchar(256),
	updated_at  timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP
) ENGINE=InnoDB`

// Init creates the table and the tag if missing.
func (s *MySQL) Init(ctx context.Context, tag string, step int64, description string) (Tag, bool, error) {
	if err := checkTag(tag); err != nil {
		return Tag{}, false, err
	}
	if err := checkStep(step); err != nil {
		return Tag{}, false, err
	}
	fail := func(err error) (Tag, bool, error) {
		return Tag{}, false, fmt.Errorf("segment: init biz tag %q on %s: %w", tag, s.dsn, err)
	}
	if _, err := s.db.ExecContext(ctx, mysqlSchema); err != nil {
		return fail(err)
	}
	res, err := s.db.ExecContext(ctx, `INSERT IGNORE INTO `+Table+` (biz_tag, max_id, step, description)
		VALUES (?, 0, ?, NULLIF(?, ''))`, tag, step, description)
	if err != nil {
		return fail(err)
	}
	n, _ := res.RowsAffected()
	t := Tag{Name: tag}
	var desc sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT max_id, step, description FROM `+Table+` WHERE biz_tag = ?`, tag).
		Scan(&t.MaxID, &t.Step, &desc); err != nil {
		return fail(err)
	}
	t.Description = desc.String
	return t, n == 1, nil
}

// Reserve runs Leaf's transaction: UPDATE, SELECT, COMMIT.
func (s *MySQL) Reserve(ctx context.Context, tag string, step int64) (max, added int64, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, storeErr(s.dsn, "reserve biz tag "+tag, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE `+Table+` SET max_id = max_id + IF(? > 0, ?, step) WHERE biz_tag = ?`, step, step, tag)
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1146 {
			return 0, 0, fmt.Errorf("%w: table %s on %s; run `idgen segment init --dsn URL --tag %s`", ErrNotInstalled, Table, s.dsn, tag)
		}
		if errors.As(err, &me) && me.Number == 1690 { // BIGINT value out of range: the top of the ID space
			tx.Rollback()
			return s.reserveLast(ctx, tag, step)
		}
		return 0, 0, storeErr(s.dsn, "reserve biz tag "+tag, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return 0, 0, fmt.Errorf("%w %q in %s on %s; create it with `idgen segment init --dsn URL --tag %s`", ErrUnknownTag, tag, Table, s.dsn, tag)
	}
	var rowStep int64
	if err := tx.QueryRowContext(ctx, `SELECT max_id, step FROM `+Table+` WHERE biz_tag = ?`, tag).Scan(&max, &rowStep); err != nil {
		return 0, 0, storeErr(s.dsn, "reserve biz tag "+tag, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, storeErr(s.dsn, "reserve biz tag "+tag, err)
	}
	if step == 0 {
		step = rowStep
	}
	return max, step, nil
}

// reserveLast reserves what is left below 2^63-1, in a transaction that
// locks the tag's row.
func (s *MySQL) reserveLast(ctx context.Context, tag string, step int64) (max, added int64, err error) {
	fail := func(err error) (int64, int64, error) {
		if errors.Is(err, ErrExhausted) {
			return 0, 0, err
		}
		return 0, 0, storeErr(s.dsn, "reserve biz tag "+tag, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	var cur, rowStep int64
	if err := tx.QueryRowContext(ctx, `SELECT max_id, step FROM `+Table+` WHERE biz_tag = ? FOR UPDATE`, tag).Scan(&cur, &rowStep); err != nil {
		return fail(err)
	}
	if step == 0 {
		step = rowStep
	}
	if added, err = lastStep(s.dsn, tag, cur, step); err != nil {
		return fail(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE `+Table+` SET max_id = ? WHERE biz_tag = ?`, cur+added, tag); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return cur + added, added, nil
}
