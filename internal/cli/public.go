package cli

import (
	"os"

	"github.com/idgenkit/idgen/strategies"
)

// The public strategy reads its keys from the environment variable its
// spec names (key_env, default $IDGEN_PUBLIC_KEY): the CLI is the one
// place that reads the environment.
func init() { strategies.LookupEnv = os.LookupEnv }
