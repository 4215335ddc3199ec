package cli

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/idgenkit/idgen/bench"
	"github.com/idgenkit/idgen/internal/echo"
)

func newBenchCmd(e *Env) *cobra.Command {
	var (
		specs      []string
		duration   time.Duration
		goroutines int
	)
	cmd := &cobra.Command{
		Use:   "bench [-s a,b,c] [--duration 2s] [--goroutines N]",
		Short: "Run strategies side by side and print IDs/s, ns/ID, bytes, order and text length",
		Long: `bench runs each strategy for --duration on --goroutines goroutines, one after
the other, and prints a table: IDs/s (all goroutines), ns/ID (mean time one
goroutine spends per ID), bytes per ID, whether IDs are time-ordered, the
text length, and the PostgreSQL column type. Without -s it runs every
strategy that needs no external store: ` + strings.Join(bench.DefaultSpecs(), ", ") + `;
an empty -s is refused. Passwords in specs are masked (xxxxx) in the output.`,
		Example: `  idgen bench
  idgen bench -s uuidv7,ulid,snowflake --duration 1s --goroutines 4
  idgen bench -s 'snowflake?layout=time:41,worker:10,sequence:12' -s sonyflake`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if duration <= 0 {
				return badInput(fmt.Errorf("--duration %v must be positive", duration))
			}
			if goroutines < 1 {
				return badInput(fmt.Errorf("--goroutines %d must be at least 1", goroutines))
			}
			for _, list := range specs {
				if len(bench.SplitSpecs([]string{list})) == 0 { // blanks and commas only
					return badInput(fmt.Errorf("bench: -s %s: no strategy spec; want comma-separated specs such as uuidv7,ulid (leave -s out to run every strategy without an external store)", echo.Quote(list)))
				}
			}
			rs, err := bench.Run(cmd.Context(), bench.Config{Specs: bench.SplitSpecs(specs), SpecOptions: e.specOptions(), Duration: duration, Goroutines: goroutines})
			if err != nil {
				return err
			}
			return bench.WriteTable(cmd.OutOrStdout(), rs)
		},
	}
	cmd.Flags().StringArrayVarP(&specs, "spec", "s", nil, "comma-separated specs to run (default: all without an external store); repeatable")
	hiddenAlias(cmd, "spec", "strategies")
	cmd.Flags().DurationVar(&duration, "duration", bench.DefaultDuration, "how long each strategy runs")
	cmd.Flags().IntVar(&goroutines, "goroutines", runtime.GOMAXPROCS(0), "goroutines calling Next at once")
	return cmd
}
