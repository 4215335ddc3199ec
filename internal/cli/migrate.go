package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"

	"github.com/idgenkit/idgen/migrate"
)

func init() { addCommand(newMigrateCmd) }

func newMigrateCmd() *cobra.Command {
	var (
		dsn     string
		fromEnv bool // dsn came from $DATABASE_URL
		opt     migrate.Options
	)
	connect := func(cmd *cobra.Command) (*pgx.Conn, error) {
		if dsn == "" {
			dsn, fromEnv = os.Getenv("DATABASE_URL"), true
		}
		if dsn == "" {
			return nil, badInput(errors.New("--dsn is required (or set DATABASE_URL), e.g. postgres://user@host:5432/db"))
		}
		if opt.Table == "" {
			return nil, badInput(errors.New("--table is required"))
		}
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, badInput(fmt.Errorf("--dsn %q: not a PostgreSQL URL or keyword/value DSN; want e.g. postgres://user@host:5432/db",
				clipInput(redactDSN(dsn))))
		}
		conn, err := pgx.ConnectConfig(cmd.Context(), cfg)
		if err != nil {
			return nil, fmt.Errorf("migrate: cannot connect to PostgreSQL at %s (user %s, database %s): %s",
				pgAddr(cfg.Host, cfg.Port), cfg.User, cfg.Database, pgCause(err))
		}
		return conn, nil
	}
	wrap := func(err error) error {
		if errors.Is(err, migrate.ErrInput) || errors.Is(err, migrate.ErrOrder) {
			return badInput(err)
		}
		return err
	}
	cmd := &cobra.Command{
		Use:   "migrate plan|run|verify --dsn DSN --table NAME [--to SPEC] [--time-column COL]",
		Short: "Migrate a PostgreSQL table's primary key to Snowflake or UUIDv7 keys, live",
		Long: `migrate moves a table from bigserial/integer keys to Snowflake keys, or from
UUIDv4 keys to UUIDv7 keys, while the application keeps writing: a new key
column is backfilled in batches (in creation order with --time-column), a
mapping table keeps old -> new, referencing tables get a new foreign key
column, triggers key the rows inserted meanwhile, and one short transaction
swaps the primary and foreign keys. Its state lives in the table
idgen_migrate_state: after an interruption, run the same command again.

  plan    inspect the table and print what run will do; changes nothing
  run     migrate (or resume); --dry-run prints the plan and the DDL
  verify  check counts, key uniqueness, foreign keys and the mapping`,
		Example: `  idgen migrate plan   --dsn postgres://app@db/app --table orders --to snowflake --time-column created_at
  idgen migrate run    --dsn postgres://app@db/app --table orders --to snowflake --time-column created_at
  idgen migrate verify --dsn postgres://app@db/app --table orders`,
	}
	cmd.PersistentFlags().StringVar(&dsn, "dsn", "", "PostgreSQL URL or keyword/value DSN (default $DATABASE_URL)")
	cmd.PersistentFlags().StringVar(&opt.Table, "table", "", "table to migrate: name or schema.name")

	withConn := func(f func(*cobra.Command, *pgx.Conn) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			conn, err := connect(cmd)
			if err != nil {
				return err
			}
			defer conn.Close(cmd.Context())
			err = f(cmd, conn)
			if err != nil && conn.IsClosed() && cmd.Context().Err() == nil {
				cfg := conn.Config()
				return fmt.Errorf("migrate: lost the connection to PostgreSQL at %s (%s); run the same command again to resume",
					pgAddr(cfg.Host, cfg.Port), pgCause(err))
			}
			return err
		}
	}
	plan := &cobra.Command{
		Use:   "plan",
		Short: "Print the row count, key type, foreign keys, steps and index sizes; change nothing",
		Args:  cobra.NoArgs,
		RunE: withConn(func(cmd *cobra.Command, conn *pgx.Conn) error {
			p, err := migrate.Inspect(cmd.Context(), conn, opt)
			if err != nil {
				return wrap(err)
			}
			return p.Write(cmd.OutOrStdout())
		}),
	}
	run := &cobra.Command{
		Use:   "run",
		Short: "Migrate the table, or resume an interrupted migration",
		Args:  cobra.NoArgs,
		RunE: withConn(func(cmd *cobra.Command, conn *pgx.Conn) error {
			opt.Log = cmd.OutOrStdout()
			if !opt.DryRun {
				opt.Progress = cmd.ErrOrStderr()
			}
			_, err := migrate.Run(cmd.Context(), conn, opt)
			if err != nil {
				return wrap(err)
			}
			if !opt.DryRun {
				fmt.Fprint(cmd.OutOrStdout(), verifyHint(dsn, fromEnv, opt.Table))
			}
			return nil
		}),
	}
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Check counts, uniqueness, foreign-key integrity and mapping completeness",
		Args:  cobra.NoArgs,
		RunE: withConn(func(cmd *cobra.Command, conn *pgx.Conn) error {
			r, err := migrate.Verify(cmd.Context(), conn, opt.Table)
			if err != nil {
				return wrap(err)
			}
			if err := r.Write(cmd.OutOrStdout()); err != nil {
				return err
			}
			if !r.OK() {
				return fmt.Errorf("%w: %d problem(s) in %s", migrate.ErrVerify, len(r.Problems), r.Table)
			}
			return nil
		}),
	}
	for _, c := range []*cobra.Command{plan, run} {
		c.Flags().StringVar(&opt.To, "to", "", "target spec: snowflake?... for integer keys, uuidv7 for uuid keys")
		c.Flags().StringVar(&opt.TimeColumn, "time-column", "", "creation-time column: new keys from its value, in creation order")
	}
	run.Flags().IntVar(&opt.Batch, "batch", migrate.DefaultBatch, "rows per backfill transaction")
	run.Flags().BoolVar(&opt.DryRun, "dry-run", false, "print the plan and the DDL; change nothing")
	cmd.AddCommand(plan, run, verify)
	return cmd
}

// verifyHint is run's closing hint: the verify command to paste. A DSN
// from $DATABASE_URL shows as "$DATABASE_URL"; a password in --dsn is left
// out (it never shows), and a note says so.
func verifyHint(dsn string, fromEnv bool, table string) string {
	arg, note := `"$DATABASE_URL"`, ""
	if !fromEnv {
		plain, had := withoutPassword(dsn)
		arg = shellQuote(plain)
		if had {
			note = "  (the password is left out: set PGPASSWORD, or put it back into --dsn)\n"
		}
	}
	return fmt.Sprintf("done; check it with:\n  idgen migrate verify --dsn %s --table %s\n%s", arg, shellQuote(table), note)
}

var (
	dsnURLPassword = regexp.MustCompile(`(://[^:/@]*):[^@/]*@`)
	dsnKVPassword  = regexp.MustCompile(`(^|\s)password\s*=\s*('(\\.|[^'\\])*'|\S*)`)
)

// withoutPassword returns dsn (a URL or keyword/value DSN) without its
// password, and whether it had one.
func withoutPassword(dsn string) (string, bool) {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		if _, ok := u.User.Password(); ok {
			u.User = url.User(u.User.Username())
			return u.String(), true
		}
		return dsn, false
	}
	out := dsnKVPassword.ReplaceAllString(dsn, "")
	return strings.TrimSpace(out), out != dsn
}

// redactDSN returns dsn with its password, if any, replaced by xxxxx, also
// when dsn does not parse.
func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	dsn = dsnURLPassword.ReplaceAllString(dsn, "${1}:xxxxx@")
	return dsnKVPassword.ReplaceAllString(dsn, "${1}password=xxxxx")
}

// clipInput cuts an input echoed in a message to about 64 characters.
func clipInput(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:61]) + "…"
	}
	return s
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pgAddr names a PostgreSQL server: host:port, or its Unix socket.
func pgAddr(host string, port uint16) string {
	if strings.HasPrefix(host, "/") {
		return fmt.Sprintf("%s/.s.PGSQL.%d", host, port)
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// pgCause says why talking to PostgreSQL failed: the server's message, or
// the network's, without the driver's wrapping.
func pgCause(err error) string {
	var pe *pgconn.PgError
	var errno syscall.Errno
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &pe):
		return fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code)
	case errors.As(err, &dns):
		return fmt.Sprintf("host %q not found", dns.Name)
	case errors.As(err, &errno):
		return errno.Error()
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection"
	}
	for errors.Unwrap(err) != nil {
		err = errors.Unwrap(err)
	}
	return err.Error()
}
