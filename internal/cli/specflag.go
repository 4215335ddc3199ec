package cli

import "github.com/spf13/cobra"

// The strategy flag is -s/--spec in every command that takes specs. The
// spellings bench (-s/--strategies) and compare (--strategies) had before
// stay as hidden aliases: scripts keep working, and --help and the
// "did you mean" suggestions show the one spelling.

// hiddenAlias adds to cmd the hidden flag old, which sets the value of
// its flag name.
func hiddenAlias(cmd *cobra.Command, name, old string) {
	f := cmd.Flags()
	f.Var(f.Lookup(name).Value, old, "the old spelling of --"+name)
	_ = f.MarkHidden(old) // old exists: it was added on the line above
}

// changed reports whether the flag name or one of its aliases was given.
func changed(cmd *cobra.Command, name string, aliases ...string) bool {
	for _, n := range append([]string{name}, aliases...) {
		if cmd.Flags().Changed(n) {
			return true
		}
	}
	return false
}
