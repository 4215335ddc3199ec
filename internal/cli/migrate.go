package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/lazyre"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/migrate"
)

// migrateTarget is what every migrate subcommand takes: the server
// (--dsn, else $DATABASE_URL) and the table.
type migrateTarget struct {
	dsn     string
	fromEnv bool // dsn came from $DATABASE_URL
	table   string
	env     *Env
}

func newMigrateCmd(e *Env) *cobra.Command {
	t := &migrateTarget{env: e}
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
	cmd.PersistentFlags().StringVar(&t.dsn, "dsn", "", "PostgreSQL URL or keyword/value DSN (default $DATABASE_URL)")
	cmd.PersistentFlags().StringVar(&t.table, "table", "", "table to migrate: name or schema.name")
	cmd.AddCommand(
		newMigratePlanCmd(t),
		newMigrateRunCmd(t),
		t.command("verify", "Check counts, uniqueness, foreign-key integrity and mapping completeness", t.verify),
		newMigrateSetCmd(t, "pause", "Pause a running migration before its next batch (it waits until resume)", migrate.Setting{Pause: true}),
		newMigrateSetCmd(t, "resume", "Let a paused migration go on; --batch and --chunk-time change its batches", migrate.Setting{Resume: true}),
		t.command("status", "Show the phase, rows done and total, rate, ETA, lag and whether the run is paused", t.status),
		t.command("revert", "After the swap: swap back to the old keys and foreign keys in one short transaction", t.revert),
		t.command("discard", "After revert: drop what the reverted migration left (new key columns, mapping table, triggers, state)", t.discard),
		newMigrateYesCmd(t, "finish", "After a completed run: verify, then drop the old key columns, the mapping table, triggers and state; --yes",
			"finish a completed migration although revert is no longer possible after it", (*migrateYesOptions).finish),
		newMigrateYesCmd(t, "abort", "From any phase: drop everything the migration added (reverting first after the swap); --yes",
			"drop everything the migration added", (*migrateYesOptions).abort),
	)
	return cmd
}

// connect connects to t's server, after checking that the DSN and the
// table are given.
func (t *migrateTarget) connect(cmd *cobra.Command) (*pgx.Conn, error) {
	if t.dsn == "" {
		t.dsn, t.fromEnv = t.env.getenv("DATABASE_URL"), true
	}
	if t.dsn == "" {
		return nil, badInput(errors.New("--dsn is required (or set DATABASE_URL), e.g. postgres://user@host:5432/db"))
	}
	if t.table == "" {
		return nil, badInput(errors.New("--table is required"))
	}
	cfg, err := pgx.ParseConfig(t.dsn)
	if err != nil {
		return nil, badInput(fmt.Errorf("--dsn %s: not a PostgreSQL URL or keyword/value DSN; want e.g. postgres://user@host:5432/db",
			echo.Quote(redact.Spec(t.dsn))))
	}
	conn, err := pgx.ConnectConfig(cmd.Context(), cfg)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", &storedsn.ConnectError{Target: storedsn.PostgresTarget(&cfg.Config), Err: err})
	}
	return conn, nil
}

// command returns the subcommand use, which connects to t's server and
// calls run.
func (t *migrateTarget) command(use, short string, run func(*cobra.Command, *pgx.Conn) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs, RunE: t.runE(run)}
}

// runE is a subcommand's RunE: it connects, calls run, and says what an
// interruption or a lost connection leaves.
func (t *migrateTarget) runE(run func(*cobra.Command, *pgx.Conn) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		conn, err := t.connect(cmd)
		if err != nil {
			return err
		}
		defer conn.Close(cmd.Context())
		err = run(cmd, conn)
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

// migrateFlags names the flag that sets each field of migrate's Options
// and Setting the commands take.
var migrateFlags = map[string]string{
	"Options.To":         "--to",
	"Options.TimeColumn": "--time-column",
	"Options.Batch":      "--batch",
	"Options.ChunkTime":  "--chunk-time",
	"Options.MaxLag":     "--max-lag",
	"Options.MaxActive":  "--max-active",
	"Setting.Batch":      "--batch",
	"Setting.ChunkTime":  "--chunk-time",
}

// migrateErr is a migrate library error as the commands print it: a field
// as its flag, a confirmation as --yes, and Abort as the abort command.
func migrateErr(err error) error {
	var (
		confirm *migrate.ConfirmError
		shapes  *migrate.ShapeError
	)
	switch {
	case errors.As(err, &confirm):
		return retell(err, confirm, confirm.What+"; give --yes to "+strings.ToLower(confirm.Call))
	case errors.As(err, &shapes):
		return retell(err, shapes, shapes.Text("idgen migrate abort --yes"))
	}
	return withFlag(err, migrateFlags)
}

// migratePlanOptions are plan's: the target scheme and time column.
type migratePlanOptions struct {
	*migrateTarget
	to, timeColumn string
}

func newMigratePlanCmd(t *migrateTarget) *cobra.Command {
	o := &migratePlanOptions{migrateTarget: t}
	cmd := t.command("plan", "Print the row count, key type, foreign keys, steps and index sizes; change nothing", o.run)
	migrateTargetFlags(cmd, &o.to, &o.timeColumn)
	return cmd
}

// migrateTargetFlags defines --to and --time-column, plan's and run's.
func migrateTargetFlags(cmd *cobra.Command, to, timeColumn *string) {
	cmd.Flags().StringVar(to, "to", "", "target spec: snowflake?... for integer keys, uuidv7 for uuid keys")
	cmd.Flags().StringVar(timeColumn, "time-column", "", "creation-time column: new keys from its value, in creation order")
}

func (o *migratePlanOptions) run(cmd *cobra.Command, conn *pgx.Conn) error {
	p, err := migrate.Inspect(cmd.Context(), conn, migrate.Options{Table: o.table, To: o.to, TimeColumn: o.timeColumn})
	var shapes *migrate.ShapeError
	if errors.As(err, &shapes) && p != nil {
		// The plan lists what is refused, with the workarounds.
		if werr := p.Write(cmd.OutOrStdout()); werr != nil {
			return werr
		}
		return shapes.Brief()
	}
	if err != nil {
		return migrateErr(err)
	}
	return p.Write(cmd.OutOrStdout())
}

// migrateRunOptions are run's: migrate's Options.
type migrateRunOptions struct {
	*migrateTarget
	opt migrate.Options
}

func newMigrateRunCmd(t *migrateTarget) *cobra.Command {
	o := &migrateRunOptions{migrateTarget: t}
	cmd := t.command("run", "Migrate the table, or resume an interrupted migration", o.run)
	migrateTargetFlags(cmd, &o.opt.To, &o.opt.TimeColumn)
	f := cmd.Flags()
	f.IntVar(&o.opt.Batch, "batch", migrate.DefaultBatch, "rows per backfill transaction (with --chunk-time: of the first)")
	f.DurationVar(&o.opt.ChunkTime, "chunk-time", 0, "size batches to take about this long each, within [batch/10, 10×batch] (0: fixed --batch)")
	f.DurationVar(&o.opt.MaxLag, "max-lag", migrate.DefaultMaxLag, "wait before a batch while a standby's replay lag is over this")
	f.IntVar(&o.opt.MaxActive, "max-active", 0, "wait before a batch while more client backends than this are active (0: no limit)")
	f.BoolVar(&o.opt.DryRun, "dry-run", false, "print the plan and the DDL; change nothing")
	f.BoolVar(&o.opt.StartOver, "yes", false, "after revert: drop what the reverted migration left and migrate anew")
	return cmd
}

func (o *migrateRunOptions) run(cmd *cobra.Command, conn *pgx.Conn) error {
	opt := o.opt
	opt.Table = o.table
	opt.Log = stepLog(cmd.OutOrStdout())
	if !opt.DryRun {
		pr := newMigrateBars(cmd.ErrOrStderr())
		defer pr.Close()
		opt.Progress = pr
		opt.OnThrottle = func(th migrate.Throttle) { pr.line(o.throttleLine(th)) } // above the bar
	}
	p, err := migrate.Run(cmd.Context(), conn, opt)
	if err != nil {
		return migrateErr(err)
	}
	if opt.DryRun {
		return p.WriteDryRun(cmd.OutOrStdout())
	}
	fmt.Fprint(cmd.OutOrStdout(), verifyHint(o.dsn, o.fromEnv, o.table))
	return nil
}

// throttleLine is run's line when the backfill waits or goes on.
func (o *migrateRunOptions) throttleLine(th migrate.Throttle) string {
	if !th.Hold {
		return fmt.Sprintf("idgen: going on after %v (lag %v, %d active backends)",
			th.Waited.Round(100*time.Millisecond), th.Lag.Round(time.Millisecond), th.Active)
	}
	switch {
	case th.Field == "Options.MaxLag":
		maxLag := o.opt.MaxLag
		if maxLag == 0 {
			maxLag = migrate.DefaultMaxLag
		}
		return fmt.Sprintf("idgen: waiting: replication lag %v over %s %v", th.Lag.Round(time.Millisecond), migrateFlags[th.Field], maxLag)
	case th.Field == "Options.MaxActive":
		return fmt.Sprintf("idgen: waiting: %d active backends over %s %d", th.Active, migrateFlags[th.Field], o.opt.MaxActive)
	case th.Paused:
		return fmt.Sprintf("idgen: waiting: paused (idgen migrate resume --table %s goes on)", shellQuote(o.table))
	}
	return "idgen: waiting: " + th.Reason
}

func (t *migrateTarget) verify(cmd *cobra.Command, conn *pgx.Conn) error {
	r, err := migrate.Verify(cmd.Context(), conn, t.table)
	if err != nil {
		return migrateErr(err)
	}
	if err := r.Write(cmd.OutOrStdout()); err != nil {
		return err
	}
	return r.Err()
}

// migrateSetOptions are pause's and resume's: the Setting they apply.
type migrateSetOptions struct {
	*migrateTarget
	name    string // the subcommand: pause or resume
	setting migrate.Setting
}

func newMigrateSetCmd(t *migrateTarget, name, short string, s migrate.Setting) *cobra.Command {
	o := &migrateSetOptions{migrateTarget: t, name: name, setting: s}
	cmd := t.command(name, short, o.run)
	if s.Resume {
		cmd.Flags().IntVar(&o.setting.Batch, "batch", 0, "new rows per batch (0: unchanged)")
		cmd.Flags().DurationVar(&o.setting.ChunkTime, "chunk-time", 0, "new time per batch (0: unchanged)")
	}
	return cmd
}

func (o *migrateSetOptions) run(cmd *cobra.Command, conn *pgx.Conn) error {
	if err := migrate.Set(cmd.Context(), conn, o.table, o.setting); err != nil {
		return migrateErr(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: recorded; a running migration of %s takes it before its next batch\n", o.name, o.table)
	return nil
}

func (t *migrateTarget) status(cmd *cobra.Command, conn *pgx.Conn) error {
	st, err := migrate.GetStatus(cmd.Context(), conn, t.table)
	if err != nil {
		return migrateErr(err)
	}
	return st.Write(cmd.OutOrStdout())
}

func (t *migrateTarget) revert(cmd *cobra.Command, conn *pgx.Conn) error {
	took, err := migrate.Revert(cmd.Context(), conn, t.table)
	if err != nil {
		return migrateErr(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "reverted %s to its old keys (the swap back took %v); the new keys stay in *_idgen_new columns: "+
		"idgen migrate discard drops them, idgen migrate run --yes starts over\n", t.table, took.Round(time.Millisecond))
	return nil
}

func (t *migrateTarget) discard(cmd *cobra.Command, conn *pgx.Conn) error {
	if err := migrate.Discard(cmd.Context(), conn, t.table); err != nil {
		return migrateErr(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "discarded the reverted migration of %s: its new keys, mapping table, triggers and state are dropped; the table is on its old keys as before\n", t.table)
	return nil
}

// migrateYesOptions are finish's and abort's: the confirmation.
type migrateYesOptions struct {
	*migrateTarget
	yes bool
}

// newMigrateYesCmd returns finish or abort: run, with --yes (yesUsage).
func newMigrateYesCmd(t *migrateTarget, use, short, yesUsage string, run func(*migrateYesOptions, *cobra.Command, *pgx.Conn) error) *cobra.Command {
	o := &migrateYesOptions{migrateTarget: t}
	cmd := t.command(use, short, func(cmd *cobra.Command, conn *pgx.Conn) error { return run(o, cmd, conn) })
	cmd.Flags().BoolVar(&o.yes, "yes", false, yesUsage)
	return cmd
}

func (o *migrateYesOptions) finish(cmd *cobra.Command, conn *pgx.Conn) error {
	r, err := migrate.Finish(cmd.Context(), conn, o.table, o.yes)
	if r != nil {
		if werr := r.Write(cmd.OutOrStdout()); werr != nil {
			return werr
		}
	}
	if err != nil {
		return migrateErr(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "finished %s: the migration's leftover key columns, mapping table, triggers and state are dropped\n", o.table)
	return nil
}

func (o *migrateYesOptions) abort(cmd *cobra.Command, conn *pgx.Conn) error {
	if err := migrate.Abort(cmd.Context(), conn, o.table, o.yes); err != nil {
		return migrateErr(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "aborted the migration of %s: what it added is dropped, the table is as it was\n", o.table)
	return nil
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

var dsnKVPassword = lazyre.MustCompile(`(^|\s)password\s*=\s*('(\\.|[^'\\])*'|\S*)`)

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
	out := dsnKVPassword().ReplaceAllString(dsn, "")
	return strings.TrimSpace(out), out != dsn
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
