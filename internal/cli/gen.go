package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/strategies"
	"github.com/spf13/cobra"
)

// countWant is what gen's -n takes.
const countWant = "an integer of at least 1"

func newGenCmd(e *Env) *cobra.Command {
	var (
		spec, workerSource string
		n                  int
		format             string
		remote             remoteFlags
	)
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Print new IDs, one per line",
		Example: `  idgen gen -s 'snowflake?preset=twitter&datacenter=1&worker=3' -n 5
  idgen gen -s 'snowflake?layout=time:41,worker:10,sequence:12;tick=1ms&worker=7&rollback=wait-then-fail&max_wait=10ms'
  idgen gen -s uuidv7 -n 3 --format json
  idgen gen -s 'snowflake?preset=twitter&datacenter=1' --worker-source 'postgres://postgres@db:5432/idgen'
  idgen gen --from ids-a:9443 --from https://ids-b:8443 --tls-ca ca.pem --tls-cert client.pem --tls-key client-key.pem -n 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 1 {
				return badInput(fmt.Errorf("-n, --count \"%d\": want %s", n, countWant))
			}
			if format != "text" && format != "json" {
				return badInput(fmt.Errorf("--format %q: want text or json", format))
			}
			if len(remote.from) == 0 && remote.set() {
				return badInput(errors.New("--generator and the --tls-* flags apply to --from"))
			}
			if len(remote.from) > 0 {
				if cmd.Flags().Changed("spec") || workerSource != "" {
					return badInput(errors.New("--from takes the IDs from idgen servers; leave out -s and --worker-source"))
				}
				g, err := remote.dial(cmd.Context(), n)
				if err != nil {
					return err
				}
				defer g.Close()
				return gen(cmd, g, n, format == "json")
			}
			parsed, err := strategies.CheckSpec(spec) // the one parse of -s
			if err != nil {
				return err // Main's exit code: 2
			}
			parsed, origin, err := e.withWorkerSource(parsed, workerSource)
			if err != nil {
				return badInput(err)
			}
			opts := e.specOptions()
			var warnings []string
			opts.Warn = func(msg string) { warnings = append(warnings, msg) }
			g, err := opts.New(cmd.Context(), parsed)
			if err != nil {
				if err, ok := sourceConflict(err, origin); ok {
					return fmt.Errorf("-s %q: %w", echo.Cut(redact.Spec(spec)), err)
				}
				return err // Main's exit code: 2 for a bad spec, 1 for a store down
			}
			if c, ok := g.(io.Closer); ok {
				defer c.Close()
			}
			for _, w := range warnings { // a worker source's (a hostname hash that can collide)
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			return gen(cmd, g, n, format == "json")
		},
	}
	cmd.Flags().StringVarP(&spec, "spec", "s", "snowflake", "strategy spec, name?key=value&... (idgen strategies lists them)")
	cmd.Flags().IntVarP(&n, "count", "n", 1, "how many IDs")
	cmd.Flags().SetAnnotation("count", wantAnnotation, []string{countWant})
	cmd.Flags().StringVar(&format, "format", "text", "text (one ID per line) or json (one object per line)")
	cmd.Flags().StringVar(&workerSource, "worker-source", "", strategies.WorkerSourceDoc+"; sets the spec's worker_source (default $"+envWorkerSource+")")
	remote.register(cmd)
	return cmd
}

// envWorkerSource, when set, stands in for --worker-source where the flag
// is not given, the spec's strategy takes worker_source and the spec does
// not set it.
const envWorkerSource = "IDGEN_WORKER_SOURCE"

// withWorkerSource sets the spec's worker_source to source; an empty
// source means $IDGEN_WORKER_SOURCE's, where it applies
// (strategies.TakesWorkerSource), else leaves spec alone. origin says where
// the source it set came from, for errors: the flag or the variable, with
// the source; "" when it set none.
func (e *Env) withWorkerSource(spec strategies.Spec, source string) (merged strategies.Spec, origin string, err error) {
	origin = "--worker-source " + source
	if source == "" {
		env := e.getenv(envWorkerSource)
		if env == "" || !strategies.TakesWorkerSource(spec) {
			return spec, "", nil
		}
		source, origin = env, "$"+envWorkerSource+" ("+env+")"
	}
	merged, err = strategies.WithWorkerSource(spec, source)
	if err != nil {
		return strategies.Spec{}, "", fmt.Errorf("--worker-source %q: %w", echo.Cut(source), err)
	}
	return merged, origin, nil
}

// sourceConflict returns a *strategies.WorkerConflictError in err about a
// worker source the CLI set (origin, from withWorkerSource) in the user's
// terms, naming the flag or variable instead of the spec key; ok is false
// for any other error. errors.Is and errors.As see the original.
func sourceConflict(err error, origin string) (_ error, ok bool) {
	wc, ok := errors.AsType[*strategies.WorkerConflictError](err)
	if !ok || origin == "" {
		return err, false
	}
	hint := ""
	if wc.Key == strategies.EnvWorkerID {
		via := "--worker-source env"
		if strings.HasPrefix(origin, "$") {
			via = envWorkerSource + "=env"
		}
		hint = " (" + via + " reads " + strategies.EnvWorkerID + ")"
	}
	msg := fmt.Sprintf("%s=%s and %s both set the worker ID; give one%s", wc.Key, wc.Value, redact.Spec(echo.Cut(origin)), hint)
	return &fieldFlagError{err: err, msg: msg}, true
}

// jsonID is one line of gen --format json.
type jsonID struct {
	ID     idgen.ID `json:"id"`
	Scheme string   `json:"scheme"`
	Time   string   `json:"time,omitempty"`
}

func gen(cmd *cobra.Command, g idgen.Generator, n int, asJSON bool) error {
	out := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
	enc := json.NewEncoder(out)
	batch := make([]idgen.ID, min(n, 4096))
	var line []byte
	for left := n; left > 0; {
		if err := cmd.Context().Err(); err != nil { // SIGINT: stop between batches
			out.Flush()
			return err
		}
		k, err := idgen.NextN(cmd.Context(), g, batch[:min(left, len(batch))])
		for _, id := range batch[:k] {
			if asJSON {
				j := jsonID{ID: id, Scheme: id.Scheme().Name}
				if t := id.Time(); !t.IsZero() {
					j.Time = t.UTC().Format(time.RFC3339Nano)
				}
				if err := enc.Encode(j); err != nil {
					return err
				}
				continue
			}
			line, _ = id.AppendText(line[:0])
			out.Write(append(line, '\n'))
		}
		if err != nil {
			out.Flush()
			return err
		}
		left -= k
	}
	return out.Flush()
}
