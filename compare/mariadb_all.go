package compare

import (
	"context"
	"errors"
)

// runAll is Run for EngineAll.
func runAll(ctx context.Context, cfg Config) (*Report, error) {
	return nil, errors.New("compare: engine all: not yet")
}
