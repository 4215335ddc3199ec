package strategies

import (
	"sync/atomic"

	"github.com/idgenkit/idgen"
)

// closeFlag is the Close of a generator that holds nothing (no store, no
// goroutine, no lease): embedded, it makes the generator an io.Closer, so
// that every generator New returns is one, and after Close its Next, NextN
// and NewAt return idgen.ErrClosed, as a store-backed generator's do.
type closeFlag struct{ closed atomic.Bool }

// Close marks the generator closed. It holds nothing to release and
// returns nil, also when called again.
func (c *closeFlag) Close() error {
	c.closed.Store(true)
	return nil
}

// check returns idgen.ErrClosed after Close, else nil.
func (c *closeFlag) check() error {
	if c.closed.Load() {
		return idgen.ErrClosed
	}
	return nil
}
