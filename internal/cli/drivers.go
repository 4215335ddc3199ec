package cli

// The store-backed strategies (segment, ticket, instagram) and the worker
// ID sources register with package strategies from their own packages, as
// database/sql's drivers do; the CLI links them all.
import (
	_ "github.com/idgenkit/idgen/segment"
	_ "github.com/idgenkit/idgen/workerid"
)
