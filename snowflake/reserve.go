package snowflake

import "context"

// Reserve takes up to want sequence numbers of one tick, by the same
// lock-free compare-and-swap as Next, and returns the tick (ticks since the
// layout's epoch), the first sequence number and how many it took: 1 <= n <=
// max(want, 1). The caller composes IDs from them; it is the hook for
// schemes that put other fields around the Snowflake core's time and
// sequence, such as flake128's 48-bit worker ID between a 64-bit timestamp
// and a 16-bit sequence. The node fields of the generator's own layout are
// not involved.
//
// Reserve waits, fails and persists the high-water mark exactly as Next
// does, and returns the same errors. A layout with a clockseq field is
// refused (ErrInvalidLayout): the numbers are unique only with its value.
func (g *Generator) Reserve(ctx context.Context, want uint64) (tick int64, seq, n uint64, err error) {
	if g.p.csBits > 0 {
		return 0, 0, 0, invalid("Reserve does not return the clockseq field's value; use Next or NextN")
	}
	tick, seq, n, _, err = g.reserve(ctx, max(want, 1))
	return tick, seq, n, err
}
