package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/migrate"
)

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
			return nil, badInput(fmt.Errorf("--dsn %s: not a PostgreSQL URL or keyword/value DSN; want e.g. postgres://user@host:5432/db",
				echo.Quote(redact.Spec(dsn))))
		}
		conn, err := pgx.ConnectConfig(cmd.Context(), cfg)
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", &storedsn.ConnectError{Target: storedsn.PostgresTarget(&cfg.Config), Err: err})
		}
		return conn, nil
	}
	wrap := func(err error) error {
		return withFlags(err, migrateFlags)
	}
	cmd := &cobra.Command{
		Use:   "migrate plan|run|verify|status|pause|resume|revert|discard|finish|abort --dsn DSN --table NAME [--to SPEC] [--time-column COL]",
		Short: "Migrate a PostgreSQL table's primary key to Snowflake or UUIDv7 keys, live",
		Long: `migrate moves a table from bigserial/integer keys to Snowflake keys, or from
UUIDv4 keys to UUIDv7 keys, while the application keeps writing: a new key
column is backfilled in batches (in creation order with --time-column), a
mapping table keeps old -> new, referencing tables get a new foreign key
column, triggers key the rows inserted meanwhile, and one short transaction
swaps the primary and foreign keys. Its state lives in the table
idgen_migrate_state: after an interruption, run the same command again.

  plan    inspect the table and print what run will do, or refuse (exit 2)
          the shapes of schema it cannot migrate; changes nothing
  run     migrate (or resume); --dry-run prints the plan and the DDL;
          after revert, --yes drops the reverted attempt and starts over
  verify  check counts, key uniqueness, foreign keys, the mapping, and
          that no foreign key or view is left on an *_old column
  status  phase, rows done and total, rate, ETA, lag, paused or not
  pause   make a running migration wait before its next batch
  resume  let it go on (--batch, --chunk-time: new batch sizes)
  revert  after the swap: back to the old keys, in one short transaction
  discard after revert: drop what the reverted migration left (the new
          keys, mapping table, triggers, state); the table is as before
  finish  after a completed run: verify, then drop the old keys, mapping
          table, triggers and state (--yes: revert is no longer possible)
  abort   from any phase: drop everything the migration added and leave
          the table as it was (--yes)

Before each batch, run waits while a standby's replay lag is over
--max-lag (default 1s), while more than --max-active client backends are
active, or while paused; it says so on stderr.`,
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
			if err != nil && errors.Is(err, context.Canceled) && cmd.Context().Err() != nil {
				return errors.New("migrate: interrupted; what is done is kept: run the same command again to resume")
			}
			if err != nil && conn.IsClosed() && cmd.Context().Err() == nil {
				cfg := conn.Config()
				return fmt.Errorf("migrate: lost the connection to PostgreSQL at %s (%s); run the same command again to resume",
					storedsn.PostgresAddr(cfg.Host, cfg.Port), storedsn.Cause(err))
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
			var shapes *migrate.ShapeError
			if errors.As(err, &shapes) && p != nil {
				// The plan lists what is refused, with the workarounds.
				if werr := p.Write(cmd.OutOrStdout()); werr != nil {
					return werr
				}
				return badInput(fmt.Errorf("%w: %s cannot be migrated as it is: %d shape(s) refused, listed above",
					migrate.ErrShape, shapes.Table, len(shapes.Refusals)))
			}
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
			opt.Log = stepLog(cmd.OutOrStdout())
			if !opt.DryRun {
				pr := newMigrateBars(cmd.ErrOrStderr())
				defer pr.Close()
				opt.Progress = pr
				opt.OnThrottle = func(th migrate.Throttle) { pr.line(throttleLine(th)) } // above the bar
			}
			p, err := migrate.Run(cmd.Context(), conn, opt)
			if err != nil {
				return wrap(err)
			}
			if opt.DryRun {
				return p.WriteDryRun(cmd.OutOrStdout())
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
	run.Flags().IntVar(&opt.Batch, "batch", migrate.DefaultBatch, "rows per backfill transaction (with --chunk-time: of the first)")
	run.Flags().DurationVar(&opt.ChunkTime, "chunk-time", 0, "size batches to take about this long each, within [batch/10, 10×batch] (0: fixed --batch)")
	run.Flags().DurationVar(&opt.MaxLag, "max-lag", migrate.DefaultMaxLag, "wait before a batch while a standby's replay lag is over this")
	run.Flags().IntVar(&opt.MaxActive, "max-active", 0, "wait before a batch while more client backends than this are active (0: no limit)")
	run.Flags().BoolVar(&opt.DryRun, "dry-run", false, "print the plan and the DDL; change nothing")
	run.Flags().BoolVar(&opt.StartOver, "yes", false, "after revert: drop what the reverted migration left and migrate anew")
	var set migrate.Setting
	control := func(use, short string, s migrate.Setting) *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short,
			Args:  cobra.NoArgs,
			RunE: withConn(func(cmd *cobra.Command, conn *pgx.Conn) error {
				s.Batch, s.ChunkTime = set.Batch, set.ChunkTime
				if err := migrate.Set(cmd.Context(), conn, opt.Table, s); err != nil {
					return wrap(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: recorded; a running migration of %s takes it before its next batch\n", use, opt.Table)
				return nil
			}),
		}
	}
	pause := control("pause", "Pause a running migration before its next batch (it waits until resume)", migrate.Setting{Pause: true})
	resume := control("resume", "Let a paused migration go on; --batch and --chunk-time change its batches", migrate.Setting{Resume: true})
	resume.Flags().IntVar(&set.Batch, "batch", 0, "new rows per batch (0: unchanged)")
	resume.Flags().DurationVar(&set.ChunkTime, "chunk-time", 0, "new time per batch (0: unchanged)")
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the phase, rows done and total, rate, ETA, lag and whether the run is paused",
		Args:  cobra.NoArgs,
		RunE: withConn(func(cmd *cobra.Command, conn *pgx.Conn) error {
			st, err := migrate.GetStatus(cmd.Context(), conn, opt.Table)
			if err != nil {
				return wrap(err)
			}
			return st.Write(cmd.OutOrStdout())
		}),
	}
	revert := &cobra.Command{
		Use:   "revert",
		Short: "After the swap: swap back to the old keys and foreign keys in one short transaction",
		Args:  cobra.NoArgs,
		RunE: withConn(func(cmd *cobra.Command, conn *pgx.Conn) error {
			took, err := migrate.Revert(cmd.Context(), conn, opt.Table)
			if err != nil {
				return wrap(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "reverted %s to its old keys (the swap back took %v); the new keys stay in *_idgen_new columns: "+
				"idgen migrate discard drops them, idgen migrate run --yes starts over\n", opt.Table, took.Round(time.Millisecond))
			return nil
		}),
	}
	var yes bool
	finish := &cobra.Command{
		Use:   "finish",
		Short: "After a completed run: verify, then drop the old key columns, the mapping table, triggers and state; --yes",
		Args:  cobra.NoArgs,
		RunE: withConn(func(cmd *cobra.Command, conn *pgx.Conn) error {
			r, err := migrate.Finish(cmd.Context(), conn, opt.Table, yes)
			if r != nil {
				if werr := r.Write(cmd.OutOrStdout()); werr != nil {
					return werr
				}
			}
			if err != nil {
				return wrap(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "finished %s: the migration's leftover key columns, mapping table, triggers and state are dropped\n", opt.Table)
			return nil
		}),
	}
	finish.Flags().BoolVar(&yes, "yes", false, "finish a completed migration although revert is no longer possible after it")
	abort := &cobra.Command{
		Use:   "abort",
		Short: "From any phase: drop everything the migration added (reverting first after the swap); --yes",
		Args:  cobra.NoArgs,
		RunE: withConn(func(cmd *cobra.Command, conn *pgx.Conn) error {
			if err := migrate.Abort(cmd.Context(), conn, opt.Table, yes); err != nil {
				return wrap(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "aborted the migration of %s: what it added is dropped, the table is as it was\n", opt.Table)
			return nil
		}),
	}
	abort.Flags().BoolVar(&yes, "yes", false, "drop everything the migration added")
	discard := &cobra.Command{
		Use:   "discard",
		Short: "After revert: drop what the reverted migration left (new key columns, mapping table, triggers, state)",
		Args:  cobra.NoArgs,
		RunE: withConn(func(cmd *cobra.Command, conn *pgx.Conn) error {
			if err := migrate.Discard(cmd.Context(), conn, opt.Table); err != nil {
				return wrap(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "discarded the reverted migration of %s: its new keys, mapping table, triggers and state are dropped; the table is on its old keys as before\n", opt.Table)
			return nil
		}),
	}
	cmd.AddCommand(plan, run, verify, pause, resume, status, revert, discard, finish, abort)
	return cmd
}

// throttleLine is run's line when the backfill waits or goes on.
func throttleLine(th migrate.Throttle) string {
	if th.Hold {
		return "idgen: waiting: " + migrateFlags.Replace(th.Reason)
	}
	return fmt.Sprintf("idgen: going on after %v (lag %v, %d active backends)",
		th.Waited.Round(100*time.Millisecond), th.Lag.Round(time.Millisecond), th.Active)
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

var dsnKVPassword = regexp.MustCompile(`(^|\s)password\s*=\s*('(\\.|[^'\\])*'|\S*)`)

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

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
