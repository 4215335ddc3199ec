package cli

import "github.com/idgenkit/idgen/strategies"

// specOptions are the strategies.Options the CLI builds every spec with,
// read from the environment (the CLI is the one place that reads it): the
// worker ID override $IDGEN_WORKER_ID, and the keys of public IDs from the
// variable a public spec names (key_env, default $IDGEN_PUBLIC_KEY).
func (e *Env) specOptions() strategies.Options {
	return strategies.Options{WorkerID: e.getenv(strategies.EnvWorkerID), LookupKey: e.lookupEnv}
}
