package snowflake

// Close closes the Config's Closer, when there is one: under a worker ID
// source that is the Lease, it releases the worker ID, and Next then fails
// with idgen.ErrLeaseLost. A Generator without a Closer holds nothing;
// Close returns nil.
func (g *Generator) Close() error {
	if g.closer == nil {
		return nil
	}
	return g.closer.Close()
}
