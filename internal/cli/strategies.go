package cli

import (
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/idgenkit/idgen/strategies"
	"github.com/spf13/cobra"
)

func newStrategiesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "strategies",
		Short: "List the strategies a spec can name, with their keys",
		Long: "A spec is name?key=value&key=value, for example snowflake?preset=twitter&worker=7.\n" +
			"IDGEN_WORKER_ID in the environment overrides the worker key (worker, machine) of every strategy that has one,\n" +
			"and is what worker_source=env reads. A worker source (worker_source, --worker-source, IDGEN_WORKER_SOURCE)\n" +
			"is refused beside the worker key, and beside IDGEN_WORKER_ID unless it is env.\n" +
			"Every spec also takes " + strategies.EncodingKey + "=NAME: " + strategies.EncodingDoc() + ",\n" +
			"and " + strategies.KeyspaceKey + "=NAME: " + strategies.KeyspaceDoc + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			for _, s := range strategies.List() {
				store := ""
				if s.External {
					store = " (needs a store)"
					if !slices.ContainsFunc(s.Keys, func(k strategies.Key) bool { return k.Name == "dsn" }) {
						store = " (needs a key)"
					}
				}
				fmt.Fprintf(tw, "%s\t%s%s\n", s.Name, s.Doc, store)
				for _, k := range s.Keys {
					fmt.Fprintf(tw, "  %s\t%s\n", k.Name, k.Doc)
				}
			}
			return tw.Flush()
		},
	}
}
