package idgen

import "context"

// A Generator issues unique IDs of one Scheme. Implementations are safe for
// concurrent use.
type Generator interface {
	// Next returns a new ID. It may block (sequence exhausted within a tick,
	// clock rollback under a waiting policy, a store round trip) and honours
	// ctx while it does.
	Next(ctx context.Context) (ID, error)

	// Scheme describes the IDs Next returns.
	Scheme() *Scheme
}

// A Batcher is a Generator that can issue many IDs in one step, cheaper per ID
// than calling Next repeatedly. Detect it with a type assertion, or call NextN.
type Batcher interface {
	// NextN fills dst with new IDs in increasing order and returns how many it
	// wrote. It returns n < len(dst) only together with a non-nil error.
	NextN(ctx context.Context, dst []ID) (int, error)
}

// NextN fills dst from g, in one step when g is a Batcher and by calling Next
// otherwise. It returns n < len(dst) only together with a non-nil error.
func NextN(ctx context.Context, g Generator, dst []ID) (int, error) {
	if b, ok := g.(Batcher); ok {
		return b.NextN(ctx, dst)
	}
	for i := range dst {
		id, err := g.Next(ctx)
		if err != nil {
			return i, err
		}
		dst[i] = id
	}
	return len(dst), nil
}
