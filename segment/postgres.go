package segment

import (
	"context"
	"errors"
	"fmt"
	"strings"

	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idgenkit/idgen/internal/storetls"
)

// Postgres is the PostgreSQL Store: one round trip per segment,
//
//	UPDATE idgen_segments SET max_id = max_id + step ... RETURNING max_id
type Postgres struct {
	pool *pgxpool.Pool
	dsn  string
}

var _ Store = (*Postgres)(nil)

// openPool connects a pgx pool and pings it. A pool holds at most 4
// connections unless the DSN sets pool_max_conns.
func openPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	if _, err := parseDSN(dsn); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrDSN, Redact(dsn), err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = 4
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrDSN, Redact(dsn), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		if nerr := noDatabase(dsn, err); nerr != nil {
			return nil, nerr
		}
		return nil, storedsn.Connect(dsn, ErrUnreachable, storetls.Explain(err, cfg.ConnConfig.TLSConfig))
	}
	return pool, nil
}

// OpenPostgres connects to the PostgreSQL at dsn (postgres://...).
func OpenPostgres(ctx context.Context, dsn string) (*Postgres, error) {
	pool, err := openPool(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &Postgres{pool: pool, dsn: Redact(dsn)}, nil
}

func (s *Postgres) String() string { return s.dsn }

// Close closes the pool.
func (s *Postgres) Close() error { s.pool.Close(); return nil }

const pgSchema = `CREATE TABLE IF NOT EXISTS ` + Table + ` (
	biz_tag     text PRIMARY KEY,
	max_id      bigint NOT NULL,
	step        int NOT NULL,
	description text,
	updated_at  timestamptz NOT NULL DEFAULT now()
)`

// Init creates the table and the tag if missing. Concurrent Inits are
// serialised by a transaction-level advisory lock.
func (s *Postgres) Init(ctx context.Context, tag string, step int64, description string) (Tag, bool, error) {
	if err := checkTag(tag); err != nil {
		return Tag{}, false, err
	}
	if err := checkStep(step); err != nil {
		return Tag{}, false, err
	}
	t := Tag{Name: tag}
	var created bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('`+Table+`'))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, pgSchema); err != nil {
			return err
		}
		ct, err := tx.Exec(ctx, `INSERT INTO `+Table+` (biz_tag, max_id, step, description)
			VALUES ($1, 0, $2, NULLIF($3, '')) ON CONFLICT (biz_tag) DO NOTHING`, tag, step, description)
		if err != nil {
			return err
		}
		created = ct.RowsAffected() == 1
		var desc *string
		err = tx.QueryRow(ctx, `SELECT max_id, step, description FROM `+Table+` WHERE biz_tag = $1`, t.Name).
			Scan(&t.MaxID, &t.Step, &desc)
		if desc != nil {
			t.Description = *desc
		}
		return err
	})
	if err != nil {
		return Tag{}, false, fmt.Errorf("segment: init biz tag %q on %s: %w", tag, s.dsn, err)
	}
	return t, created, nil
}

// Reserve is one round trip: UPDATE ... RETURNING.
func (s *Postgres) Reserve(ctx context.Context, tag string, step int64) (max, added int64, err error) {
	var rowStep int64
	err = s.pool.QueryRow(ctx, `UPDATE `+Table+`
		SET max_id = max_id + CASE WHEN $2::bigint > 0 THEN $2::bigint ELSE step END, updated_at = now()
		WHERE biz_tag = $1 RETURNING max_id, step`, tag, step).Scan(&max, &rowStep)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, 0, fmt.Errorf("%w %q in %s on %s; create it with `idgen segment init --dsn URL --tag %s`", ErrUnknownTag, tag, Table, s.dsn, tag)
	case isPgCode(err, "42P01"):
		return 0, 0, fmt.Errorf("%w: table %s on %s; run `idgen segment init --dsn URL --tag %s`", ErrNotInstalled, Table, s.dsn, tag)
	case isPgCode(err, "22003"): // bigint out of range: the top of the ID space
		return s.reserveLast(ctx, tag, step)
	case err != nil:
		return 0, 0, storeErr(s.dsn, "reserve biz tag "+tag, err)
	}
	if step == 0 {
		step = rowStep
	}
	return max, step, nil
}

// reserveLast reserves what is left below 2^63-1, in a transaction that
// locks the tag's row.
func (s *Postgres) reserveLast(ctx context.Context, tag string, step int64) (max, added int64, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var cur, rowStep int64
		if err := tx.QueryRow(ctx, `SELECT max_id, step FROM `+Table+` WHERE biz_tag = $1 FOR UPDATE`, tag).Scan(&cur, &rowStep); err != nil {
			return err
		}
		if step == 0 {
			step = rowStep
		}
		if added, err = lastStep(s.dsn, tag, cur, step); err != nil {
			return err
		}
		max = cur + added
		_, err := tx.Exec(ctx, `UPDATE `+Table+` SET max_id = $2, updated_at = now() WHERE biz_tag = $1`, tag, max)
		return err
	})
	if errors.Is(err, ErrExhausted) {
		return 0, 0, err
	}
	if err != nil {
		return 0, 0, storeErr(s.dsn, "reserve biz tag "+tag, err)
	}
	return max, added, nil
}

func isPgCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}
