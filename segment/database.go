package segment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// noDatabase returns ErrNoDatabase naming the database when err says the
// DSN's database does not exist (PostgreSQL 3D000, MySQL 1049), else nil.
func noDatabase(dsn string, err error) error {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	var name string
	switch {
	case errors.As(err, &pe) && pe.Code == "3D000":
		if c, perr := pgx.ParseConfig(dsn); perr == nil {
			name = c.Database
		}
	case errors.As(err, &me) && me.Number == 1049:
		if c, merr := MySQLConfig(dsn); merr == nil {
			name = c.DBName
		}
	default:
		return nil
	}
	return fmt.Errorf("%w: database %q on %s; create it, or pass --create-db to `idgen segment init` or `idgen ticket init`", ErrNoDatabase, name, Redact(dsn))
}

// CreateDatabase creates the database a postgres:// or mysql:// DSN names
// when it is missing, connecting to the server's "postgres" database (or to
// no database, on MySQL) to do so, and reports whether it created it. A
// redis:// DSN's numbered databases always exist: it returns false. Errors
// wrap ErrDSN (no database named) or ErrUnreachable, naming the DSN with
// its password redacted.
func CreateDatabase(ctx context.Context, dsn string) (bool, error) {
	u, err := parseDSN(dsn)
	if err != nil {
		return false, err
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return false, fmt.Errorf("%w: %q: %v", ErrDSN, Redact(u.String()), err)
		}
		name := cfg.Database
		if name == "" {
			return false, fmt.Errorf("%w: %q names no database", ErrDSN, Redact(u.String()))
		}
		cfg.Database = "postgres"
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			e := storedsn.Connect(u.String(), ErrUnreachable, err)
			e.Database = cfg.Database
			return false, e
		}
		defer c.Close(ctx)
		var exists bool
		if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
			return false, storeErr(Redact(u.String()), "create database "+name, err)
		}
		if exists {
			return false, nil
		}
		_, err = c.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize())
		if isPgCode(err, "42P04") { // created meanwhile
			return false, nil
		}
		if err != nil {
			return false, storeErr(Redact(u.String()), "create database "+name, err)
		}
		return true, nil
	case "mysql":
		cfg, err := MySQLConfig(dsn)
		if err != nil {
			return false, err
		}
		name := cfg.DBName
		if name == "" {
			return false, fmt.Errorf("%w: %q names no database", ErrDSN, Redact(u.String()))
		}
		cfg.DBName = ""
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			return false, fmt.Errorf("%w: %q: %v", ErrDSN, Redact(u.String()), err)
		}
		db := sql.OpenDB(conn)
		defer db.Close()
		res, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+strings.ReplaceAll(name, "`", "``")+"`")
		if err != nil {
			return false, storeErr(Redact(u.String()), "create database "+name, err)
		}
		n, _ := res.RowsAffected()
		return n == 1, nil
	}
	return false, nil
}
