package strategies

import (
	"fmt"
	"strconv"

	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/redact"
)

// nodeID returns the node ID (worker, machine) a strategy uses: the
// Options' WorkerID when set, else the spec's key, else def. Either must be
// an integer in [0, max]. Errors wrap ErrSpec and name EnvWorkerID or the
// key, and the range; a bad key's is a *SpecError.
func nodeID(p *Params, key string, def, max uint64) (uint64, error) {
	if w := p.opts.WorkerID; w != "" {
		v, err := strconv.ParseUint(w, 10, 64)
		if err != nil || v > max {
			return 0, fmt.Errorf("%w: %s: %s=%q: want an integer in [0, %d]", ErrSpec, p.strategy, EnvWorkerID, w, max)
		}
		return v, nil
	}
	v, ok := p.values[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > max {
		return 0, p.bad(key, v, fmt.Sprintf("an integer in [0, %d]", max))
	}
	return n, nil
}

// workerIDSet reports whether the Options override the worker ID.
func (p *Params) workerIDSet() bool { return p.opts.WorkerID != "" }

// A WorkerConflictError reports a worker ID given twice: by a worker
// source (the worker_source key) and by the spec's worker key (machine for
// sonyflake; a layout's snowflake.Layout.WorkerField), or by
// Options.WorkerID (IDGEN_WORKER_ID in idgen's CLI) beside a source other
// than env, which reads it. Neither may silently win: a fixed ID beside a
// lease could issue another node's IDs. It wraps ErrSpec; New returns it
// inside a *SpecError naming the key (worker_source for Options.WorkerID).
//
// The precedence, in full: Options.WorkerID overrides the spec's worker
// key; a worker source is refused beside either.
type WorkerConflictError struct {
	Strategy string // the spec's strategy: snowflake, sonyflake, flake128
	Key      string // the worker key ("worker", "machine"), or EnvWorkerID for Options.WorkerID
	Value    string // its value, cut to about 64 bytes
	Source   string // the worker_source URL, cut to about 64 bytes, passwords masked
}

func (e *WorkerConflictError) Error() string {
	hint := ""
	if e.Key == EnvWorkerID {
		hint = " (worker_source=env reads " + EnvWorkerID + ")"
	}
	return fmt.Sprintf("%v: %s: %s=%s and worker_source=%s both set the worker ID; give one%s", ErrSpec, e.Strategy, e.Key, e.Value, e.Source, hint)
}

func (e *WorkerConflictError) Unwrap() error { return ErrSpec }

// sourceConflict refuses p's worker_source beside p's key, which sets the
// same worker ID, or beside the Options' WorkerID when the override
// applies to this field (override) and the source is not env. Nil without
// a worker_source.
func (p *Params) sourceConflict(key string, override bool) error {
	src, ok := p.values["worker_source"]
	if !ok {
		return nil
	}
	e := &WorkerConflictError{Strategy: p.strategy, Source: echo.Cut(redact.Spec(src))}
	switch {
	case p.Has(key):
		e.Key, e.Value = key, echo.Cut(p.String(key, ""))
		return specError(p.spec, key, p.String(key, ""), e)
	case override && p.opts.WorkerID != "" && src != "env":
		e.Key, e.Value = EnvWorkerID, echo.Cut(p.opts.WorkerID)
		return specError(p.spec, "worker_source", src, e)
	}
	return nil
}
