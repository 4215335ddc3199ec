package strategies

import (
	"fmt"
	"os"
	"strconv"
)

// nodeID returns the node ID (worker, machine) a strategy uses: the
// IDGEN_WORKER_ID environment variable when set, else the spec's key, else
// def. Either must be an integer in [0, max]; errors wrap ErrSpec and name
// the variable or key and the range.
func nodeID(p *Params, key string, def, max uint64) (uint64, error) {
	if env := os.Getenv(EnvWorkerID); env != "" {
		v, err := strconv.ParseUint(env, 10, 64)
		if err != nil || v > max {
			return 0, fmt.Errorf("%w: %s: %s=%q: want an integer in [0, %d]", ErrSpec, p.strategy, EnvWorkerID, env, max)
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

func envWorkerSet() bool { return os.Getenv(EnvWorkerID) != "" }
