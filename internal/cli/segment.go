package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"
	"github.com/idgenkit/idgen/segment"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// quietDrivers silences the drivers' own log lines ("connection pool:
// failed to dial", "[mysql] packets.go:58 unexpected EOF"), which would
// print to stderr beside idgen's one line of error; Main calls it once.
var quietDrivers = sync.OnceFunc(func() {
	redis.SetLogger(quietRedis{})
	_ = mysql.SetLogger(quietMySQL{})
})

// quietMySQL drops go-sql-driver's log lines.
type quietMySQL struct{}

func (quietMySQL) Print(...any) {}

// quietRedis drops go-redis's log lines (such as "connection pool: failed
// to dial"), which would print to stderr next to idgen's own message.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

func newSegmentCmd(*Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "segment",
		Short: "Set up database-backed allocators: Leaf segments, Instagram IDs",
	}
	cmd.AddCommand(newSegmentInitCmd())
	return cmd
}

func newSegmentInitCmd() *cobra.Command {
	var (
		dsn, tag, desc, seq string
		step                int64
		instagram, createDB bool
	)
	cmd := &cobra.Command{
		Use:   "init --dsn URL (--tag NAME [--step N] | --instagram [--seq NAME])",
		Short: "Create the segment table and a biz tag, or install the Instagram function; idempotent",
		Long: `init creates what the segment and instagram strategies need. Running it again
changes nothing: an existing biz tag keeps its max_id and step.

  idgen segment init --dsn postgres://postgres@127.0.0.1:5432/app --tag order --step 1000 --create-db
  idgen segment init --dsn mysql://root@127.0.0.1:3306/app --tag order --create-db
  idgen segment init --dsn redis://127.0.0.1:6379/0 --tag order
  idgen segment init --instagram --dsn postgres://postgres@127.0.0.1:5432/app

--create-db creates the DSN's database (PostgreSQL, MySQL) when it is missing.

The table is idgen_segments(biz_tag, max_id, step, description, updated_at);
on Redis the keys are idgen:segment:{TAG} and idgen:segment:{TAG}:step.
--instagram creates the sequence (--seq, default idgen_instagram_seq) and the
PL/pgSQL function idgen_instagram_id(seq regclass, shard_id int).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			if dsn == "" {
				return badInput(errors.New("segment init: --dsn is required (postgres://, mysql:// or redis:// URL)"))
			}
			if createDB {
				if err := createDatabase(ctx, out, dsn); err != nil {
					return err
				}
			}
			if instagram {
				if tag != "" || cmd.Flags().Changed("step") {
					return badInput(errors.New("segment init: --instagram takes no --tag or --step"))
				}
				if err := segment.InstallInstagram(ctx, dsn, seq); err != nil {
					return err
				}
				s := seq
				if s == "" {
					s = segment.DefaultInstagramSeq
				}
				fmt.Fprintf(out, "installed %s(seq regclass, shard_id int) and sequence %s on %s\n", segment.InstagramFunc, s, segment.Redact(dsn))
				return nil
			}
			if tag == "" {
				return badInput(errors.New("segment init: --tag is required (or --instagram)"))
			}
			if cmd.Flags().Changed("seq") {
				return badInput(errors.New("segment init: --seq goes with --instagram"))
			}
			if step < 1 || step > segment.MaxStep {
				return badInput(fmt.Errorf("segment init: --step %d: want an integer in [1, %d]", step, segment.MaxStep))
			}
			st, err := segment.Open(ctx, dsn)
			if err != nil {
				return err
			}
			defer st.Close()
			t, created, err := st.Init(ctx, tag, step, desc)
			if err != nil {
				return err
			}
			switch {
			case created:
				fmt.Fprintf(out, "created biz tag %q on %s: max_id %d, step %d\n", t.Name, st, t.MaxID, t.Step)
			case t.Step != step && cmd.Flags().Changed("step"):
				fmt.Fprintf(out, "biz tag %q exists on %s: max_id %d, step %d (unchanged; --step %d ignored)\n", t.Name, st, t.MaxID, t.Step, step)
			default:
				fmt.Fprintf(out, "biz tag %q exists on %s: max_id %d, step %d (unchanged)\n", t.Name, st, t.MaxID, t.Step)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dsn, "dsn", "", "store URL: postgres://, mysql:// or redis://")
	f.StringVar(&tag, "tag", "", "biz tag to create")
	f.Int64Var(&step, "step", segment.DefaultStep, "the tag's step: IDs per segment")
	f.StringVar(&desc, "description", "", "the tag's description")
	f.BoolVar(&instagram, "instagram", false, "install the Instagram PL/pgSQL function instead")
	f.StringVar(&seq, "seq", "", "Instagram: the per-table sequence (default "+segment.DefaultInstagramSeq+")")
	f.BoolVar(&createDB, "create-db", false, "create the DSN's database first when it is missing (PostgreSQL, MySQL)")
	return cmd
}

// createDatabase creates dsn's database when missing and says so.
func createDatabase(ctx context.Context, out io.Writer, dsn string) error {
	created, err := segment.CreateDatabase(ctx, dsn)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(out, "created the database of %s\n", segment.Redact(dsn))
	}
	return nil
}

func newTicketCmd(*Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ticket",
		Short: "Set up Flickr ticket servers: each server's offset and the step",
	}
	cmd.AddCommand(newTicketInitCmd())
	return cmd
}

func newTicketInitCmd() *cobra.Command {
	var (
		dsns, name      string
		reset, createDB bool
	)
	cmd := &cobra.Command{
		Use:   "init --dsn URL1,URL2,... [--name NAME] [--reset] [--create-db]",
		Short: "Give n ticket servers their offsets 1 to n and the step n; idempotent",
		Long: `init sets up the ticket servers the ticket strategy round-robins over: server k
of n issues k, k+n, k+2n, ... Each server keeps its own offset and step (the
PostgreSQL sequence's START and INCREMENT, the MySQL table's comment, the Redis
key idgen:ticket:{NAME}:class), so the order of the list in a spec does not
matter. Every server must answer. A server already set up for this list is
left unchanged; the others get the free offsets, in list order.

--reset renumbers every server (offset k for the k-th URL), for a name that
served another number of servers. It refuses (exit 1) while a generator's
session is live on any of them: stop the generators first (a PostgreSQL or
MySQL generator holds its session until it stops, a Redis one for a minute
after its last ticket). The new tickets start above every ticket any of the
servers issued.

  idgen ticket init --dsn postgres://postgres@127.0.0.1:5432/app,mysql://root@127.0.0.1:3306/app --create-db
  idgen gen -s 'ticket?dsn=postgres://postgres@127.0.0.1:5432/app,mysql://root@127.0.0.1:3306/app'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			if strings.TrimSpace(dsns) == "" {
				return badInput(errors.New("ticket init: --dsn is required: comma-separated postgres://, mysql:// or redis:// URLs"))
			}
			list := strings.Split(dsns, ",")
			if createDB {
				for _, d := range list {
					if err := createDatabase(ctx, out, strings.TrimSpace(d)); err != nil {
						return err
					}
				}
			}
			infos, err := segment.InitTickets(ctx, list, name, reset)
			if err != nil {
				return err
			}
			for _, s := range infos {
				if s.Next == 0 {
					fmt.Fprintf(out, "%s: offset %d, step %d (unchanged)\n", s.DSN, s.Offset, s.Increment)
				} else {
					fmt.Fprintf(out, "%s: offset %d, step %d, next ticket %d\n", s.DSN, s.Offset, s.Increment, s.Next)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dsns, "dsn", "", "comma-separated server URLs: postgres://, mysql:// or redis://")
	f.StringVar(&name, "name", segment.DefaultTicketName, "the sequence, table or key name the servers count in")
	f.BoolVar(&reset, "reset", false, "renumber every server, offset k for the k-th URL; refused while generators use them")
	f.BoolVar(&createDB, "create-db", false, "create each DSN's database first when it is missing (PostgreSQL, MySQL)")
	return cmd
}
