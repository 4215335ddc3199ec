package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/idgenkit/idgen/migrate"
)

func init() { addCommand(newMigrateCmd) }

func newMigrateCmd() *cobra.Command {
	var (
		dsn string
		opt migrate.Options
	)
	connect := func(cmd *cobra.Command) (*pgx.Conn, error) {
		if dsn == "" {
			dsn = os.Getenv("DATABASE_URL")
		}
		if dsn == "" {
			return nil, badInput(errors.New("--dsn is required (or set DATABASE_URL), e.g. postgres://user@host:5432/db"))
		}
		if opt.Table == "" {
			return nil, badInput(errors.New("--table is required"))
		}
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, badInput(fmt.Errorf("--dsn: %w", err))
		}
		return pgx.ConnectConfig(cmd.Context(), cfg)
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
			return f(cmd, conn)
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
				fmt.Fprintf(cmd.OutOrStdout(), "done; check it with: idgen migrate verify --table %s\n", opt.Table)
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
