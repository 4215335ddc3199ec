package cli

import (
	"errors"
	"fmt"

	"github.com/idgenkit/idgen/segment"
	"github.com/spf13/cobra"
)

func init() { addCommand(newSegmentCmd) }

func newSegmentCmd() *cobra.Command {
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
		instagram           bool
	)
	cmd := &cobra.Command{
		Use:   "init --dsn URL (--tag NAME [--step N] | --instagram [--seq NAME])",
		Short: "Create the segment table and a biz tag, or install the Instagram function; idempotent",
		Long: `init creates what the segment and instagram strategies need. Running it again
changes nothing: an existing biz tag keeps its max_id and step.

  idgen segment init --dsn postgres://postgres@127.0.0.1:5432/app --tag order --step 1000
  idgen segment init --dsn mysql://root@127.0.0.1:3306/app --tag order
  idgen segment init --dsn redis://127.0.0.1:6379/0 --tag order
  idgen segment init --instagram --dsn postgres://postgres@127.0.0.1:5432/app

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
			if instagram {
				if tag != "" || cmd.Flags().Changed("step") {
					return badInput(errors.New("segment init: --instagram takes no --tag or --step"))
				}
				if err := segment.InstallInstagram(ctx, dsn, seq); err != nil {
					return classify(err)
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
				return classify(err)
			}
			defer st.Close()
			t, created, err := st.Init(ctx, tag, step, desc)
			if err != nil {
				return classify(err)
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
	return cmd
}

// classify marks the segment package's input errors (a bad DSN, tag, step
// or name) as bad input; an unreachable store stays a failure.
func classify(err error) error {
	if errors.Is(err, segment.ErrDSN) || errors.Is(err, segment.ErrConfig) {
		return badInput(err)
	}
	return err
}
