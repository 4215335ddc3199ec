package cli

import (
	"io"
	"os"
	"time"

	"github.com/idgenkit/idgen"
)

// An Env is what the idgen command takes from its process, as cli/cli's
// cmdutil.Factory is for gh: the three streams, the environment and the
// clock. newRoot passes it to each command's constructor; the streams
// also become the commands' cobra streams (cmd.OutOrStdout() is Out).
// Main builds it from the process; a test gives its own to Run.
type Env struct {
	In       io.Reader
	Out, Err io.Writer
	// LookupEnv reads an environment variable (os.LookupEnv under Main);
	// nil means an empty environment.
	LookupEnv func(key string) (string, bool)
	// Clock tells the time of day (idgen.SystemClock() under Main); nil
	// means the system clock.
	Clock idgen.Clock
}

// processEnv is the Env of the process: its environment and clock, with
// the streams given.
func processEnv(stdin io.Reader, stdout, stderr io.Writer) *Env {
	return &Env{In: stdin, Out: stdout, Err: stderr, LookupEnv: os.LookupEnv, Clock: idgen.SystemClock()}
}

// getenv returns the environment variable key, "" when it is not set.
func (e *Env) getenv(key string) string {
	if e.LookupEnv == nil {
		return ""
	}
	v, _ := e.LookupEnv(key)
	return v
}

// lookupEnv is LookupEnv, nil meaning an empty environment.
func (e *Env) lookupEnv(key string) (string, bool) {
	if e.LookupEnv == nil {
		return "", false
	}
	return e.LookupEnv(key)
}

// now reads the clock.
func (e *Env) now() time.Time { return idgen.ClockOr(e.Clock).Now() }
