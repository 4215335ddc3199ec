package snowflake

// Close ends the generator: from then on Next, NextN, NewAt, Reserve and
// ReserveAt return idgen.ErrClosed (under a lease too, where the lease's
// idgen.ErrLeaseLost would read as temporary). It then closes the Config's
// Closer, when there is one: under a worker ID source that is the Lease,
// which releases the worker ID. A second Close returns nil and closes
// nothing. A call under way when Close is called may still issue its ID.
func (g *Generator) Close() error {
	if g.node.Swap(closedNode) == closedNode {
		return nil
	}
	if g.closer == nil {
		return nil
	}
	return g.closer.Close()
}
