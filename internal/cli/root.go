// Package cli implements the idgen command. Each subcommand lives in its own
// file and registers itself with addCommand from an init function.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailure  = 1 // the work failed: a store down, a clock rollback, ...
	exitBadInput = 2 // the input was wrong: a flag, a spec, an ID
)

// inputError marks an error caused by the user's input; Main exits 2 on it.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// badInput marks err as the user's input being wrong.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return inputError{err}
}

var commands []func() *cobra.Command

// addCommand registers a subcommand constructor; call it from init.
func addCommand(f func() *cobra.Command) { commands = append(commands, f) }

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "idgen",
		Short: "Distributed unique IDs: issue, inspect, explain, benchmark, compare, serve, migrate",
		Long: `idgen issues IDs of any scheme (Snowflake layouts, UUIDv4/v7, ULID, KSUID,
Sonyflake, xid, segment and ticket allocators) from a one-line spec such as
"snowflake?preset=twitter&worker=7", decodes them, and measures what each
scheme costs a PostgreSQL B-tree index.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return badInput(flagError(err)) })
	for _, f := range commands {
		root.AddCommand(f())
	}
	return root
}

// Main runs the idgen command with args and returns the exit code: 0, 1 when
// the work failed, 2 when the input was wrong. Errors print as one line.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	if !strings.HasPrefix(msg, "idgen: ") {
		msg = "idgen: " + msg
	}
	fmt.Fprintln(stderr, msg)
	if errors.As(err, new(inputError)) || strings.HasPrefix(err.Error(), "unknown command") ||
		strings.Contains(err.Error(), "accepts ") || strings.Contains(err.Error(), "requires ") {
		return exitBadInput
	}
	return exitFailure
}
