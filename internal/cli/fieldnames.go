package cli

import "strings"

// The compare and migrate packages name their Config, Options and Setting
// fields in errors and messages; the commands print their flags instead.
var (
	compareFlags = strings.NewReplacer(
		"set Config.DSN to mysql://...", "give --dsn mysql://...",
		"set Config.DSN to use", "give --dsn to use",
		"Config.DSN", "--dsn",
		"Config.Span", "--span",
		"Config.Runs", "--runs",
		"Config.Seed", "--seed",
		"Config.PGBin", "--pg-bin",
		"Config.Rows", "--rows",
		"Config.MemoryRatio", "--memory-ratio",
	)
	migrateFlags = strings.NewReplacer(
		"Options.To", "--to",
		"Options.TimeColumn", "--time-column",
		"Options.Batch", "--batch",
		"Options.ChunkTime", "--chunk-time",
		"Options.MaxLag", "--max-lag",
		"Options.MaxActive", "--max-active",
		"Setting.Batch", "--batch",
		"Setting.ChunkTime", "--chunk-time",
		"call Finish with yes", "give --yes",
		"call Abort with yes", "give --yes",
		"undo the migration with Abort", "undo the migration with idgen migrate abort --yes",
		"(Set with Resume on ", "(idgen migrate resume --table ",
		"Finish on ", "idgen migrate finish --table ",
		"then Run migrates anew", "then run migrates anew",
	)
)

// fieldFlagError is an error of compare or migrate as the command prints it:
// its text with the fields' names replaced by the flags'. errors.Is and
// errors.As see the original.
type fieldFlagError struct {
	err error
	msg string
}

func (e *fieldFlagError) Error() string { return e.msg }
func (e *fieldFlagError) Unwrap() error { return e.err }

// withFlags returns err with the names in r replaced by the flags', or
// err itself when it names none (and nil for nil).
func withFlags(err error, r *strings.Replacer) error {
	if err == nil {
		return nil
	}
	if msg := r.Replace(err.Error()); msg != err.Error() {
		return &fieldFlagError{err, msg}
	}
	return err
}
