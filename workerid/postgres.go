package workerid

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idgenkit/idgen"
	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/idgenkit/idgen/internal/lazyre"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/internal/storetls"
)

// DefaultTable is the PostgreSQL lease table.
const DefaultTable = "idgen_workers"

// PostgresConfig configures a PostgreSQL lease.
type PostgresConfig struct {
	LeaseConfig
	// Table is the lease table, created if missing. Empty means
	// "idgen_workers".
	Table string
}

// Postgres is a Source leasing a worker ID from a PostgreSQL table, one row
// per worker ID:
//
//	namespace text, worker_id int, owner text, generation bigint,
//	expires_at timestamptz, high_water timestamptz,
//	PRIMARY KEY (namespace, worker_id)
//
// Acquire takes, in one transaction, a row whose lease expired (by the
// server's clock), with SELECT ... FOR UPDATE SKIP LOCKED, and raises its
// generation. It picks as the backend interface says: the preferred (last)
// ID if its high-water mark has passed (by this node's clock), else the
// lowest whose mark has passed, else the one whose mark is earliest. An ID
// released a moment ago carries a mark up to HighWaterAhead ahead, which its
// next holder would have to wait out. Renewals set
// expires_at = now() + TTL where the generation is still this node's. The
// row's high_water holds the generator's high-water mark (Postgres is a
// snowflake.HighWaterStore), so the next holder of the ID, on a clock that
// is behind, waits or fails according to its rollback policy.
type Postgres struct {
	*lease
}

var _ Source = (*Postgres)(nil)

var tableRE = lazyre.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// OpenPostgres connects to dsn (postgres://...), creates the table and the
// rows of the space if missing, and acquires a worker ID before it returns.
// Errors: a server that cannot be reached wraps idgen.ErrUnavailable; every
// ID held, idgen.ErrNoWorkerIDs; a bad configuration, ErrConfig; a local
// clock more than MaxSkew from the server's clock_timestamp(), ErrClockSkew.
func OpenPostgres(ctx context.Context, dsn string, cfg PostgresConfig) (*Postgres, error) {
	b, lc, err := dialPostgres(ctx, dsn, cfg)
	if err != nil {
		return nil, err
	}
	l, err := open(ctx, b, lc)
	if err != nil {
		return nil, err
	}
	return &Postgres{l}, nil
}

// dialPostgres is OpenPostgres up to the acquire: it returns the backend,
// connected and checked, and the resolved configuration.
func dialPostgres(ctx context.Context, dsn string, cfg PostgresConfig) (*pgBackend, LeaseConfig, error) {
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
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, lc, fmt.Errorf("%w: PostgreSQL DSN %q: %v", ErrConfig, redact.Spec(dsn), err)
	}
	pc.MaxConns = 2
	if pc.ConnConfig.ConnectTimeout == 0 {
		pc.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, lc, fmt.Errorf("%w: PostgreSQL DSN %q: %v", ErrConfig, redact.Spec(dsn), err)
	}
	b := &pgBackend{pool: pool, t: cfg.Table, ns: lc.Namespace, max: lc.max(), owner: lc.Owner, ttl: lc.TTL, dsn: redact.Spec(dsn)}
	if err := lc.checkSkew(ctx, b.clock); err != nil {
		pool.Close()
		return nil, lc, storetls.Explain(err, pc.ConnConfig.TLSConfig)
	}
	if err := b.init(ctx); err != nil {
		pool.Close()
		return nil, lc, err
	}
	return b, lc, nil
}

type pgBackend struct {
	pool  *pgxpool.Pool
	t     string
	ns    string
	max   int64
	owner string
	ttl   time.Duration
	dsn   string
}

func (b *pgBackend) unreachable(err error) error {
	if errors.Is(err, idgen.ErrNoWorkerIDs) {
		return err
	}
	if !storedsn.Answered(err) {
		return storedsn.Connect(b.dsn, nil, err)
	}
	return fmt.Errorf("%w: workerid: PostgreSQL %s: %v", idgen.ErrUnavailable, b.dsn, err)
}

// init creates the table and the space's rows, under an advisory lock so
// that concurrent first starts do not race on CREATE TABLE.
func (b *pgBackend) init(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "idgen_workers:"+b.t); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+b.t+` (
	namespace  text NOT NULL,
	worker_id  int NOT NULL,
	owner      text NOT NULL DEFAULT '',
	generation bigint NOT NULL DEFAULT 0,
	expires_at timestamptz NOT NULL DEFAULT '-infinity',
	high_water timestamptz,
	PRIMARY KEY (namespace, worker_id))`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO `+b.t+` (namespace, worker_id)
	SELECT $1, g FROM generate_series(0, $2::int) g ON CONFLICT DO NOTHING`, b.ns, b.max)
		return err
	})
	if err != nil {
		return b.unreachable(err)
	}
	return nil
}

func (b *pgBackend) acquire(ctx context.Context, w want, clk idgen.Clock) (id, gen int64, hw time.Time, err error) {
	var mark *time.Time
	err = pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT worker_id FROM `+b.t+`
	WHERE namespace = $1 AND worker_id <= $2 AND expires_at < now() AND (NOT $5 OR worker_id = $3)
	ORDER BY coalesce(high_water > $4, false),
		CASE WHEN high_water > $4 THEN high_water END,
		worker_id <> $3, worker_id
	LIMIT 1 FOR UPDATE SKIP LOCKED`, b.ns, b.max, w.id, clk.Now(), w.only).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: workerid: all %d worker IDs of namespace %q in table %s are leased", idgen.ErrNoWorkerIDs, b.max+1, b.ns, b.t)
		}
		if err != nil {
			return err
		}
		return tx.QueryRow(ctx, `UPDATE `+b.t+`
	SET owner = $3, generation = generation + 1, expires_at = now() + $4 * interval '1 millisecond'
	WHERE namespace = $1 AND worker_id = $2
	RETURNING generation, high_water`, b.ns, id, b.owner, b.ttl.Milliseconds()).Scan(&gen, &mark)
	})
	if err != nil {
		return 0, 0, time.Time{}, b.unreachable(err)
	}
	if mark != nil {
		hw = *mark
	}
	return id, gen, hw, nil
}

func (b *pgBackend) exec(ctx context.Context, sql string, args ...any) error {
	tag, err := b.pool.Exec(ctx, sql, args...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errGone
	}
	return nil
}

func (b *pgBackend) renew(ctx context.Context, id, gen int64) error {
	return b.exec(ctx, `UPDATE `+b.t+` SET expires_at = now() + $5 * interval '1 millisecond'
	WHERE namespace = $1 AND worker_id = $2 AND generation = $3 AND owner = $4`, b.ns, id, gen, b.owner, b.ttl.Milliseconds())
}

func (b *pgBackend) release(ctx context.Context, id, gen int64, settle *time.Time) error {
	var mark *time.Time // NULL: none
	if settle != nil && !settle.IsZero() {
		mark = settle
	}
	// A mark write still running when this UPDATE commits waits for the
	// row, then finds its owner gone.
	err := b.exec(ctx, `UPDATE `+b.t+` SET expires_at = '-infinity', owner = '',
	high_water = CASE WHEN $5 THEN $6 ELSE high_water END
	WHERE namespace = $1 AND worker_id = $2 AND generation = $3 AND owner = $4`, b.ns, id, gen, b.owner, settle != nil, mark)
	if errors.Is(err, errGone) {
		return nil
	}
	return err
}

func (b *pgBackend) storeMark(ctx context.Context, id, gen int64, mark time.Time) error {
	return b.exec(ctx, `UPDATE `+b.t+` SET high_water = greatest(high_water, $5)
	WHERE namespace = $1 AND worker_id = $2 AND generation = $3 AND owner = $4`, b.ns, id, gen, b.owner, mark)
}

func (b *pgBackend) close() { b.pool.Close() }

// clock reads the server's clock_timestamp().
func (b *pgBackend) clock(ctx context.Context) (time.Time, string, bool, error) {
	var t time.Time
	if err := b.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&t); err != nil {
		return time.Time{}, "", false, b.unreachable(err)
	}
	return t, "PostgreSQL " + b.dsn + " clock_timestamp()", true, nil
}
