package cli_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/internal/cli"
	"github.com/idgenkit/idgen/snowflake"
)

// runEnv runs the command with env as its environment and clock as its
// clock (nil: the system clock), as cli.Run does for a test.
func runEnv(env map[string]string, clock *idgentest.Clock, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	e := &cli.Env{In: strings.NewReader(""), Out: &out, Err: &errb,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	if clock != nil {
		e.Clock = clock
	}
	code = cli.Run(args, e)
	return out.String(), errb.String(), code
}

// TestEnvInjected checks that the commands read the environment and the
// clock of the Env they are built from, not the process's: the worker ID
// of gen and serve's spec options, DATABASE_URL of migrate, and the time
// inspect reads an ID's time against.
func TestEnvInjected(t *testing.T) {
	t.Setenv("IDGEN_WORKER_ID", "3") // the process's, which Run must not read
	t.Setenv("DATABASE_URL", "")

	out, errs, code := runEnv(map[string]string{"IDGEN_WORKER_ID": "7"}, nil, "gen", "-s", "snowflake?preset=twitter", "--worker-source", "env")
	if code != 0 {
		t.Fatalf("gen --worker-source env exit %d: %s", code, errs)
	}
	l, _ := snowflake.Preset("twitter")
	v, _ := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	p, _ := l.Decompose(v)
	if w, _ := p.Node("worker"); w != 7 {
		t.Errorf("gen --worker-source env with the Env's IDGEN_WORKER_ID=7 (the process's 3): worker %d; want 7", w)
	}

	_, errs, code = runEnv(map[string]string{"DATABASE_URL": "not a dsn"}, nil, "migrate", "status", "--table", "t")
	if code != 2 || !strings.Contains(errs, `--dsn "not a dsn": not a PostgreSQL URL`) {
		t.Errorf("migrate status with the Env's DATABASE_URL: exit %d, %q; want 2 naming that DSN", code, errs)
	}
	_, errs, code = runEnv(nil, nil, "migrate", "status", "--table", "t")
	if code != 2 || !strings.Contains(errs, "--dsn is required (or set DATABASE_URL)") {
		t.Errorf("migrate status with an empty Env: exit %d, %q; want 2, --dsn is required", code, errs)
	}

	// The default layout's epoch, 2026-01-01: an ID of an hour later is
	// from the future on a clock that reads the epoch.
	def, _ := snowflake.Preset("default")
	id, _ := def.Compose(snowflake.Parts{Tick: time.Hour.Milliseconds()})
	clock := idgentest.NewClock(snowflake.DefaultEpoch())
	out, errs, code = runEnv(nil, clock, "inspect", strconv.FormatUint(id, 10))
	if code != 0 || !strings.Contains(out, "time 2026-01-01T01:00:00Z is after now (2026-01-01T00:00:00Z)") {
		t.Errorf("inspect with the Env's clock at the epoch: exit %d, %q, %q; want the ID an hour after now", code, out, errs)
	}
}
