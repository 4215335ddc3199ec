package segment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/prefetch"
)

// Defaults of Config's zero values.
const (
	DefaultMaxStep      = 1_000_000 // Leaf's cap on the dynamic step
	DefaultStep         = 1000      // the step AutoCreate gives a new tag
	DefaultPrefetch     = 0.1       // fetch the next segment once 10 % of the current is used
	DefaultGrowBelow    = 15 * time.Minute
	DefaultShrinkAbove  = 30 * time.Minute
	DefaultRetryMin     = 50 * time.Millisecond
	DefaultRetryMax     = 2 * time.Second
	DefaultFetchTimeout = 5 * time.Second
)

// FirstSample is how many IDs of a segment the adaptive prefetcher
// measures the rate over before it fetches the next (or 10 % of the
// segment, when that is fewer) while it knows no rate: the first segment,
// and those fetched while every use observed was a burst. The next fetch
// starts once they are issued, sized from their rate, or at the max step
// when they too came in a burst (see nextStep). The first segment, the
// tag's step, may be large and was sized before any figure; the sooner the
// second fetch starts, the likelier it returns before that segment runs
// out. A segment of the max step fetched after a burst may last barely more
// than a fetch: at 10 % it would leave less than that.
const FirstSample = 256

// Config configures an Allocator. Each field's zero value selects the
// default documented beside it; New validates the whole once.
type Config struct {
	// Store reserves the segments. Required. The Allocator does not close
	// it (Dial's does).
	Store Store

	// Tag is the biz tag, 1 to 128 bytes. Required.
	Tag string

	// Step is the size of the first segment, in [1, MaxStep]. Zero means the
	// tag's step in the store.
	Step int64

	// MinStep is the floor of the dynamic step. Zero means the first
	// segment's step.
	MinStep int64

	// MaxStep is the cap of the dynamic step, at most 2^31-1. Zero means
	// DefaultMaxStep (1,000,000), or the first step when that is larger.
	// Setting MinStep = MaxStep fixes the step.
	MaxStep int64

	// Prefetch is the share of the current segment, in (0, 1], used when
	// the next is fetched in the background. Zero means 0.1. The adaptive
	// prefetcher starts the fetch earlier when the consumption rate × the
	// recent p99 fetch latency × Safety asks for it.
	Prefetch float64

	// Safety is the adaptive prefetcher's factor (package prefetch): the
	// next fetch starts once fewer than rate × p99 fetch latency × Safety
	// IDs remain, and the next step is at least twice that, capped by
	// what lasts ShrinkAbove at that rate and by MaxStep. Zero means 2.
	Safety float64

	// Rate is the consumption rate expected, in IDs/s, a hint for the
	// first segments (adaptive prefetcher only): finite and >= 0, zero
	// means none. Without it the first segment (Step or the tag's step) is
	// sized before any figure is known, and when it runs out before the
	// second fetch returns (a busy tag whose row's step is small), the
	// first switch waits: no planner avoids that without a figure (see the
	// package documentation), and it is the only switch that waits for a
	// lack of one. With it, New records Rate as the first rate
	// observation (Rate IDs over one second; measured rates then average
	// with it) and, when the first segment holds fewer than Rate × its
	// fetch latency × Safety IDs, reserves the second segment too before
	// it returns, sized by the rule of every later step (twice that figure,
	// within [MinStep, MaxStep]), so that the first switch does not wait
	// either.
	Rate float64

	// FixedPrefetch turns the adaptive prefetcher off: the fetch starts at
	// the Prefetch share and the step follows Leaf's rule alone.
	FixedPrefetch bool

	// GrowBelow: a segment that lasted less than this doubles the next step.
	// Zero means 15 min.
	GrowBelow time.Duration

	// ShrinkAbove: a segment that lasted more than this halves the next
	// step. Zero means 30 min.
	ShrinkAbove time.Duration

	// RetryMin and RetryMax bound the backoff between failed fetches, which
	// doubles from RetryMin up to RetryMax. Zero means 50 ms and 2 s.
	RetryMin, RetryMax time.Duration

	// FetchTimeout bounds one reservation. Zero means 5 s.
	FetchTimeout time.Duration

	// AutoCreate creates an unknown tag with Step (DefaultStep when zero)
	// instead of failing with ErrUnknownTag.
	AutoCreate bool

	// Clock is the clock of the dynamic step (how long a segment lasted)
	// and of the fetch latencies. Nil means the system clock
	// (idgen.SystemClock, time.Now, whose readings carry the monotonic
	// clock).
	Clock idgen.Clock

	// OnFetch, when set, is called after each fetch attempt, from the
	// goroutine that made it. It must not block.
	OnFetch func(Fetch)

	// OnLimit, when set, is called when the adaptive prefetcher finds
	// MaxStep too small for the rate (one MaxStep of IDs lasts less than
	// the p99 fetch latency, so callers wait at each switch whatever the
	// timing) and again when that ends, from the fetcher's goroutine (or
	// from New's, when Rate shows the condition at once). It
	// must not block. Limit.String is a sentence for a log. Stats reports
	// the same condition.
	OnLimit func(Limit)
}

// A Limit describes the "step bound too small for this rate" condition,
// for Config.OnLimit: MaxStep IDs last MaxStep / Rate seconds, less than
// the P99 fetch latency.
type Limit struct {
	Tag     string
	Limited bool          // true when the condition begins, false when it ends
	Rate    float64       // IDs/s, the moving average measured
	P99     time.Duration // the p99 of the recent fetch latencies
	MaxStep int64
}

// Lasts returns how long MaxStep IDs last at Rate; 0 when Rate is 0.
func (l Limit) Lasts() time.Duration {
	if l.Rate <= 0 {
		return 0
	}
	return time.Duration(float64(l.MaxStep) / l.Rate * float64(time.Second))
}

// String returns a one-line account of l for a log.
func (l Limit) String() string {
	if !l.Limited {
		return fmt.Sprintf("segment: biz tag %q: max step %d lasts %v at %.0f IDs/s, past the p99 fetch latency %v: switches can be waitless again",
			l.Tag, l.MaxStep, l.Lasts().Round(time.Microsecond), l.Rate, l.P99)
	}
	return fmt.Sprintf("segment: biz tag %q: step bound too small for this rate: max step %d lasts %v at %.0f IDs/s, under the p99 fetch latency %v, so callers wait at each switch; a max step of at least %d (rate × p99 × 2) avoids it",
		l.Tag, l.MaxStep, l.Lasts().Round(time.Microsecond), l.Rate, l.P99, int64(math.Ceil(l.Rate*l.P99.Seconds()*2)))
}

// A Fetch describes one reservation attempt, for Config.OnFetch.
type Fetch struct {
	Max     int64         // the reserved range is (Max-Step, Max]; 0 on error
	Step    int64         // the step asked for (0: the tag's own)
	Lasted  time.Duration // how long the previous segment lasted, by Config.Clock
	Latency time.Duration // the store's round trip
	Err     error
}

// Stats are an Allocator's counters, a plain value (see Allocator.Stats):
// idgen.Stats, the one type every generator with counters reports, whose
// idgen.StatsSegment fields are this package's former Stats fields under
// the same names, so that they read and compose as before. The servers
// (httpapi, grpcapi) read them with idgen.StatsOf, without linking this
// package's store drivers.
type Stats = idgen.Stats

// span is one segment: the size IDs start, start+1, ..., start+size-1.
// Positions in it are offsets from start, so that no sum nears the int64
// limit however close the segment lies to 2^63-1 (its last ID may be
// 2^63-1 itself).
type span struct {
	taken   atomic.Int64 // offsets [0, taken) are handed out; past size once used up
	start   int64
	size    int64
	trigger int64 // the offset whose issue starts the prefetch; -1: none
	step    int64
	spare   bool      // IDs a failed NextN gave back, not a fetched segment
	fetched time.Time // by Config.Clock
	started time.Time // by Config.Clock, when it became the current segment
}

// id returns the ID at offset o, which is below s.size.
func (s *span) id(o int64) idgen.ID { return segmentScheme.FromUint64(uint64(s.start + o)) }

// left returns how many IDs of s are not handed out.
func (s *span) left() int64 { return s.size - min(s.taken.Load(), s.size) }

// closedSpan replaces an Allocator's current segment at Close: it holds no
// ID, which sends every caller to advance and ErrClosed without a check on
// the fast path.
var closedSpan = &span{trigger: -1}

// Allocator hands out a biz tag's IDs from memory, two segments at a time
// (Leaf's double buffer). Next is lock-free while the current segment
// lasts. Safe for concurrent use; Close stops its background goroutine.
type Allocator struct {
	cfg   Config
	owned bool // Close closes the store (Dial)

	cur    atomic.Pointer[span]
	closed atomic.Bool

	plan *prefetch.Planner // nil with FixedPrefetch

	mu        sync.Mutex
	next      *span         // the prefetched segment, nil when none
	spare     []*span       // IDs failed NextN calls gave back, lowest first; handed out before next
	lastErr   error         // the last fetch attempt's error, nil after a success
	exhausted error         // the store's ErrExhausted, once it has no ID left: no fetch follows
	attempt   chan struct{} // closed when the fetch attempt under way ends
	fetchLat  time.Duration
	maxLat    time.Duration

	kick      chan struct{} // cap 1: wake the fetcher
	kicks     atomic.Int64  // kicks sent and not yet served: a simulation's clock waits for 0 (export_test.go)
	limited   atomic.Bool   // the step bound is too small for the rate (Config.OnLimit)
	switching chan struct{} // cap 1: held by the one caller that moves cur past a used-up segment
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	segments    atomic.Int64
	fetchErrors atomic.Int64
	waits       atomic.Int64
	unavailable atomic.Int64
}

var (
	_ idgen.Generator = (*Allocator)(nil)
	_ idgen.Batcher   = (*Allocator)(nil)
)

func (c *Config) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
	}
	switch {
	case c.Store == nil:
		return bad("no Store")
	case c.Step < 0 || c.Step > MaxStep:
		return bad("step %d: want an integer in [1, %d] (0: the tag's own step)", c.Step, MaxStep)
	case c.MinStep < 0 || c.MinStep > MaxStep:
		return bad("min step %d: want an integer in [1, %d]", c.MinStep, MaxStep)
	case c.MaxStep < 0 || c.MaxStep > MaxStep:
		return bad("max step %d: want an integer in [1, %d]", c.MaxStep, MaxStep)
	case c.MinStep > 0 && c.MaxStep > 0 && c.MinStep > c.MaxStep:
		return bad("min step %d above max step %d", c.MinStep, c.MaxStep)
	case c.MaxStep > 0 && c.Step > c.MaxStep:
		return bad("step %d above max step %d", c.Step, c.MaxStep)
	case math.IsNaN(c.Prefetch) || c.Prefetch < 0 || c.Prefetch > 1:
		return bad("prefetch %v: want a share in (0, 1]", c.Prefetch)
	case math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) || c.Rate < 0:
		return bad("rate %v: want IDs/s, finite and at least 0 (0: none)", c.Rate)
	case math.IsNaN(c.Safety) || (c.Safety != 0 && c.Safety < 1):
		return bad("safety %v: want at least 1 (0: %v)", c.Safety, prefetch.DefaultSafety)
	case c.GrowBelow < 0 || c.ShrinkAbove < 0 || c.RetryMin < 0 || c.RetryMax < 0 || c.FetchTimeout < 0:
		return bad("negative duration")
	}
	if err := checkTag(c.Tag); err != nil {
		return err
	}
	if c.Prefetch == 0 {
		c.Prefetch = DefaultPrefetch
	}
	if c.GrowBelow == 0 {
		c.GrowBelow = DefaultGrowBelow
	}
	if c.ShrinkAbove == 0 {
		c.ShrinkAbove = DefaultShrinkAbove
	}
	if c.GrowBelow > c.ShrinkAbove {
		return bad("grow below %v above shrink above %v", c.GrowBelow, c.ShrinkAbove)
	}
	if c.RetryMin == 0 {
		c.RetryMin = DefaultRetryMin
	}
	if c.RetryMax == 0 {
		c.RetryMax = max(DefaultRetryMax, c.RetryMin)
	}
	if c.FetchTimeout == 0 {
		c.FetchTimeout = DefaultFetchTimeout
	}
	c.Clock = idgen.ClockOr(c.Clock)
	return nil
}

// New validates cfg, reserves the first segment (synchronously, so that an
// unknown tag or an unreachable store fails here) and starts the background
// fetcher; with Config.Rate it may reserve the second segment too (see
// Rate). Errors wrap ErrConfig, ErrUnknownTag, ErrNotInstalled or
// ErrUnreachable.
func New(ctx context.Context, cfg Config) (*Allocator, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	a := &Allocator{
		cfg:       cfg,
		attempt:   make(chan struct{}),
		kick:      make(chan struct{}, 1),
		switching: make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	first, err := a.fetch(ctx, cfg.Step, 0)
	if err == nil && first == nil {
		err = fmt.Errorf("segment: biz tag %q: empty first segment", cfg.Tag)
	}
	if errorsIsUnknown(err) && cfg.AutoCreate {
		step := cfg.Step
		if step == 0 {
			step = DefaultStep
		}
		if _, _, err = cfg.Store.Init(ctx, cfg.Tag, step, "created by idgen (AutoCreate)"); err == nil {
			first, err = a.fetch(ctx, cfg.Step, 0)
		}
	}
	if err != nil {
		return nil, err
	}
	if a.cfg.MinStep == 0 {
		a.cfg.MinStep = first.step
	}
	if a.cfg.MaxStep == 0 {
		a.cfg.MaxStep = max(DefaultMaxStep, first.step)
	}
	if a.cfg.MinStep > a.cfg.MaxStep {
		return nil, fmt.Errorf("%w: the tag's step %d is above max step %d", ErrConfig, a.cfg.MinStep, a.cfg.MaxStep)
	}
	if !a.cfg.FixedPrefetch {
		if a.plan, err = prefetch.New(prefetch.Config{Min: a.cfg.MinStep, Max: a.cfg.MaxStep, Safety: a.cfg.Safety}); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		a.plan.ObserveFetch(a.maxLat) // the first fetch's
		// Fetched before the planner existed: no rate, so the next fetch
		// starts after FirstSample IDs (see fetch).
		first.trigger = min(first.trigger, FirstSample-1)
	}
	if a.plan != nil && a.cfg.Rate > 0 {
		if err := a.fetchSecond(ctx, first); err != nil {
			return nil, err
		}
	}
	first.started = a.cfg.Clock.Now() // after the second fetch: the first segment's use begins now
	a.cur.Store(first)
	go a.run()
	return a, nil
}

// fetchSecond applies Config.Rate, the rate hint, to the first segment
// before it becomes current: it records the hint as the first rate observation, moves the
// first segment's prefetch trigger to where the hint puts it and, when the
// first segment holds fewer than Need IDs (rate × the first fetch's
// latency × Safety: it would run out before the second fetch returns),
// reserves the second segment now, sized by nextStep.
func (a *Allocator) fetchSecond(ctx context.Context, first *span) error {
	a.plan.ObserveUse(int64(math.Round(a.cfg.Rate)), time.Second)
	if th := a.plan.Threshold(); th > 0 {
		first.trigger = max(0, min(first.trigger, first.size-1-th))
	}
	if first.size >= a.plan.Need() {
		return nil
	}
	next, err := a.fetch(ctx, a.nextStep(first), a.cfg.Clock.Now().Sub(first.fetched))
	if err != nil {
		return err
	}
	a.next = next
	return nil
}

// Dial opens the store dsn names (see Open) and returns an Allocator on it
// whose Close also closes the store. cfg.Store must be nil.
func Dial(ctx context.Context, dsn string, cfg Config) (*Allocator, error) {
	if cfg.Store != nil {
		return nil, fmt.Errorf("%w: Dial with a Store; call New", ErrConfig)
	}
	if err := checkTag(cfg.Tag); err != nil {
		return nil, err
	}
	s, err := Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	cfg.Store = s
	a, err := New(ctx, cfg)
	if err != nil {
		s.Close()
		return nil, err
	}
	a.owned = true
	return a, nil
}

// Scheme returns Scheme().
func (a *Allocator) Scheme() *idgen.Scheme { return segmentScheme }

// Tag returns the biz tag.
func (a *Allocator) Tag() string { return a.cfg.Tag }

// Next returns the next ID of the current segment. At the end of a
// segment it switches to the prefetched one; when none is ready it waits for
// the fetch under way (honouring ctx), or returns an error wrapping
// idgen.ErrUnavailable when the store's last attempt failed, or ErrExhausted
// once the biz tag's last ID (2^63-1) is handed out. After Close it returns
// idgen.ErrClosed.
func (a *Allocator) Next(ctx context.Context) (idgen.ID, error) {
	for {
		s := a.cur.Load() // closedSpan after Close
		// Each call past the end adds one: the counter cannot reach 2^63 in
		// any process's life.
		o := s.taken.Add(1) - 1
		if o < s.size {
			if o == s.trigger {
				a.prefetch()
			}
			return s.id(o), nil
		}
		if err := a.advance(ctx, s); err != nil {
			return idgen.ID{}, err
		}
	}
}

// run is IDs a NextN call took from one segment: offsets [lo, hi) of s.
type run struct {
	s      *span
	lo, hi int64
}

// NextN fills dst with increasing IDs, taking whole runs of the current
// segment at once. All or nothing: when it cannot fill dst (the store down
// with too few IDs held, ErrExhausted, ctx done), it returns 0 and Next's
// error, and keeps the IDs it took for the calls that follow.
//
// A request that the current segment cannot fill holds the right to switch
// segments until it ends: it takes the rest of each segment it passes, so
// no other caller is handed an ID above the ones it holds, and IDs it gives
// back on failure keep every caller's IDs increasing.
func (a *Allocator) NextN(ctx context.Context, dst []idgen.ID) (int, error) {
	want := int64(len(dst))
	for want > 0 { // the fast path: dst fits in the current segment
		s := a.cur.Load()
		o := s.taken.Load()
		if o >= s.size || want > s.size-o {
			break
		}
		if s.taken.CompareAndSwap(o, o+want) {
			a.fill(dst, s, o)
			return len(dst), nil
		}
	}
	if want == 0 {
		return 0, nil
	}
	if err := a.lockSwitch(ctx); err != nil {
		return 0, err
	}
	defer a.unlockSwitch()
	i := int64(0)
	var runs []run
	for i < want {
		s := a.cur.Load()
		o := s.taken.Load()
		if o >= s.size {
			if err := a.switchFrom(ctx, s); err != nil {
				a.giveBack(runs)
				return 0, err
			}
			continue
		}
		k := min(want-i, s.size-o)
		if !s.taken.CompareAndSwap(o, o+k) {
			continue
		}
		a.fill(dst[i:i+k], s, o)
		i += k
		runs = append(runs, run{s, o, o + k})
	}
	return len(dst), nil
}

// fill sets dst to the IDs of s from offset o, which s.taken now covers,
// and starts the prefetch when they pass its trigger.
func (a *Allocator) fill(dst []idgen.ID, s *span, o int64) {
	if o <= s.trigger && s.trigger < o+int64(len(dst)) {
		a.prefetch()
	}
	for j := range dst {
		dst[j] = s.id(o + int64(j))
	}
}

// giveBack keeps the IDs of runs, taken by a NextN that failed while it
// held the switch, as spare segments handed out before any other: no
// caller has been handed an ID above them.
func (a *Allocator) giveBack(runs []run) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed.Load() {
		return
	}
	for _, r := range runs {
		a.spare = append(a.spare, &span{start: r.s.start + r.lo, size: r.hi - r.lo, trigger: 0, step: r.s.step,
			spare: true, fetched: r.s.fetched})
	}
	slices.SortFunc(a.spare, func(x, y *span) int { return cmp.Compare(x.start, y.start) })
}

// lockSwitch takes the right to move cur past a used-up segment, honouring
// ctx; unlockSwitch gives it back.
func (a *Allocator) lockSwitch(ctx context.Context) error {
	select {
	case a.switching <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-a.stop:
		return idgen.ErrClosed
	}
}

func (a *Allocator) unlockSwitch() { <-a.switching }

// prefetch wakes the fetcher without blocking, and yields once so that the
// fetcher, readied on this P, sends its request now rather than when a busy
// caller is preempted (once per segment).
func (a *Allocator) prefetch() {
	select {
	case a.kick <- struct{}{}:
		a.kicks.Add(1)
		runtime.Gosched()
	default:
	}
}

// advance moves past the used-up segment old, once it holds the switch.
func (a *Allocator) advance(ctx context.Context, old *span) error {
	if err := a.lockSwitch(ctx); err != nil {
		return err
	}
	defer a.unlockSwitch()
	return a.switchFrom(ctx, old)
}

// switchFrom moves past the used-up segment old: to a spare run given back
// by a failed NextN, else to the prefetched segment, else it waits for the
// fetch under way. The caller holds the switch.
func (a *Allocator) switchFrom(ctx context.Context, old *span) error {
	usedUp := a.cfg.Clock.Now() // before any wait: the rate is old's IDs over its life
	a.mu.Lock()
	for {
		if a.closed.Load() {
			a.mu.Unlock()
			return idgen.ErrClosed
		}
		if a.cur.Load() != old {
			a.mu.Unlock()
			return nil
		}
		var next *span
		switch {
		case len(a.spare) > 0:
			next = a.spare[0]
			a.spare[0] = nil
			a.spare = a.spare[1:]
		case a.next != nil:
			next, a.next = a.next, nil
		}
		if next != nil {
			if a.plan != nil && !old.spare && old != closedSpan {
				a.plan.ObserveUse(old.step, usedUp.Sub(old.started))
			}
			next.started = a.cfg.Clock.Now()
			a.cur.Store(next)
			a.mu.Unlock()
			return nil
		}
		if err := a.exhausted; err != nil {
			a.mu.Unlock()
			return err
		}
		a.prefetch()
		if a.lastErr != nil {
			err := a.lastErr
			a.mu.Unlock()
			a.unavailable.Add(1)
			return fmt.Errorf("%w: biz tag %q: both segments used up, store failing: %w", idgen.ErrUnavailable, a.cfg.Tag, err)
		}
		ch := a.attempt
		a.mu.Unlock()
		a.waits.Add(1)
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-a.stop:
			return idgen.ErrClosed
		}
		a.mu.Lock()
	}
}

// run is the background fetcher: on each kick it fills the next segment,
// retrying with backoff while the store fails, until Close.
func (a *Allocator) run() {
	defer close(a.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-a.stop
		cancel()
	}()
	for {
		select {
		case <-a.stop:
			return
		case <-a.kick:
		}
		a.fillNext(ctx)
		a.kicks.Add(-1)
	}
}

// fillNext fills the next segment when it is missing, retrying with
// backoff while the store fails, until it succeeds, the store has no ID
// left or the Allocator closes.
func (a *Allocator) fillNext(ctx context.Context) {
	backoff := a.cfg.RetryMin
	for {
		a.mu.Lock()
		need := a.next == nil && a.exhausted == nil
		a.mu.Unlock()
		cur := a.cur.Load()
		// A kick left over from the segment before (its trigger and then
		// its switch both kick) must not fetch for cur before cur passes
		// its own trigger: the step would follow from how long cur lasted
		// so far, next to nothing, and double.
		if !need || cur == closedSpan || cur.taken.Load() <= cur.trigger {
			return
		}
		s, err := a.fetch(ctx, a.nextStep(cur), a.cfg.Clock.Now().Sub(cur.fetched))
		a.mu.Lock()
		a.lastErr = err
		if err == nil {
			a.next = s
		}
		if errors.Is(err, ErrExhausted) {
			a.exhausted = err
		}
		close(a.attempt)
		a.attempt = make(chan struct{})
		done := err == nil || a.exhausted != nil
		a.mu.Unlock()
		if done {
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-a.stop:
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, a.cfg.RetryMax)
	}
}

// nextStep applies the dynamic step to the segment cur: double when it
// lasted under GrowBelow, halve when over ShrinkAbove (Leaf's rule). The
// adaptive prefetcher raises it to twice the IDs consumed during a p99
// fetch × Safety, but not past what lasts ShrinkAbove at the rate
// measured (the lower of the moving average and the newest rate: the
// average follows a fall by halves, one observation at a time, and a step
// kept up by it would last days at the new rate), so that Leaf's rule
// stays the outer bound. Before any rate is
// measured, a segment used up in a burst (under prefetch.MinUseSpan: the
// first segment of a busy tag, whose size the tag's row fixed before any
// figure) makes it MaxStep at once: the rate is too fast to measure, and
// the step that doubles from there waits at each of the switches it takes
// to catch up. All within [MinStep, MaxStep].
func (a *Allocator) nextStep(cur *span) int64 {
	now := a.cfg.Clock.Now()
	lasted := now.Sub(cur.fetched)
	step := cur.step
	switch {
	case lasted < a.cfg.GrowBelow:
		step *= 2
	case lasted > a.cfg.ShrinkAbove:
		step /= 2
	}
	if a.plan != nil {
		if !cur.started.IsZero() {
			a.plan.ObserveUse(min(cur.taken.Load(), cur.size), now.Sub(cur.started))
		}
		rate, _ := a.plan.Figures()
		if last := a.plan.Latest(); last > 0 {
			// The average halves its way down a fall in the rate; the
			// newest rate bounds what the raise may keep.
			rate = min(rate, last)
		}
		need := 2 * a.plan.Need()
		if floor, burst := a.plan.Burst(); burst {
			rate, need = floor, a.cfg.MaxStep
		}
		lasting := min(rate*a.cfg.ShrinkAbove.Seconds(), MaxStep) // what lasts ShrinkAbove; a float past int64 would not convert
		step = max(step, min(need, int64(lasting)))
		a.checkLimit()
	}
	return min(max(step, a.cfg.MinStep), a.cfg.MaxStep)
}

// checkLimit calls OnLimit when the planner's Limited changes.
func (a *Allocator) checkLimit() {
	l := a.plan.Limited()
	if a.limited.Swap(l) == l || a.cfg.OnLimit == nil {
		return
	}
	rate, p99 := a.plan.Figures()
	a.cfg.OnLimit(Limit{Tag: a.cfg.Tag, Limited: l, Rate: rate, P99: p99, MaxStep: a.cfg.MaxStep})
}

// fetch reserves one segment of step IDs (0: the tag's own step).
func (a *Allocator) fetch(ctx context.Context, step int64, lasted time.Duration) (*span, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.FetchTimeout)
	defer cancel()
	t0 := a.cfg.Clock.Now()
	hi, added, err := a.cfg.Store.Reserve(ctx, a.cfg.Tag, step)
	lat := a.cfg.Clock.Now().Sub(t0)
	if err == nil && (added < 1 || hi < added) {
		err = fmt.Errorf("segment: biz tag %q: store returned max_id %d for step %d", a.cfg.Tag, hi, added)
	}
	if a.cfg.OnFetch != nil {
		f := Fetch{Step: step, Lasted: lasted, Latency: lat, Err: err}
		if err == nil {
			f.Max = hi
		}
		a.cfg.OnFetch(f)
	}
	if err != nil {
		a.fetchErrors.Add(1)
		return nil, err
	}
	// hi is at most 2^63-1 and added at least 1: start neither wraps nor
	// goes below 1 (hi >= added).
	s := &span{start: hi - added + 1, size: added, step: added, fetched: a.cfg.Clock.Now()}
	s.trigger = min(int64(float64(added)*a.cfg.Prefetch), added-1)
	if a.plan != nil {
		a.plan.ObserveFetch(lat)
		if th := a.plan.Threshold(); th > 0 { // start when fewer than th IDs remain, if that comes first
			s.trigger = max(0, min(s.trigger, added-1-th))
		}
		if rate, _ := a.plan.Figures(); rate == 0 { // no rate yet: measure one over the first IDs
			s.trigger = min(s.trigger, FirstSample-1)
		}
	}
	a.segments.Add(1)
	a.mu.Lock()
	a.fetchLat += lat
	a.maxLat = max(a.maxLat, lat)
	a.mu.Unlock()
	return s, nil
}

// Available reports, without waiting and without drawing an ID, whether n
// IDs can be had now: nil when the allocator holds n (the current segment,
// runs given back, the prefetched segment) or its store's last attempt did
// not fail; otherwise an error wrapping idgen.ErrUnavailable (the store
// failing) or ErrExhausted (no ID past those held). A server that streams
// its answer asks before it commits to it: a request it refuses leaves
// every held ID to the requests that follow.
func (a *Allocator) Available(n int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed.Load() {
		return idgen.ErrClosed
	}
	held := a.cur.Load().left()
	for _, s := range a.spare {
		held += s.size
	}
	if a.next != nil {
		held += a.next.size
	}
	switch {
	case n <= held:
		return nil
	case a.exhausted != nil:
		return fmt.Errorf("%w (%d IDs held, %d asked)", a.exhausted, held, n)
	case a.lastErr != nil:
		return fmt.Errorf("%w: biz tag %q: %d IDs held, %d asked, store failing: %w", idgen.ErrUnavailable, a.cfg.Tag, held, n, a.lastErr)
	}
	return nil
}

// Stats returns the allocator's counters, the idgen.StatsSegment fields.
func (a *Allocator) Stats() Stats {
	st := Stats{
		Kinds:       idgen.StatsSegment,
		Segments:    a.segments.Load(),
		FetchErrors: a.fetchErrors.Load(),
		Waits:       a.waits.Load(),
		Unavailable: a.unavailable.Load(),
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	st.FetchLatency, st.MaxFetchLatency = a.fetchLat, a.maxLat
	if a.plan != nil {
		st.Rate, st.P99FetchLatency = a.plan.Figures()
		st.StepBoundTooSmall = a.limited.Load()
	}
	if s := a.cur.Load(); s != nil {
		st.Remaining = s.left()
		st.Step = s.step
	}
	for _, s := range a.spare {
		st.Remaining += s.size
	}
	if a.next != nil {
		st.Remaining += a.next.size
		st.Step = a.next.step
	}
	return st
}

// Close stops the background fetcher (aborting a fetch under way) and, for
// an Allocator from Dial, closes the store. The unused rest of both segments
// is lost: a gap, never a duplicate. Later calls return idgen.ErrClosed.
func (a *Allocator) Close() error {
	var err error
	a.closeOnce.Do(func() {
		a.closed.Store(true)
		a.mu.Lock()
		a.cur.Store(closedSpan)
		a.next, a.spare = nil, nil
		a.mu.Unlock()
		close(a.stop)
		<-a.done
		if a.owned {
			err = a.cfg.Store.Close()
		}
	})
	return err
}
