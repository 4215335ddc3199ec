package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/idgenkit/idgen/compare"
	comparereport "github.com/idgenkit/idgen/compare/report"
	"github.com/spf13/cobra"
)

// compareFlags names the flag that sets each field of compare's Config the
// command takes.
var compareFlags = map[string]string{
	"Config.Strategies":    "--spec",
	"Config.Rows":          "--rows",
	"Config.Writers":       "--writers",
	"Config.Batch":         "--batch",
	"Config.Preload":       "--preload",
	"Config.Runs":          "--runs",
	"Config.Seed":          "--seed",
	"Config.DSN":           "--dsn",
	"Config.SharedBuffers": "--shared-buffers",
	"Config.BufferPool":    "--buffer-pool",
	"Config.PGBin":         "--pg-bin",
	"Config.Scenarios":     "--scenarios",
	"Config.MemoryRatio":   "--memory-ratio",
	"Config.Engine":        "--engine",
	"Config.ReadOps":       "--read-ops",
	"Config.Span":          "--span",
}

func newCompareCmd() *cobra.Command {
	var (
		cfg       compare.Config
		specs     string
		out       string
		reads     bool
		scenarios string
		require   string
		quiet     bool
	)
	cmd := &cobra.Command{
		Use:   "compare [-s a,b,c] [--rows N] [--writers W] [--batch B] [--preload M] [--runs N] [--seed S] [--engine postgres|mariadb|all] [--dsn URL | --shared-buffers SIZE --buffer-pool SIZE --scenarios in-memory,out-of-memory --memory-ratio R --pg-bin DIR] [--reads=false] [--read-ops N] [--span DURATION] [--require 64bit,sortable,opaque,no-coordination,js-safe] [--keep] [-q] [--out DIR]",
		Short: "Measure what each ID scheme costs a PostgreSQL B-tree, side by side",
		Long: `compare inserts the same workload with every strategy into its own table on
the same PostgreSQL server (id PRIMARY KEY in the scheme's native column type,
created_at timestamptz, a 100-byte payload) and prints, next to a bigserial
baseline: rows/s overall and per tenth of the run, batch latency p50/p99, index
and table size, leaf pages, average leaf density and leaf fragmentation
(pgstattuple), page splits (Δ leaf pages, and Btree SPLIT records in the WAL
via pg_walinspect), WAL bytes, full-page images, and index blocks read vs hit.

Each of --writers writers has its own connection, generator and worker ID.
Batches of --batch rows go in by binary COPY; --batch 1 is single-row
autocommit INSERTs. --preload rows go in first, then CHECKPOINT, then the
measured --rows.

Every row runs --runs times (default 3), one trial per round, each round in an
order shuffled by a seeded generator (--seed, printed), so that drift on the
machine hits every row alike. Each figure is the median over the trials, with
a 95 % confidence interval from a seeded bootstrap; a ratio to bigserial whose
interval contains 1 prints as "≈". The harness check sends the keys 1..N
through the harness and has the server generate the same keys, with the same
writers and batches, and prints pass or fail.

After each trial's inserts, compare reads the rows back on one connection
(--reads, on by default; --reads=false turns it off): point lookups of keys
drawn from a sample of all the rows, lookups among the newest 1 %, and, for
keys in creation order (bigserial, time-ordered schemes, uuidv1-swapped), a
range by primary key of the rows created in one second: at most --read-ops
of each kind, and at most ` + compare.DefaultReadTime.String() + ` each. It prints ops/s with their interval
and ratio to bigserial, and the blocks read from outside shared_buffers per
read; a small --shared-buffers shows the reads with the index out of memory.

--span DURATION issues each strategy's keys over that much simulated time
(NewAt, spread evenly over the rows) instead of the run's few seconds of
real time: uuidv1's first field wraps every 429.5 s, so --span 3h shows its
fragmentation, while uuidv6 and uuidv1-swapped (uuidv1's bytes as MySQL's
UUID_TO_BIN(u, 1) stores them) stay in order.

Without --dsn, compare starts a throwaway cluster (initdb/pg_ctl, run as the
postgres user when root, Unix socket in a temporary directory removed
afterwards) with --shared-buffers. With --dsn, the tables live in a new schema
that is dropped afterwards unless --keep.

--engine mariadb runs the same rows on MariaDB/InnoDB (the key is the
clustered index; BIGINT or BINARY(16); multi-row INSERTs of --batch rows):
without --dsn on a throwaway server (mariadb-install-db and mariadbd on a Unix
socket in a temporary directory, as the mysql user when root) with
--buffer-pool as innodb_buffer_pool_size; with --dsn mysql://... in a new
database dropped afterwards. It reports leaf pages (ANALYZE TABLE and
mysql.innodb_index_stats), leaf fill, page splits and merges
(INNODB_METRICS), redo bytes and buffer-pool reads. --engine all runs both.

Without --dsn, every row runs in two scenarios (--scenarios), each on a
throwaway server of its own: in-memory, with --shared-buffers (--buffer-pool)
holding all the data; and out-of-memory, with one buffer sized so that the
bigserial baseline's final table and index are --memory-ratio (8) times it,
and misses going to the device (debug_io_direct = data on PostgreSQL 16 or
later, innodb_flush_method = O_DIRECT on InnoDB; the run checks the server's
open data files for O_DIRECT). Each reports insert ×bs, device reads and
writes per 1,000 inserts (pg_stat_io; Innodb_pages_read/_written), WAL and
full-page images, and the reads after the inserts. --pg-bin DIR chooses the
PostgreSQL binaries (default: the newest found). On PostgreSQL 18 (13) the
rows pg-uuidv7 (DEFAULT uuidv7()) and pg-uuidv4 (DEFAULT gen_random_uuid())
are added, loaded like bigserial.

stdout and report.html start with a decision table: one row per scheme with
its facts (key bytes, order, coordination, random bits, what it reveals,
JavaScript-safe, server-generated) and measured ratios, best first, and one
recommendation. --require keeps the schemes that meet all of 64bit,
sortable, opaque, no-coordination and js-safe.

Progress goes to stderr: one bar per phase on a terminal, otherwise one line
per round with each row's rows/s; -q prints none. A closed pipe (| head), a
closed terminal (SIGHUP), SIGINT and SIGTERM stop the run and remove its
servers.

The default strategies are every registered strategy that needs no external
store. --out DIR writes results.json ({"meta", "results"}), results.csv,
report.html (one self-contained page) and charts (PNG, SVG); a DIR that
cannot be written is refused before the run. Passwords in specs and DSNs
are masked (xxxxx) in everything compare prints and writes.

  idgen compare
  idgen compare -s snowflake,uuidv7,uuidv4 --writers 1 --rows 200000
  idgen compare --require sortable,64bit --scenarios out-of-memory
  idgen compare --dsn postgres://postgres@127.0.0.1:5432/postgres --out results`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			for _, n := range []struct {
				name string
				v    int
			}{{"rows", cfg.Rows}, {"writers", cfg.Writers}, {"batch", cfg.Batch}, {"runs", cfg.Runs}} {
				if n.v <= 0 {
					return badInput(fmt.Errorf("compare: --%s %d: want a positive number", n.name, n.v))
				}
			}
			if cfg.ReadOps <= 0 || cfg.ReadOps > compare.MaxReadOps {
				return badInput(fmt.Errorf("compare: --read-ops %d: want 1 to %d reads of each kind", cfg.ReadOps, compare.MaxReadOps))
			}
			if cfg.Span < 0 || cfg.Span > compare.MaxSpan {
				return badInput(fmt.Errorf("compare: --span %s: want 0 (real time) to %s", cfg.Span, compare.MaxSpan))
			}
			cfg.NoReads = !reads
			if cfg.DSN != "" && f.Changed("shared-buffers") {
				return badInput(errors.New("compare: --shared-buffers sets the throwaway cluster's; with --dsn the server's own setting applies"))
			}
			if cfg.DSN != "" && f.Changed("buffer-pool") {
				return badInput(errors.New("compare: --buffer-pool sets the throwaway MariaDB server's; with --dsn the server's own setting applies"))
			}
			if cfg.DSN != "" {
				cfg.SharedBuffers, cfg.BufferPool = "", ""
			}
			if changed(cmd, "spec", "strategies") {
				cfg.Strategies = compare.SplitSpecs(specs)
			}
			if cfg.DSN != "" && f.Changed("pg-bin") {
				return badInput(errors.New("compare: --pg-bin chooses the throwaway clusters' binaries; with --dsn the server runs"))
			}
			switch {
			case f.Changed("scenarios"):
				cfg.Scenarios = strings.Split(scenarios, ",")
			case cfg.DSN == "":
				cfg.Scenarios = []string{compare.ScenarioInMemory, compare.ScenarioOutOfMemory}
			}
			var reqs []string
			if require != "" {
				reqs = strings.Split(require, ",")
				if err := comparereport.CheckRequirements(reqs); err != nil {
					return badInput(fmt.Errorf("compare: --require: %w", err))
				}
			}
			if out != "" {
				if err := compare.CheckOutDir(out); err != nil {
					return badInput(err)
				}
			}
			pr := newCompareProgress(cmd.Context(), cmd.ErrOrStderr(), quiet)
			cfg.Progress = pr
			cfg.SpecOptions = specOptions()
			cfg.FieldName = func(field string) string { return compareFlags[field] }
			rep, err := compare.Run(cmd.Context(), cfg)
			pr.Close()
			if err != nil {
				return withFlag(err, compareFlags)
			}
			if err := comparereport.WriteTable(cmd.OutOrStdout(), rep, reqs...); err != nil {
				return err
			}
			if out != "" {
				if err := comparereport.WriteFiles(rep, out, reqs...); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "\nwrote %s to %s\n", strings.Join(comparereport.OutputFiles(), ", "), out)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&specs, "spec", "s", "", "comma-separated specs (default: every strategy without an external store: "+strings.Join(compare.DefaultStrategies(), ",")+"); bigserial is always run")
	hiddenAlias(cmd, "spec", "strategies")
	f.IntVar(&cfg.Rows, "rows", compare.DefaultRows, "rows in the measured phase")
	f.IntVar(&cfg.Writers, "writers", compare.DefaultWriters, "concurrent writers, each with its own generator and worker ID")
	f.IntVar(&cfg.Batch, "batch", compare.DefaultBatch, "rows per COPY; 1 means single-row autocommit INSERTs")
	f.IntVar(&cfg.Preload, "preload", 0, "rows inserted before CHECKPOINT and the measured phase")
	f.IntVar(&cfg.Runs, "runs", compare.DefaultRuns, "rounds: each runs every row on a fresh table, in a shuffled order")
	f.Uint64Var(&cfg.Seed, "seed", 0, "seed of the rounds' order and of the bootstrap (default: random, printed)")
	f.StringVar(&cfg.DSN, "dsn", "", "server to use, postgres://... or mysql://... (default: a throwaway server)")
	f.BoolVar(&cfg.Keep, "keep", false, "keep the tables (and the throwaway cluster's directory)")
	f.StringVar(&cfg.SharedBuffers, "shared-buffers", compare.DefaultSharedBuffers, "shared_buffers of the throwaway cluster")
	f.StringVar(&cfg.Engine, "engine", "", "database engine: postgres, mariadb or all (default: mariadb for a mysql:// --dsn, else postgres)")
	f.StringVar(&cfg.BufferPool, "buffer-pool", compare.DefaultBufferPool, "innodb_buffer_pool_size of the throwaway MariaDB server")
	f.StringVar(&out, "out", "", "directory for results.json, results.csv and charts")
	f.BoolVar(&reads, "reads", true, "after each trial's inserts, time point lookups of random and of the newest 1 % of keys, and one second's range by primary key (--reads=false: off)")
	f.IntVar(&cfg.ReadOps, "read-ops", compare.DefaultReadOps, "most reads of each kind per trial (each kind also stops after "+compare.DefaultReadTime.String()+")")
	f.DurationVar(&cfg.Span, "span", 0, "issue the keys over this much simulated time with NewAt (e.g. 3h); 0: real time")
	f.StringVar(&cfg.PGBin, "pg-bin", "", "directory of the PostgreSQL server binaries (initdb, pg_ctl, postgres) for the throwaway clusters (default: the newest found)")
	f.StringVar(&scenarios, "scenarios", compare.ScenarioInMemory+","+compare.ScenarioOutOfMemory, "scenarios on the throwaway servers: in-memory (the buffer holds the data), out-of-memory (the baseline's data is --memory-ratio × the buffer, misses go to the device)")
	f.Float64Var(&cfg.MemoryRatio, "memory-ratio", compare.DefaultMemoryRatio, "out-of-memory scenario: the baseline's final table and index over the buffer")
	f.StringVar(&require, "require", "", "decision table: keep the schemes that meet all of "+strings.Join(comparereport.Requirements(), ", ")+" (comma-separated)")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr (errors only)")
	return cmd
}
