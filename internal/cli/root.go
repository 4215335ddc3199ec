// Package cli implements the idgen command. Each subcommand lives in its own
// file; newRoot adds them, in one list.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/redact"
)

// Exit codes: one rule for every command, stated in idgen help (exitRule)
// and the README.
const (
	exitOK       = 0
	exitFailure  = 1   // a store, server or runtime failure: a store down, a clock rollback, ...
	exitBadInput = 2   // bad input: a flag, a spec, an ID, a file
	exitSignal   = 128 // + the number of the signal that stopped the command: 130 for SIGINT (Ctrl-C)
)

// exitRule is the rule above as idgen help states it.
const exitRule = `Exit codes: 0 ok; 1 a store, server or runtime failure (a store down, a
clock rollback, a failed verify); 2 bad input (flags, specs, IDs, files);
130 when Ctrl-C (SIGINT) stops a command midway (128 + the signal's number
for other signals; serve stopped by a signal exits 0 once its requests in
flight finish, 1 when --shutdown-timeout cut some off).`

// inputError marks an error caused by the user's input where no package
// sentinel says so (a flag's value, an argument count).
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// badInput marks err as the user's input being wrong; nil stays nil.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return inputError{err}
}

// interrupted is the cause of Main's context when SIGINT or SIGTERM stops it.
type interrupted struct{ sig syscall.Signal }

func (i interrupted) Error() string {
	switch i.sig {
	case syscall.SIGINT:
		return "idgen: interrupted (SIGINT)"
	case syscall.SIGHUP:
		return "idgen: stopped (SIGHUP)"
	case syscall.SIGPIPE:
		return "idgen: stopped (SIGPIPE: the reader of its output went away)"
	}
	return "idgen: stopped (SIGTERM)"
}

// exitCode applies the exit-code rule to the error a command returned and
// the cause of its context: 1 when serve's shutdown cut work off
// (errCutOff), a signal's 128+N when one stopped it, else by
// the error's class (every package's sentinels match one): 1 for
// idgen.ErrUnavailable, which wins over the input class in the same chain
// (a spec whose store is down is a failure, not bad input); 2 for
// idgen.ErrInvalid, badInput or a malformed network address
// (*net.AddrError: serve --addr notaport); else 1.
func exitCode(err, cause error) int {
	var sig interrupted
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errCutOff): // serve stopped by a signal, its drain cut short
		return exitFailure
	case errors.As(cause, &sig):
		return exitSignal + int(sig.sig)
	case errors.Is(err, idgen.ErrUnavailable):
		return exitFailure
	case errors.Is(err, idgen.ErrInvalid) || errors.As(err, new(inputError)) || errors.As(err, new(*net.AddrError)):
		return exitBadInput
	}
	return exitFailure
}

// commands returns the constructors of idgen's subcommands.
func commands() []func() *cobra.Command {
	return []func() *cobra.Command{newBenchCmd, newCompareCmd, newConvertCmd, newExplainCmd, newGenCmd, newInspectCmd,
		newMigrateCmd, newSegmentCmd, newTicketCmd, newServeCmd, newStrategiesCmd, newVersionCmd}
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "idgen",
		Short: "Distributed unique IDs: issue, inspect, explain, benchmark, compare, serve, migrate",
		Long: `idgen issues IDs of any scheme (Snowflake layouts, UUIDv4/v7, ULID, KSUID,
Sonyflake, xid, segment and ticket allocators) from a one-line spec such as
"snowflake?preset=twitter&worker=7", decodes them, and measures what each
scheme costs a PostgreSQL B-tree index.

` + exitRule,
		Version: versionText(debug.ReadBuildInfo()),
		// Runnable, so that an unknown command reaches Args (bad input)
		// rather than cobra's untyped error.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			hint := ""
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				hint = "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return fmt.Errorf("unknown command %q%s (idgen help lists the commands)", echo.Cut(args[0]), hint)
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		// Required flags and flag groups are checked here, before cobra's
		// own check, so that a missing flag is bad input.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := cmd.ValidateRequiredFlags(); err != nil {
				return err
			}
			return cmd.ValidateFlagGroups()
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SuggestionsMinimumDistance = 2
	root.SetVersionTemplate("{{.Version}}")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return badInput(flagError(c, err)) })
	for _, f := range commands() {
		root.AddCommand(f())
	}
	markInputErrors(root)
	return root
}

// oneArg accepts exactly one argument, what (an ID, a layout), and says
// which when it is missing or given twice.
func oneArg(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%s: want one argument, %s; got %d (idgen %s --help shows examples)", cmd.Name(), what, len(args), cmd.Name())
		}
		return nil
	}
}

// markInputErrors marks what cobra rejects before a command runs, the
// argument count and the checks of PersistentPreRunE above, as bad input,
// in c and every command under it.
func markInputErrors(c *cobra.Command) {
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error { return badInput(args(cmd, a)) }
	}
	if pre := c.PersistentPreRunE; pre != nil {
		c.PersistentPreRunE = func(cmd *cobra.Command, a []string) error { return badInput(pre(cmd, a)) }
	}
	for _, sub := range c.Commands() {
		markInputErrors(sub)
	}
}

// hangupKey keys Main's *hangups in the context it gives commands.
type hangupKey struct{}

// hangups are what SIGHUP does instead of stopping the command: serve
// reloads its TLS files.
type hangups struct {
	mu  sync.Mutex
	fns []func()
}

// run calls the functions registered, and reports whether there were any.
func (h *hangups) run() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, fn := range h.fns {
		fn()
	}
	return len(h.fns) > 0
}

// onHangup makes SIGHUP call fn rather than stop the command, under Main.
func onHangup(ctx context.Context, fn func()) {
	if h, ok := ctx.Value(hangupKey{}).(*hangups); ok {
		h.mu.Lock()
		h.fns = append(h.fns, fn)
		h.mu.Unlock()
	}
}

// Main runs the idgen command with args and returns the exit code by the
// rule of exitRule: 0 ok, 1 a failure, 2 bad input, 130 on SIGINT. Errors
// print as one line on stderr.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	quietDrivers()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	// SIGHUP (the terminal closed) and SIGPIPE (the reader of stdout or
	// stderr went away: | head) stop a command like SIGTERM, so that it
	// cleans up (compare's throwaway servers); a write to the closed pipe
	// then fails with EPIPE instead of killing the process. With Notify
	// the signal also comes for a write to any closed socket (a store
	// refusing a TLS client): only a broken stdout or stderr stops.
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	defer signal.Stop(sigs)
	hup := &hangups{}
	ctx = context.WithValue(ctx, hangupKey{}, hup)
	go func() {
		for {
			select {
			case s := <-sigs:
				if s == syscall.SIGPIPE && !outputBroken() {
					continue // a store's socket the peer closed: its write fails with EPIPE
				}
				if s == syscall.SIGHUP && hup.run() {
					continue
				}
				cancel(interrupted{s.(syscall.Signal)})
			case <-ctx.Done():
			}
			return
		}
	}()

	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(append([]string{}, args...)) // never nil: cobra reads os.Args[1:] for nil
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	cause := context.Cause(ctx)
	if !errors.As(cause, new(interrupted)) && outputBroken() {
		// The reader of stdout or stderr went away and the command failed
		// on it (a write's EPIPE) before the SIGPIPE above stopped it:
		// which comes first is the scheduler's choice (on a loaded
		// machine, often the error). Either way, it stopped on SIGPIPE.
		cause = interrupted{syscall.SIGPIPE}
	}
	if errors.Is(err, context.Canceled) && errors.As(cause, new(interrupted)) {
		err = cause // "interrupted (SIGINT)", not "context canceled"
	}
	if sig, ok := cause.(interrupted); ok && sig.sig == syscall.SIGPIPE {
		return exitCode(err, cause) // quiet, as a process killed by SIGPIPE is: its reader is gone
	}
	msg := redact.Spec(strings.ReplaceAll(err.Error(), "\n", "; ")) // no password reaches stderr
	// One "idgen: " leads the line; the root package's errors inside it
	// ("serve: -s ...: idgen: layout lifetime exhausted") say it again.
	msg = "idgen: " + strings.ReplaceAll(msg, "idgen: ", "")
	fmt.Fprintln(stderr, msg)
	return exitCode(err, cause)
}
