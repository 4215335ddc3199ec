package strategies

import (
	"fmt"
	"strconv"
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
