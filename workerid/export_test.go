package workerid

import "time"

// MarkAhead returns the high-water mark the lease has written ahead for
// its current identity, as far as the store acknowledged it (zero: none
// yet, or no identity held). Tests that cut the store wait for it to
// land first: a renewal is published before its mark is written.
func (l *lease) MarkAhead() time.Time {
	ident := l.cur.Load()
	l.markMu.Lock()
	defer l.markMu.Unlock()
	if ident == nil || l.markGen != ident.Generation {
		return time.Time{}
	}
	return l.ahead
}
