package snowflake

import (
	"context"
	"fmt"
	"math/bits"
	"sync"
	"time"

	"github.com/idgenkit/idgen"
)

var _ idgen.AtGenerator = (*Generator)(nil)

// NewAt returns an ID whose time field holds t's tick: an ID for a row
// created at t, to backfill keys from a created_at column. It never reads
// the clock and never waits.
//
// NewAt keeps a sequence of its own, apart from Next's: calls for the same
// tick take sequence 0, 1, 2, ...; once the tick's sequence is used up the
// IDs carry the following tick (later than t by at most what the burst
// needs), as Next does when it waits for the next tick. t must not go back
// behind the tick of the previous call: NewAt then returns a
// *idgen.ClockRollbackError (errors.Is idgen.ErrClockRollback), since the
// same tick could be issued twice. Call it in nondecreasing order of t, one
// generator per ordered stream.
//
// The ID carries the generator's node fields; a random field is drawn per ID
// as in Next. Errors: idgen.ErrBeforeEpoch when t is before the epoch,
// idgen.ErrLayoutExhausted when t's tick does not fit the time field.
func (g *Generator) NewAt(t time.Time) (idgen.ID, error) {
	tick, seq, err := g.ReserveAt(t)
	if err != nil {
		return idgen.ID{}, err
	}
	node, err := g.nodeState(context.Background())
	if err != nil {
		return idgen.ID{}, err
	}
	return g.scheme.FromUint64(g.compose(tick, seq, node.bits)), nil
}

// ReserveAt is NewAt's hook for callers that compose their own IDs, as
// Reserve is Next's: it returns the tick and sequence number NewAt(t) would
// use.
func (g *Generator) ReserveAt(t time.Time) (tick int64, seq uint64, err error) {
	if g.node.Load() == closedNode {
		return 0, 0, idgen.ErrClosed
	}
	now, err := g.p.tickOf(t)
	if err != nil {
		return 0, 0, err
	}
	return g.at.take(g.p, now, t)
}

// tickOf returns the tick holding t, without the overflow of
// time.Time.UnixNano beyond 2262.
func (p *plan) tickOf(t time.Time) (int64, error) {
	e := p.layout.epoch()
	if t.Before(e) {
		return 0, fmt.Errorf("%w: %s is before the epoch %s", idgen.ErrBeforeEpoch,
			t.UTC().Format(time.RFC3339Nano), e.Format(time.RFC3339Nano))
	}
	sec := t.Unix() - e.Unix()
	nsec := int64(t.Nanosecond()) - int64(e.Nanosecond())
	if nsec < 0 {
		sec, nsec = sec-1, nsec+int64(time.Second)
	}
	hi, lo := bits.Mul64(uint64(sec), uint64(time.Second))
	lo, carry := bits.Add64(lo, uint64(nsec), 0)
	hi += carry
	if hi >= uint64(p.tickNs) {
		return 0, p.exhausted(t)
	}
	q, _ := bits.Div64(hi, lo, uint64(p.tickNs))
	if q > uint64(p.timeMax) {
		return 0, p.exhausted(t)
	}
	return int64(q), nil
}

func (p *plan) exhausted(t time.Time) error {
	return fmt.Errorf("%w: %s is past the end of the %d-bit time field (%s)", idgen.ErrLayoutExhausted,
		t.UTC().Format(time.RFC3339Nano), p.timeBits, p.layout.End().Format(time.RFC3339))
}

// atState is the sequence NewAt keeps for one Generator.
type atState struct {
	mu   sync.Mutex
	used bool
	req  int64  // tick of the last t asked for
	tick int64  // tick of the last ID issued (>= req after a spill)
	seq  uint64 // its sequence
}

func (s *atState) take(p *plan, now int64, t time.Time) (int64, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used && now < s.req {
		return 0, 0, &idgen.ClockRollbackError{
			Drift: time.Duration(s.req-now) * time.Duration(p.tickNs),
			Last:  p.layout.TickTime(s.req),
			Now:   t.UTC(),
		}
	}
	switch {
	case !s.used || now > s.tick:
		s.used, s.tick, s.seq = true, now, 0
	case p.seqBits == 0 && p.randBits > 0:
		// Random bits only: any number of IDs per tick, as in Next.
		s.tick, s.seq = max(s.tick, now), 0
	case s.seq < p.seqMax:
		s.seq++
	default:
		if s.tick >= p.timeMax {
			return 0, 0, p.exhausted(p.layout.TickTime(s.tick + 1))
		}
		s.tick, s.seq = s.tick+1, 0
	}
	s.req = now
	return s.tick, s.seq, nil
}
