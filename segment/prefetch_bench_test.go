package segment_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/segment"
)

// simStore is a real store whose Reserve takes a simulated latency more on
// a test clock: the Reserve call waits, in real time, until the simulation
// has moved the clock to its end (sim.release). Only the allocator's one
// fetcher (or New) calls it, so at most one call is pending.
type simStore struct {
	segment.Store
	sim *sim
}

func (s simStore) Reserve(ctx context.Context, tag string, step int64) (int64, int64, error) {
	r := &simReq{at: s.sim.clk.Now().Add(s.sim.latency()), done: make(chan struct{})}
	s.sim.mu.Lock()
	s.sim.pending = r
	s.sim.mu.Unlock()
	select {
	case <-r.done:
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	return s.Store.Reserve(ctx, tag, step)
}

type simReq struct {
	at   time.Time
	done chan struct{}
}

// sim drives an Allocator on a test clock: the consumer's pace and the
// store's latency are both on the clock, and the clock moves only when the
// fetcher is idle or inside the store, so that every reading the
// allocator takes is the same in every run, however busy the machine.
type sim struct {
	clk     *idgentest.Clock
	lat     func() time.Duration
	mu      sync.Mutex
	pending *simReq
}

func newSim(lat func() time.Duration) *sim {
	return &sim{clk: idgentest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), lat: lat}
}

// uniformLatency returns 50 to 150 ms, from a fixed seed.
func uniformLatency() func() time.Duration {
	r := rand.New(rand.NewPCG(31, 2))
	return func() time.Duration {
		return 50*time.Millisecond + time.Duration(r.Int64N(int64(100*time.Millisecond)))
	}
}

func (s *sim) latency() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lat()
}

func (s *sim) hasPending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending != nil
}

// settle waits until the fetcher has served every wake-up or is inside the
// store.
func (s *sim) settle(a *segment.Allocator) {
	for segment.KicksPending(a) > 0 && !s.hasPending() {
		runtime.Gosched()
	}
}

// release moves the clock to the pending fetch's end and lets it return;
// it reports whether one was pending.
func (s *sim) release() bool {
	s.mu.Lock()
	r := s.pending
	s.pending = nil
	s.mu.Unlock()
	if r == nil {
		return false
	}
	if d := r.at.Sub(s.clk.Now()); d > 0 {
		s.clk.Add(d)
	}
	close(r.done)
	return true
}

// newAllocator runs segment.New, serving its first fetch.
func (s *sim) newAllocator(tb testing.TB, cfg segment.Config) *segment.Allocator {
	tb.Helper()
	cfg.Store = simStore{cfg.Store, s}
	cfg.Clock = s.clk
	if cfg.FetchTimeout == 0 {
		// FetchTimeout runs in real time, and a simulated fetch waits in
		// real time until the simulation reaches its end: about 500 runs
		// of NextN at 20 M IDs/s for 100 ms, which beside two busy loops
		// under -race took over the default 5 s. The fetches timed out and
		// were retried (TestPrefetchPlanFromFirstSwitch asked 10 steps,
		// not 6). The latency is on the test clock; only the test's own
		// timeout bounds the real wait.
		cfg.FetchTimeout = time.Hour
	}
	type result struct {
		a   *segment.Allocator
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := segment.New(context.Background(), cfg)
		done <- result{a, err}
	}()
	for {
		select {
		case r := <-done:
			if r.err != nil {
				tb.Fatal(r.err)
			}
			tb.Cleanup(func() { r.a.Close() })
			return r.a
		default:
			if !s.release() {
				runtime.Gosched()
			}
		}
	}
}

// nextN calls a.NextN, serving each fetch it waits for at its time.
func (s *sim) nextN(tb testing.TB, a *segment.Allocator, dst []idgen.ID) {
	tb.Helper()
	done := make(chan error, 1)
	waits := a.Stats().Waits
	go func() {
		_, err := a.NextN(context.Background(), dst)
		done <- err
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				tb.Fatal(err)
			}
			s.settle(a)
			return
		default:
		}
		if w := a.Stats().Waits; w > waits { // the call waits for the fetch under way
			waits = w
			s.settle(a)
			s.release()
			s.settle(a)
		}
		runtime.Gosched()
	}
}

// advance moves the clock by d, ending the pending fetch at its time when
// that comes first.
func (s *sim) advance(a *segment.Allocator, d time.Duration) {
	end := s.clk.Now().Add(d)
	s.mu.Lock()
	r := s.pending
	s.mu.Unlock()
	if r != nil && !r.at.After(end) {
		s.release()
		s.settle(a)
	}
	if rest := end.Sub(s.clk.Now()); rest > 0 {
		s.clk.Add(rest)
	}
}

// consume takes IDs in runs of run at rate IDs/s on the simulated clock
// until the allocator has fetched segments+1 segments (the first
// included); after a wait, the pace goes on from the end of the wait.
func (s *sim) consume(tb testing.TB, a *segment.Allocator, rate float64, run, segments int) {
	tb.Helper()
	dst := make([]idgen.ID, run)
	every := time.Duration(float64(run) / rate * float64(time.Second))
	for a.Stats().Segments <= int64(segments) {
		s.nextN(tb, a, dst)
		s.advance(a, every)
	}
}

// BenchmarkPrefetchSwitches consumes a tag whose row's step is 1000 at
// 20 M IDs/s, in runs of 4096 IDs, from a Redis store with 50-150 ms of
// simulated fetch latency, all on a simulated clock (the figures do not
// depend on the machine's load), and reports the waits per 100 segment
// switches over 30 switches, the first included, and the switches after
// the first: with the fixed 10 % prefetch and Leaf's doubling ("fixed"),
// with the adaptive prefetcher ("adaptive") and with the adaptive
// prefetcher told the rate to expect (Config.Rate 20 M IDs/s,
// "adaptive+rate"). The first call asks 4096 IDs of a first segment of
// 1000: without the rate hint, that segment was fetched before any rate
// was known and the first switch waits under every planner; with it, New
// reserves the second segment, sized from the hint and the first fetch's
// latency, before it returns, and no switch waits. At the default max
// step (1,000,000: 50 ms of IDs at 20 M/s, less than one fetch) no planner
// can avoid the waits, and the adaptive one reports the step bound too
// small (step-bound-too-small 1); at 16,000,000 the step reaches the bound
// at the first switch.
func BenchmarkPrefetchSwitches(b *testing.B) {
	const rate, run, switches = 20e6, 4096, 30
	for _, maxStep := range []int64{segment.DefaultMaxStep, 16_000_000} {
		for _, mode := range []struct {
			name  string
			fixed bool
			rate  float64
		}{{"fixed", true, 0}, {"adaptive", false, 0}, {"adaptive+rate", false, rate}} {
			b.Run(fmt.Sprintf("max=%d/%s", maxStep, mode.name), func(b *testing.B) {
				dsn := redisDSN(b)
				st, err := segment.Open(context.Background(), dsn)
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				var s segment.Stats
				var firstWaits int64
				for b.Loop() {
					tag := uniqueTag(b, dsn)
					initTag(b, dsn, tag, 1000)
					sm := newSim(uniformLatency())
					a := sm.newAllocator(b, segment.Config{Store: st, Tag: tag, MaxStep: maxStep, FixedPrefetch: mode.fixed, Rate: mode.rate})
					sm.consume(b, a, rate, run, 1)
					firstWaits = a.Stats().Waits
					sm.consume(b, a, rate, run, switches)
					s = a.Stats()
					a.Close()
				}
				b.ReportMetric(float64(s.Waits)*100/float64(s.Segments-1), "waits/100-switches")
				b.ReportMetric(float64(s.Waits-firstWaits)*100/float64(s.Segments-2), "waits/100-switches-after-1st")
				b.ReportMetric(float64(s.Step), "last-step")
				limited := 0.0
				if s.StepBoundTooSmall {
					limited = 1
				}
				b.ReportMetric(limited, "step-bound-too-small")
			})
		}
	}
}
