package workerid

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
)

// Lease defaults.
const (
	DefaultTTL       = 30 * time.Second
	DefaultNamespace = "default"
	// MaxLeaseWorkers is the largest worker space a lease hands out from
	// (one PostgreSQL row per worker ID).
	MaxLeaseWorkers = 1 << 16
)

// LeaseConfig configures a lease (PostgreSQL, MySQL, etcd, ZooKeeper or
// Redis). Every field's zero value is usable.
type LeaseConfig struct {
	// Space is the worker ID space and the datacenter ID carried.
	Space
	// Namespace separates independent ID spaces in one table or etcd
	// cluster: /idgen/<namespace>/workers/<id>. Empty means "default".
	Namespace string
	// TTL is how long the lease outlives the last renewal on the server.
	// Zero means 30 s. etcd rounds it up to whole seconds.
	TTL time.Duration
	// RenewEvery is the renewal (keep-alive) interval. Zero means TTL/10
	// (3 s for the default TTL). A store that does not answer for less
	// than LostAfter - RenewEvery (12 s by default) costs no request: the
	// last good renewal was at most RenewEvery before it went away.
	RenewEvery time.Duration
	// LostAfter bounds how long after the start of the last successful
	// renewal the identity is trusted: past it, Identity returns nil. It
	// must be below TTL, so that the node stops issuing before the lease
	// can expire and pass to another node. Zero means TTL/2.
	LostAfter time.Duration
	// StateFile remembers the last worker ID held; it is tried first on
	// the next start, unless its high-water mark is still ahead of the
	// clock and another free ID's has passed. Empty means none.
	StateFile string
	// Owner is written beside the lease for operators. Empty means
	// hostname-pid-random.
	Owner string
	// MaxSkew bounds how far the local clock may be from the store's at
	// start (PostgreSQL: its clock_timestamp(), corrected by half the round
	// trip; etcd: the mean of the wall times its live peers wrote at their
	// last renewal, each advanced by the time since, see Etcd): beyond it,
	// opening the lease fails with ErrClockSkew. Zero means DefaultMaxSkew
	// (10 s); a negative value turns the check off.
	MaxSkew time.Duration
	// Pin, when set, is the one worker ID the lease takes: a node whose
	// worker ID is fixed (by a StatefulSet ordinal, say) but checked
	// against the store. Opening fails with ErrWorkerIDHeld while a live
	// lease holds it, and a lost lease is reacquired under that ID only.
	// Nil means any free ID. It must lie in the space.
	Pin *int64
	// Clock is the lease's clock: it times the renewals (RenewEvery) and
	// the LostAfter deadline, orders the free IDs by their high-water marks
	// at acquire, is compared with the store's clock at start, and, under
	// etcd, gives the wall time written into the lease record at each
	// renewal. The TTL runs on the store's clock. When Clock is an
	// idgen.TimerClock (such as idgentest.Clock), renewals and LostAfter are
	// scheduled on it, so a test moves a lease past LostAfter without
	// waiting; else in real time. Nil means the system clock
	// (idgen.SystemClock).
	Clock idgen.Clock
}

// DefaultMaxSkew is LeaseConfig.MaxSkew when zero.
const DefaultMaxSkew = 10 * time.Second

// now reads the local clock: Clock, or the system clock.
func (c LeaseConfig) now() time.Time { return idgen.ClockOr(c.Clock).Now() }

// checkSkew compares the local clock with the store's, read by serverNow
// between two local readings: the server's reading is taken to fall midway.
// serverNow also names the clock it read, and returns ok false when there
// is none to compare with (no live etcd peer wrote its time): the check
// passes. It returns an error wrapping ErrClockSkew, naming both clocks and
// the skew, when they are more than MaxSkew apart; a serverNow error is
// returned as is.
func (c LeaseConfig) checkSkew(ctx context.Context, serverNow func(context.Context) (t time.Time, store string, ok bool, err error)) error {
	if c.MaxSkew < 0 {
		return nil
	}
	before := c.now()
	server, store, ok, err := serverNow(ctx)
	if err != nil || !ok {
		return err
	}
	after := c.now()
	local := before.Add(after.Sub(before) / 2)
	skew := local.Sub(server)
	if skew.Abs() <= c.MaxSkew {
		return nil
	}
	dir := "ahead of"
	if skew < 0 {
		dir = "behind"
	}
	return fmt.Errorf("%w: the local clock (%s) is %v %s %s (%s); max skew is %v",
		ErrClockSkew, local.UTC().Format(time.RFC3339Nano), skew.Abs().Round(time.Millisecond), dir, store,
		server.UTC().Format(time.RFC3339Nano), c.MaxSkew)
}

func (c LeaseConfig) resolve() (LeaseConfig, error) {
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.RenewEvery == 0 {
		c.RenewEvery = c.TTL / 10
	}
	if c.LostAfter == 0 {
		c.LostAfter = c.TTL / 2
	}
	if c.MaxSkew == 0 {
		c.MaxSkew = DefaultMaxSkew
	}
	switch {
	case c.Workers < 0 || c.Workers > MaxLeaseWorkers:
		return c, fmt.Errorf("%w: Workers %d: a lease space holds 1 to %d worker IDs", ErrConfig, c.Workers, MaxLeaseWorkers)
	case c.TTL < 0 || c.RenewEvery <= 0 || c.LostAfter <= 0:
		return c, fmt.Errorf("%w: TTL %v, RenewEvery %v, LostAfter %v must be positive", ErrConfig, c.TTL, c.RenewEvery, c.LostAfter)
	case !(c.RenewEvery < c.LostAfter && c.LostAfter < c.TTL):
		return c, fmt.Errorf("%w: want RenewEvery (%v) < LostAfter (%v) < TTL (%v)", ErrConfig, c.RenewEvery, c.LostAfter, c.TTL)
	}
	if c.Pin != nil {
		if err := c.Space.check("Pin", *c.Pin); err != nil {
			return c, err
		}
	}
	if c.Owner == "" {
		h, _ := os.Hostname()
		var b [4]byte
		rand.Read(b[:])
		c.Owner = fmt.Sprintf("%s-%d-%s", h, os.Getpid(), hex.EncodeToString(b[:]))
	}
	return c, nil
}

// errGone reports a renewal of a lease that is no longer this node's.
var errGone = errors.New("workerid: lease no longer held")

// A backend is the store of a lease.
type backend interface {
	// acquire takes a free worker ID and returns it with its new
	// generation and stored high-water mark: preferred if its mark has
	// passed (or it has none), else the lowest free ID whose mark has
	// passed, else the free ID whose mark is earliest (preferred, then the
	// lowest, on a tie). An ID whose mark is ahead would make its holder
	// wait the mark out, so a node restarted inside the high-water window
	// takes another ID rather than the one its state file names. Every ID
	// held: idgen.ErrNoWorkerIDs.
	// A mark is ahead or passed by clk, the lease's clock. With w.only it
	// tries w.id alone.
	acquire(ctx context.Context, w want, clk idgen.Clock) (id, gen int64, hw time.Time, err error)
	// renew extends the lease; errGone when it is no longer held.
	renew(ctx context.Context, id, gen int64) error
	// release gives the ID up (nil if it is no longer held). With settle
	// not nil, it also sets the stored mark to *settle, even below the
	// stored one (the mark written ahead gives way to the mark the
	// generator asked for; the zero time clears it), in one atomic step
	// with the release: a mark write cut short by Close, which the store
	// may still apply after its client gave up, lands either before the
	// release (and is replaced) or after it (and finds the lease gone).
	// Two steps let it land between them: TestStateFile/etcd's restart
	// then found the released ID's mark LostAfter + AheadSlack ahead and
	// took another ID, 6 runs in 100 beside two busy loops
	// (TestCutMarkWriteLandsLate).
	release(ctx context.Context, id, gen int64, settle *time.Time) error
	// storeMark persists the high-water mark beside the lease, only while
	// it is held (else errGone); a stored mark never moves down.
	storeMark(ctx context.Context, id, gen int64, mark time.Time) error
	close()
}

// want is the worker ID an acquire prefers: id (-1 for none) is tried
// first; with only, nothing else is (LeaseConfig.Pin).
type want struct {
	id   int64
	only bool
}

// want returns what the next acquire prefers: the pinned ID, or the one
// the state file names.
func (c LeaseConfig) want() want {
	if c.Pin != nil {
		return want{id: *c.Pin, only: true}
	}
	return want{id: readState(c.StateFile)}
}

// heldErr turns a pinned acquire's "every worker ID held" into
// ErrWorkerIDHeld naming the ID.
func (c LeaseConfig) heldErr(err error) error {
	if c.Pin == nil || !errors.Is(err, idgen.ErrNoWorkerIDs) {
		return err
	}
	return fmt.Errorf("%w: worker ID %d of namespace %q (another node runs with it, "+
		"or a holder that died has not reached its ttl %v); a second holder is refused", ErrWorkerIDHeld, *c.Pin, c.Namespace, c.TTL)
}

// acquireOrder sorts the free worker IDs in the order acquire tries them:
// those whose mark (in marks; none counts as passed) is at or before now
// first, w.id among them first, then the lowest; then those whose mark
// is ahead, the earliest mark first. With w.only it returns w.id alone, if
// free.
func acquireOrder(free []int64, marks map[int64]time.Time, w want, now time.Time) []int64 {
	if w.only {
		if slices.Contains(free, w.id) {
			return []int64{w.id}
		}
		return nil
	}
	preferred := w.id
	ahead := func(id int64) bool { return marks[id].After(now) }
	slices.SortStableFunc(free, func(a, b int64) int {
		aa, ba := ahead(a), ahead(b)
		switch {
		case aa != ba:
			if aa {
				return 1
			}
			return -1
		case aa:
			if c := marks[a].Compare(marks[b]); c != 0 {
				return c
			}
		}
		if (a == preferred) != (b == preferred) {
			if a == preferred {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
	return free
}

// held is the lease the renewal goroutine holds.
type held struct {
	ok       bool
	id, gen  int64
	mark     time.Time // the stored high-water mark read at acquire
	deadline time.Time // start of the last good renewal + LostAfter
}

// lease runs a backend: it acquires, renews, marks lost and reacquires.
type lease struct {
	b   backend
	cfg LeaseConfig
	clk idgen.TimerClock // cfg.Clock, or the system clock
	cur atomic.Pointer[idgen.Identity]

	mu     sync.Mutex
	lost   chan struct{} // closed when cur's identity is lost
	timer  idgen.Timer   // fires at the published identity's deadline
	closed bool

	mark time.Time // the stored mark read when cur was acquired, for Load

	// The mark written ahead at each renewal (off the request path), and
	// the highest mark the generator asked Store for, both for the
	// generation gen. Store returns at once for a mark at or below ahead.
	markMu      sync.Mutex
	markGen     int64
	ahead, want time.Time
	// sent is set when a mark was sent ahead for markGen, even one whose
	// answer was lost (a write cut short by Close may have landed).
	sent bool
	// writeMu orders the mark writes, so that a mark written ahead never
	// replaces a higher one Store wrote (etcd's Put would move it down).
	writeMu sync.Mutex

	h held // owned by the renewal goroutine (and open/Close around it)

	// renewed is the start of the published identity's last good renewal
	// (or acquire), unix ns on the lease's clock, for LeaseStatus.
	renewed atomic.Int64

	stop chan struct{}
	done chan struct{}
}

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// open acquires synchronously and starts the renewal goroutine.
func open(ctx context.Context, b backend, cfg LeaseConfig) (*lease, error) {
	l := &lease{b: b, cfg: cfg, clk: idgen.Timers(idgen.ClockOr(cfg.Clock)), lost: closedCh, stop: make(chan struct{}), done: make(chan struct{})}
	start := l.clk.Now()
	id, gen, mark, err := b.acquire(ctx, cfg.want(), l.clk)
	if err != nil {
		b.close()
		return nil, cfg.heldErr(err)
	}
	l.h = held{ok: true, id: id, gen: gen, mark: mark, deadline: start.Add(cfg.LostAfter)}
	if err := writeState(cfg.StateFile, id); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.RenewEvery)
		b.release(ctx, id, gen, nil)
		cancel()
		b.close()
		return nil, err
	}
	l.publish()
	go l.run()
	return l, nil
}

// Identity returns the identity held, or nil while lost. One atomic load.
func (l *lease) Identity() *idgen.Identity { return l.cur.Load() }

// Lost returns a channel closed when the current identity is lost; it is
// already closed while none is held.
func (l *lease) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// Load returns the high-water mark the lease row (or key) held when the
// current identity was acquired: the mark of the last node that issued
// under the worker ID. A snowflake.Generator with the lease as its
// HighWater store reads it at every new identity and applies its rollback
// policy while its clock is behind it.
func (l *lease) Load(context.Context) (time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mark, nil
}

// Store persists mark in the lease, if it is still held: else the error
// wraps idgen.ErrLeaseLost.
//
// A mark at or below the one written ahead at the last renewal is already
// durable: Store returns at once, with no store round trip. A round trip
// lasts at most LostAfter (and ends when the identity is lost or the lease
// closed), whatever ctx's deadline: a store that does not answer within it
// gives an error wrapping idgen.ErrUnavailable.
func (l *lease) Store(ctx context.Context, mark time.Time) error {
	l.markMu.Lock()
	ident := l.cur.Load()
	if ident == nil {
		l.markMu.Unlock()
		return fmt.Errorf("%w: high-water mark not stored", idgen.ErrLeaseLost)
	}
	if l.markGen != ident.Generation {
		l.markGen, l.ahead, l.want, l.sent = ident.Generation, time.Time{}, time.Time{}, false
	}
	if mark.After(l.want) {
		l.want = mark
	}
	covered := !mark.After(l.ahead)
	l.markMu.Unlock()
	if covered {
		return nil
	}
	// The request path waits for the store at most LostAfter, and not past
	// the loss of the identity or Close: an etcd client given a context
	// without a deadline waits for a cut store to come back, for ever.
	lost := l.Lost()
	ctx, cancel := context.WithTimeout(ctx, l.cfg.LostAfter)
	defer cancel()
	go func() {
		select {
		case <-lost:
		case <-l.stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.cur.Load() != ident {
		return fmt.Errorf("%w: worker ID %d generation %d", idgen.ErrLeaseLost, ident.WorkerID, ident.Generation)
	}
	err := l.b.storeMark(ctx, ident.WorkerID, ident.Generation, mark)
	switch {
	case errors.Is(err, errGone) || err != nil && l.cur.Load() != ident:
		return fmt.Errorf("%w: worker ID %d generation %d", idgen.ErrLeaseLost, ident.WorkerID, ident.Generation)
	case err != nil && !errors.Is(err, idgen.ErrUnavailable) && ctx.Err() != nil:
		return fmt.Errorf("%w: workerid: high-water mark not stored within %v (LostAfter): %w", idgen.ErrUnavailable, l.cfg.LostAfter, err)
	case err != nil && !errors.Is(err, idgen.ErrUnavailable):
		return fmt.Errorf("%w: workerid: high-water mark not stored: %w", idgen.ErrUnavailable, err)
	}
	return err
}

// publish makes l.h the current identity, with a timer at its deadline.
func (l *lease) publish() {
	ident := &idgen.Identity{WorkerID: l.h.id, DatacenterID: l.cfg.DatacenterID, Generation: l.h.gen}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.mark = l.h.mark
	l.renewed.Store(l.h.deadline.Add(-l.cfg.LostAfter).UnixNano())
	l.lost = make(chan struct{})
	l.cur.Store(ident)
	l.timer = l.clk.AfterFunc(l.until(l.h.deadline), func() { l.expire(ident) })
}

// expire marks ident lost if it is still current.
func (l *lease) expire(ident *idgen.Identity) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur.Load() == ident {
		l.loseLocked()
	}
}

func (l *lease) loseLocked() {
	if l.cur.Load() != nil {
		l.cur.Store(nil)
		close(l.lost)
		l.lost = closedCh
	}
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}

// extend moves the published identity's deadline to l.h.deadline. It
// reports false when the identity was lost meanwhile.
func (l *lease) extend() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur.Load() == nil || l.timer == nil {
		return false
	}
	if !l.timer.Stop() {
		return false // expire runs now
	}
	l.timer.Reset(l.until(l.h.deadline))
	l.renewed.Store(l.h.deadline.Add(-l.cfg.LostAfter).UnixNano())
	return true
}

// LeaseStatus tells whether an identity is held, how long ago the start
// of its last good renewal (or of the acquire) was, by the lease's clock,
// and LostAfter: the node stops issuing when SinceRenewal reaches it. While
// no identity is held, SinceRenewal is the time since the last one's.
func (l *lease) LeaseStatus() idgen.LeaseStatus {
	st := idgen.LeaseStatus{Held: l.cur.Load() != nil, LostAfter: l.cfg.LostAfter}
	if ns := l.renewed.Load(); ns != 0 {
		st.SinceRenewal = max(0, l.clk.Now().Sub(time.Unix(0, ns)))
	}
	return st
}

// until returns the time from now to t on the lease's clock.
func (l *lease) until(t time.Time) time.Duration { return t.Sub(l.clk.Now()) }

// stepCtx returns a context ending at deadline (on the lease's clock: the
// context's timeout is the time left until it) or at Close.
func (l *lease) stepCtx(deadline time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), l.until(deadline))
	go func() {
		select {
		case <-l.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func (l *lease) run() {
	defer close(l.done)
	ctx, cancel := l.stepCtx(l.attemptEnd(l.clk.Now()))
	l.writeAhead(ctx, l.h.deadline.Add(-l.cfg.LostAfter))
	cancel()
	tick := make(chan struct{}, 1)
	t := l.clk.AfterFunc(l.cfg.RenewEvery, func() {
		select {
		case tick <- struct{}{}:
		default:
		}
	})
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick:
		}
		t.Reset(l.step())
	}
}

// attemptEnd is when one store round trip of the renewal goroutine
// started at now gives up: (LostAfter - RenewEvery) / 2 later, and not past
// the deadline. Two attempts fit in the freeze a lease rides out, so that
// one stuck on a store member that does not answer (frozen, partitioned
// away: its TCP connection stays open) leaves time for a retry on another
// (the etcd backend moves to the next member after a failure); before, an
// attempt waited until the deadline, and one such member lost the lease.
func (l *lease) attemptEnd(now time.Time) time.Time {
	end := now.Add((l.cfg.LostAfter - l.cfg.RenewEvery) / 2)
	if l.h.ok && l.h.deadline.Before(end) {
		return l.h.deadline
	}
	return end
}

// step renews or acquires once and returns the wait before the next step.
func (l *lease) step() time.Duration {
	retry := max(l.cfg.RenewEvery/4, 10*time.Millisecond)
	if l.h.ok {
		start := l.clk.Now()
		ctx, cancel := l.stepCtx(l.attemptEnd(start))
		err := l.b.renew(ctx, l.h.id, l.h.gen)
		cancel()
		switch {
		case err == nil && start.Before(l.h.deadline):
			l.h.deadline = start.Add(l.cfg.LostAfter)
			if !l.extend() {
				// Lost locally meanwhile: give the ID up and acquire
				// again, under a new generation.
				l.giveUp()
				return 0
			}
			ctx, cancel := l.stepCtx(l.attemptEnd(l.clk.Now()))
			l.writeAhead(ctx, start)
			cancel()
			return l.cfg.RenewEvery
		case err == nil || errors.Is(err, errGone) || !l.clk.Now().Before(l.h.deadline):
			l.giveUp()
			return 0
		default:
			return retry // transient: try again before the deadline
		}
	}
	start := l.clk.Now()
	ctx, cancel := l.stepCtx(start.Add(l.cfg.LostAfter))
	id, gen, mark, err := l.b.acquire(ctx, l.cfg.want(), l.clk)
	cancel()
	if err != nil {
		return retry
	}
	l.h = held{ok: true, id: id, gen: gen, mark: mark, deadline: start.Add(l.cfg.LostAfter)}
	writeState(l.cfg.StateFile, id)
	// A generator reads the ID's stored mark (Load) before it issues under
	// the new identity, and waits or fails by its policy while behind it.
	l.publish()
	ctx, cancel = l.stepCtx(l.attemptEnd(l.clk.Now()))
	l.writeAhead(ctx, start)
	cancel()
	return l.cfg.RenewEvery
}

// giveUp marks the identity lost and releases the lease (best effort).
func (l *lease) giveUp() {
	l.mu.Lock()
	l.loseLocked()
	l.mu.Unlock()
	if l.h.ok {
		ctx, cancel := l.stepCtx(l.clk.Now().Add(l.cfg.RenewEvery))
		l.release(ctx)
		cancel()
	}
	l.h = held{}
}

// AheadSlack is how far past the time the node would count itself lost
// the mark written at each renewal reaches: room for a generator whose
// clock runs a little ahead of the lease's.
const AheadSlack = time.Second

// writeAhead stores, beside the lease held in l.h, a mark covering every
// ID the node may issue until it would count itself lost: the renewal's
// start + LostAfter + AheadSlack, and never below the previous holder's
// mark. It runs on the renewal goroutine (or in open), never on the
// request path; a failure only leaves Store to write synchronously.
func (l *lease) writeAhead(ctx context.Context, start time.Time) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	m := start.Add(l.cfg.LostAfter + AheadSlack)
	l.markMu.Lock()
	if l.markGen != l.h.gen {
		l.markGen, l.ahead, l.want, l.sent = l.h.gen, time.Time{}, time.Time{}, false
	}
	for _, o := range []time.Time{l.h.mark, l.want, l.ahead} {
		if o.After(m) {
			m = o
		}
	}
	l.sent = true
	l.markMu.Unlock()
	if l.b.storeMark(ctx, l.h.id, l.h.gen, m) != nil {
		return
	}
	l.markMu.Lock()
	defer l.markMu.Unlock()
	if l.markGen == l.h.gen && m.After(l.ahead) {
		l.ahead = m
	}
}

// release gives up the ID held in l.h. When a mark was sent ahead for it,
// the release also replaces that mark with the highest one the generator
// asked for (or the previous holder's, if higher): the identity is lost, so
// nothing is issued past it, and the next holder of the worker ID need not
// wait out the time written ahead.
func (l *lease) release(ctx context.Context) error {
	l.markMu.Lock()
	m := l.h.mark
	if l.markGen == l.h.gen && l.want.After(m) {
		m = l.want
	}
	wrote := l.markGen == l.h.gen && l.sent
	l.markMu.Unlock()
	if !wrote {
		return l.b.release(ctx, l.h.id, l.h.gen, nil)
	}
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	return l.b.release(ctx, l.h.id, l.h.gen, &m)
}

// Close stops renewals, marks the identity lost and releases the lease
// (waiting at most RenewEvery for the store).
func (l *lease) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.loseLocked()
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	var err error
	if l.h.ok {
		ctx, cancel := context.WithTimeout(context.Background(), l.cfg.RenewEvery)
		err = l.release(ctx)
		cancel()
		l.h = held{}
	}
	l.b.close()
	return err
}
