package segment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
	storedsn "github.com/idgenkit/idgen/internal/dsn"
)

// DefaultCooldown is how long Tickets skips a server that failed.
const DefaultCooldown = time.Second

// Retries of a ticket server that did not answer when DialTickets started:
// the first after TicketRetryMin, each later one after twice the wait, up
// to TicketRetryMax.
const (
	TicketRetryMin = 250 * time.Millisecond
	TicketRetryMax = 10 * time.Second
)

// TicketsConfig configures a Tickets client.
type TicketsConfig struct {
	// Servers are the ticket servers, at least one, each counting in a
	// residue class of its own (see DialTickets).
	Servers []TicketServer
	// Cooldown: a server that failed is skipped for this long, unless every
	// server is. Zero means DefaultCooldown (1 s).
	Cooldown time.Duration
	// Clock times the cooldown. Nil means the system clock
	// (idgen.SystemClock).
	Clock idgen.Clock
}

// Tickets round-robins over n ticket servers and fails over to the next
// when one fails. IDs are unique because each server counts in its own
// residue class; they are not ordered across servers.
type Tickets struct {
	slots    []atomic.Pointer[ticketConn] // nil while server i has not joined
	cooldown time.Duration
	clock    idgen.Clock
	rr       atomic.Uint64
	downTill []atomic.Int64 // unix ns until which server i is skipped
	owned    bool
	closed   atomic.Bool
	stopped  atomic.Pointer[error] // ErrResidue from a server: no more tickets

	// The joiner: a goroutine that connects the servers that did not answer
	// at DialTickets, owned by Close.
	stop    context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	pending map[int]error // server index → why it has not joined yet
	offsets []int64       // the class of each joined server
	dsns    []string      // the DSNs, as given
	name    string
}

type ticketConn struct{ TicketServer }

var (
	_ idgen.Generator = (*Tickets)(nil)
	_ idgen.Batcher   = (*Tickets)(nil)
)

// NewTickets returns a client over cfg.Servers. It does not close them
// (DialTickets' does).
func NewTickets(cfg TicketsConfig) (*Tickets, error) {
	if len(cfg.Servers) == 0 {
		return nil, fmt.Errorf("%w: no servers", errTicketConfig)
	}
	if cfg.Cooldown < 0 {
		return nil, fmt.Errorf("%w: cooldown %v: want >= 0", errTicketConfig, cfg.Cooldown)
	}
	if cfg.Cooldown == 0 {
		cfg.Cooldown = DefaultCooldown
	}
	t := newTickets(len(cfg.Servers), cfg.Cooldown, idgen.ClockOr(cfg.Clock))
	for i, s := range cfg.Servers {
		t.slots[i].Store(&ticketConn{s})
	}
	return t, nil
}

func newTickets(n int, cooldown time.Duration, clock idgen.Clock) *Tickets {
	return &Tickets{slots: make([]atomic.Pointer[ticketConn], n), cooldown: cooldown, clock: clock, downTill: make([]atomic.Int64, n)}
}

// serverKey names the place a ticket server counts in, for finding a
// server listed twice: scheme, host, port, database and (PostgreSQL)
// search_path; the user, password and other parameters do not count.
func serverKey(u *url.URL) string {
	scheme, port := u.Scheme, u.Port()
	switch scheme {
	case "postgres", "postgresql":
		scheme, port = "postgres", cmp.Or(port, "5432")
	case "mysql":
		port = cmp.Or(port, "3306")
	case "redis", "rediss":
		scheme, port = "redis", cmp.Or(port, "6379")
	}
	path := strings.Trim(u.Path, "/")
	if scheme == "redis" {
		path = cmp.Or(path, "0")
	}
	key := scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port + "/" + path
	if scheme == "postgres" {
		key += "?search_path=" + u.Query().Get("search_path")
	}
	return key
}

// checkTicketDSNs trims dsns and refuses an empty list, a DSN that does not
// parse, and a server listed twice (ErrConfig, naming it, password
// redacted).
func checkTicketDSNs(dsns []string) ([]string, error) {
	if len(dsns) == 0 || len(dsns) == 1 && strings.TrimSpace(dsns[0]) == "" {
		return nil, fmt.Errorf("%w: no server DSN", errTicketDSN)
	}
	if len(dsns) > 65535 {
		return nil, fmt.Errorf("%w: %d servers: want 1 to 65535", errTicketConfig, len(dsns))
	}
	out := make([]string, len(dsns))
	seen := make(map[string]int, len(dsns))
	for i, d := range dsns {
		out[i] = strings.TrimSpace(d)
		u, err := storedsn.Parse(out[i])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errTicketDSN, err)
		}
		k := serverKey(u)
		if j, ok := seen[k]; ok {
			return nil, fmt.Errorf("%w: server %q is listed twice (#%d and #%d): list each server once",
				errTicketConfig, Redact(u.String()), j+1, i+1)
		}
		seen[k] = i
	}
	return out, nil
}

// ticketHint is the command that renumbers the servers.
func ticketHint(dsns []string, name string) string {
	r := make([]string, len(dsns))
	for i, d := range dsns {
		r[i] = Redact(d)
	}
	return fmt.Sprintf("`idgen ticket init --dsn '%s' --name %s --reset` (put the passwords back in; it refuses while generators use them)", strings.Join(r, ","), name)
}

// openBackends connects to every DSN at once; a server that does not answer
// has a nil backend and its error.
func openBackends(ctx context.Context, dsns []string, name string) ([]ticketBackend, []error) {
	bs := make([]ticketBackend, len(dsns))
	errs := make([]error, len(dsns))
	var wg sync.WaitGroup
	for i, d := range dsns {
		wg.Go(func() { bs[i], errs[i] = openTicketBackend(ctx, d, name) })
	}
	wg.Wait()
	return bs, errs
}

// readStates reads the state of each server in bs; a server whose state
// cannot be read gets its error in errs (the caller closes it, if it owns
// it).
func readStates(ctx context.Context, bs []ticketBackend, errs []error) []ticketState {
	sts := make([]ticketState, len(bs))
	for i, b := range bs {
		if b != nil {
			sts[i], errs[i] = b.state(ctx, int64(len(bs)))
		}
	}
	return sts
}

// dropFailed closes and forgets the servers of bs whose state could not be
// read.
func dropFailed(bs []ticketBackend, errs []error) {
	for i, b := range bs {
		if b != nil && errs[i] != nil {
			b.Close()
			bs[i] = nil
		}
	}
}

// checkClasses reports a stored class that does not fit len(sts) servers
// (ErrResidue), saying how to renumber them. Servers with a nil backend are
// not counted.
func checkClasses(bs []ticketBackend, sts []ticketState, dsns []string, name string) error {
	n := int64(len(bs))
	owner := map[int64]int{}
	for i, st := range sts {
		if bs[i] == nil || st.Offset == 0 {
			continue
		}
		if st.Increment != n {
			return fmt.Errorf("%w: %s counts in class %d of %d, but %d servers are listed; to renumber them run %s",
				ErrResidue, bs[i], st.Offset, st.Increment, n, ticketHint(dsns, name))
		}
		if j, ok := owner[st.Offset]; ok {
			return fmt.Errorf("%w: %s and %s both count in class %d of %d; to renumber them run %s",
				ErrResidue, bs[j], bs[i], st.Offset, n, ticketHint(dsns, name))
		}
		owner[st.Offset] = i
	}
	return nil
}

// assignFree gives each server without a stored class, in list order, the
// lowest class no server holds, its next ticket above every server's High
// (see ticketBackend.setup for reset). Every server must be connected.
func assignFree(ctx context.Context, bs []ticketBackend, sts []ticketState, reset bool) ([]int64, error) {
	n := int64(len(bs))
	taken := map[int64]bool{}
	var floor int64
	for _, st := range sts {
		taken[st.Offset] = true
		floor = max(floor, st.High)
	}
	if floor > math.MaxInt64-n {
		return nil, fmt.Errorf("ticket: servers have counted to %d: no class of %d fits below 2^63-1", floor, n)
	}
	next := make([]int64, len(bs))
	k := int64(1)
	for i, st := range sts {
		if st.Offset != 0 {
			continue
		}
		for taken[k] {
			k++
		}
		taken[k] = true
		v, err := bs[i].setup(ctx, k, n, floor, reset)
		if err != nil {
			return nil, err
		}
		sts[i].Offset, sts[i].Increment, next[i] = k, n, v
	}
	return next, nil
}

func closeBackends(bs []ticketBackend) {
	for _, b := range bs {
		if b != nil {
			b.Close()
		}
	}
}

// connectTickets checks the name and DSNs, connects to every server at once
// and reads the state of those that answer; a server that does not has a
// nil backend and its error in errs.
func connectTickets(ctx context.Context, dsns []string, name string) (_ []string, _ string, bs []ticketBackend, sts []ticketState, errs []error, err error) {
	cfg := TicketConfig{Name: name}
	if err := cfg.validate(); err != nil {
		return nil, "", nil, nil, nil, err
	}
	name = cfg.Name // the default when empty
	if dsns, err = checkTicketDSNs(dsns); err != nil {
		return nil, "", nil, nil, nil, err
	}
	bs, errs = openBackends(ctx, dsns, name)
	sts = readStates(ctx, bs, errs)
	dropFailed(bs, errs)
	return dsns, name, bs, sts, errs, nil
}

// noClassYet is the error (ErrNotInstalled) of a server that answers
// without a class while another does not answer: it gets one once every
// server answers, which no command run meanwhile can change.
func noClassYet(dsn string) error {
	return &relabelled{Redact(dsn) + " gets its ticket class once every listed server answers", ErrNotInstalled}
}

// DialTickets opens one ticket server per DSN, all counting in the
// sequence, table or key name (DefaultTicketName when empty), and returns
// a client whose Close closes them. Each server keeps its own class
// (offset k and increment n, as `idgen ticket init` or InitTickets set
// them), so the order of dsns does not matter. When every server answers,
// those without a class get the free ones, in list order.
//
// Servers that do not answer are retried in the background, every
// TicketRetryMin to TicketRetryMax, by a goroutine Close stops, and join
// once they answer with a class that fits. DialTickets fails only when no
// server can issue: every server unreachable (ErrUnreachable), or the
// servers that answer have no class while another is down. A server listed
// twice, or a DSN that does not parse, gives ErrConfig or ErrDSN; a stored
// class that does not fit the list gives ErrResidue. Errors name the
// servers with their passwords redacted and say what to run.
func DialTickets(ctx context.Context, dsns []string, name string) (*Tickets, error) {
	dsns, name, bs, sts, errs, err := connectTickets(ctx, dsns, name)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Tickets, error) {
		closeBackends(bs)
		return nil, err
	}
	if err := checkClasses(bs, sts, dsns, name); err != nil {
		return fail(err)
	}
	up := len(bs) - countNil(bs)
	if up == len(bs) {
		if _, err := assignFree(ctx, bs, sts, false); err != nil {
			return fail(err)
		}
	}
	t := newTickets(len(dsns), DefaultCooldown, idgen.SystemClock())
	t.owned, t.dsns, t.name, t.pending, t.offsets = true, dsns, name, map[int]error{}, make([]int64, len(dsns))
	for i, b := range bs {
		switch {
		case b == nil:
			t.pending[i] = errs[i]
		case sts[i].Offset == 0:
			b.Close()
			bs[i] = nil
			t.pending[i] = noClassYet(dsns[i])
		default:
			t.offsets[i] = sts[i].Offset
			t.slots[i].Store(&ticketConn{b})
		}
	}
	if len(t.pending) == len(dsns) {
		return fail(fmt.Errorf("ticket: no server can issue: %w", t.pendingErr()))
	}
	if len(t.pending) > 0 {
		jctx, stop := context.WithCancel(context.Background())
		t.stop, t.done = stop, make(chan struct{})
		go t.join(jctx)
	}
	return t, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func countNil(bs []ticketBackend) int {
	n := 0
	for _, b := range bs {
		if b == nil {
			n++
		}
	}
	return n
}

// pendingErr joins the errors of the servers that have not joined, in list
// order.
func (t *Tickets) pendingErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	idx := make([]int, 0, len(t.pending))
	for i := range t.pending {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	// A server that is down first: one that answers without a class waits
	// for it (noClassYet).
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Compare(b2i(errors.Is(t.pending[a], ErrNotInstalled)), b2i(errors.Is(t.pending[b], ErrNotInstalled)))
	})
	errs := make([]error, len(idx))
	for j, i := range idx {
		errs[j] = t.pending[i]
	}
	return errors.Join(errs...)
}

// join retries the pending servers until all have joined or ctx ends.
func (t *Tickets) join(ctx context.Context) {
	defer close(t.done)
	wait := TicketRetryMin
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if t.joinOnce(ctx) {
			return
		}
		wait = min(2*wait, TicketRetryMax)
	}
}

// joinOnce tries every pending server once and reports whether none is
// left.
func (t *Tickets) joinOnce(ctx context.Context) bool {
	t.mu.Lock()
	var idx []int
	for i := range t.pending {
		idx = append(idx, i)
	}
	t.mu.Unlock()
	slices.Sort(idx)
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// Every server, joined or now answering, for the class checks.
	bs := make([]ticketBackend, len(t.slots))
	errs := make([]error, len(t.slots))
	for i := range t.slots {
		if c := t.slots[i].Load(); c != nil {
			bs[i] = c.TicketServer.(ticketBackend)
		}
	}
	fresh := map[int]bool{}
	for _, i := range idx {
		if b, err := openTicketBackend(actx, t.dsns[i], t.name); err == nil {
			bs[i], fresh[i] = b, true
		} else {
			errs[i] = err
		}
	}
	sts := readStates(actx, bs, errs)
	closeFresh := func() {
		for i := range fresh {
			if bs[i] != nil {
				bs[i].Close()
			}
		}
	}
	unread := false // a joined server did not answer: its class is known, its high mark is not
	for i, b := range bs {
		switch {
		case b == nil || errs[i] == nil:
		case fresh[i]:
			b.Close()
			bs[i] = nil
		default:
			t.mu.Lock()
			sts[i] = ticketState{Exists: true, Offset: t.offsets[i], Increment: int64(len(bs))}
			t.mu.Unlock()
			unread = true
		}
	}
	if err := checkClasses(bs, sts, t.dsns, t.name); err != nil {
		closeFresh()
		t.mu.Lock()
		for _, i := range idx {
			t.pending[i] = err
		}
		t.mu.Unlock()
		return false
	}
	if countNil(bs) == 0 && !unread {
		if _, err := assignFree(actx, bs, sts, false); err != nil {
			closeFresh()
			return false
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, i := range idx {
		switch {
		case bs[i] == nil:
			t.pending[i] = errs[i]
		case sts[i].Offset == 0:
			bs[i].Close()
			t.pending[i] = noClassYet(t.dsns[i])
		case ctx.Err() != nil:
			bs[i].Close()
		default:
			t.downTill[i].Store(0)
			t.offsets[i] = sts[i].Offset
			t.slots[i].Store(&ticketConn{bs[i]})
			delete(t.pending, i)
		}
	}
	return len(t.pending) == 0
}

// ServersDown returns how many of the client's ticket servers are down now
// (not joined yet, or skipped for the cooldown after a failure) and how
// many it has. IDs stay available while down < total.
func (t *Tickets) ServersDown() (down, total int) {
	now := t.clock.Now().UnixNano()
	for i := range t.slots {
		if t.slots[i].Load() == nil || now < t.downTill[i].Load() {
			down++
		}
	}
	return down, len(t.slots)
}

// Stats returns ServersDown's figures as the idgen.StatsTickets fields.
func (t *Tickets) Stats() idgen.Stats {
	down, total := t.ServersDown()
	return idgen.Stats{Kinds: idgen.StatsTickets, TicketServers: total, TicketServersDown: down}
}

// Scheme returns TicketScheme().
func (t *Tickets) Scheme() *idgen.Scheme { return ticketScheme }

// Next takes a ticket from the next server in turn, failing over to the
// others. When every server fails it returns an error wrapping
// idgen.ErrUnavailable and each server's error. Once a server is found
// counting in another class than the one the client set out with
// (renumbered by `idgen ticket init --reset` while the client had no
// session on it), every call fails with that ErrResidue: its tickets could
// collide with another server's.
func (t *Tickets) Next(ctx context.Context) (idgen.ID, error) {
	var v [1]int64
	if err := t.issue(ctx, v[:]); err != nil {
		return idgen.ID{}, err
	}
	return ticketScheme.FromUint64(uint64(v[0])), nil
}

// NextN fills dst with tickets of one server, the next in turn, in as few
// round trips as it allows (TicketBatcher): failing over as Next does. The
// tickets are increasing. It returns 0 and Next's error when no server
// could issue them all.
func (t *Tickets) NextN(ctx context.Context, dst []idgen.ID) (int, error) {
	if len(dst) == 0 {
		return 0, nil
	}
	vals := make([]int64, len(dst))
	if err := t.issue(ctx, vals); err != nil {
		return 0, err
	}
	for i, v := range vals {
		dst[i] = ticketScheme.FromUint64(uint64(v))
	}
	return len(dst), nil
}

// issue fills dst from the next server in turn that can issue them all:
// servers up first, then those cooling down.
func (t *Tickets) issue(ctx context.Context, dst []int64) error {
	if t.closed.Load() {
		return idgen.ErrClosed
	}
	if err := t.stopped.Load(); err != nil {
		return *err
	}
	n := uint64(len(t.slots))
	start := t.rr.Add(1) - 1
	var errs []error
	for pass := range 2 { // pass 0: servers up; pass 1: those cooling down
		for j := range n {
			i := (start + j) % n
			s := t.slots[i].Load()
			if s == nil {
				continue
			}
			down := t.clock.Now().UnixNano() < t.downTill[i].Load()
			if down != (pass == 1) {
				continue
			}
			err := ticketsFrom(ctx, s.TicketServer, dst)
			if err == nil {
				t.downTill[i].Store(0)
				return nil
			}
			if errors.Is(err, ErrResidue) {
				err = fmt.Errorf("ticket: client stopped: %w", err)
				t.stopped.CompareAndSwap(nil, &err)
				return *t.stopped.Load()
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			t.downTill[i].Store(t.clock.Now().Add(t.cooldown).UnixNano())
			errs = append(errs, err)
		}
	}
	if t.pending != nil {
		if err := t.pendingErr(); err != nil {
			errs = append(errs, err)
		}
	}
	return fmt.Errorf("%w: all %d ticket servers failed: %w", idgen.ErrUnavailable, n, errors.Join(errs...))
}

// ticketsFrom fills dst from s: in batches when s is a TicketBatcher, else
// one Ticket call each.
func ticketsFrom(ctx context.Context, s TicketServer, dst []int64) error {
	if b, ok := s.(TicketBatcher); ok {
		return b.Tickets(ctx, dst)
	}
	for i := range dst {
		v, err := s.Ticket(ctx)
		if err != nil {
			return err
		}
		dst[i] = v
	}
	return nil
}

// Close stops retrying the servers that have not joined and closes the
// servers of a client from DialTickets.
func (t *Tickets) Close() error {
	if t.closed.Swap(true) || !t.owned {
		return nil
	}
	if t.stop != nil {
		t.stop()
		<-t.done
	}
	var errs []error
	for i := range t.slots {
		if s := t.slots[i].Load(); s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}

// A TicketServerInfo is one server's class after InitTickets.
type TicketServerInfo struct {
	DSN       string // password redacted
	Offset    int64  // k: the server issues k, k+n, k+2n, ...
	Increment int64  // n, the number of servers
	Next      int64  // the next ticket; 0 when the server was left unchanged
}

// InitTickets sets up n ticket servers, one per DSN, counting in the
// sequence, table or key name (DefaultTicketName when empty): server i
// (from 0) gets class i+1 of n when reset is set, or when it has no class;
// an existing server that fits the list is left unchanged. A renumbered
// server's next ticket is above every ticket any of them has issued, so no
// ID is issued twice. Every server must answer (else ErrUnreachable). A
// stored class that does not fit the list gives ErrResidue unless reset is
// set. Reset refuses, with ErrInUse naming them, while a generator's
// session is live on any of the servers: a PostgreSQL or MySQL client
// (DialTickets, OpenTicketServer) holds one from its first ticket to its
// Close, a Redis client for redisSessionTTL (1 min) after each ticket; and
// no session opens until the reset is done.
func InitTickets(ctx context.Context, dsns []string, name string, reset bool) ([]TicketServerInfo, error) {
	dsns, name, bs, sts, errs, err := connectTickets(ctx, dsns, name)
	if err != nil {
		return nil, err
	}
	defer closeBackends(bs)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("ticket: %w; every server must answer to be set up", err)
	}
	if reset {
		// Fence every server before reading how far each has counted: no
		// generator's session is live on any of them, and none can open
		// until the servers are renumbered.
		for _, b := range bs {
			release, err := b.fence(ctx)
			if err != nil {
				return nil, err // ErrInUse says to run --reset again; a store error names the server
			}
			defer release()
		}
		sts = readStates(ctx, bs, errs)
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		for i := range sts { // assignFree gives server i class i+1
			sts[i].Offset = 0
		}
	} else if err := checkClasses(bs, sts, dsns, name); err != nil {
		return nil, err
	}
	next, err := assignFree(ctx, bs, sts, reset)
	if err != nil {
		return nil, err
	}
	out := make([]TicketServerInfo, len(bs))
	for i, b := range bs {
		out[i] = TicketServerInfo{DSN: b.String(), Offset: sts[i].Offset, Increment: sts[i].Increment, Next: next[i]}
	}
	return out, nil
}
