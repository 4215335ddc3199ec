package segment_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen/segment"
)

// The adaptive planner on a simulated clock (20 M IDs/s in runs of 4096,
// every fetch 100 ms, a tag whose row's step is 1000): the first segment
// goes in the first call, a burst, so the second fetch asks for the max
// step at once, and no switch after the first waits; at a max step of
// 1,000,000 (50 ms of IDs, under one fetch) every switch waits and the
// "step bound too small" condition shows once in OnLimit and in Stats.
// Told the rate (Config.Rate), New reserves the second segment too, sized
// 2 × 20 M/s × 100 ms × Safety 2 = 8,000,000 (the max step when that is
// less), and the first switch does not wait either; at 1,000,000 the
// condition shows from New on.
func TestPrefetchPlanFromFirstSwitch(t *testing.T) {
	dsn := redisDSN(t)
	st, err := segment.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tt := range []struct {
		maxStep int64
		rate    float64
		steps   []int64
		waits   int64
		limited bool
	}{
		{16_000_000, 0, []int64{0, 16_000_000, 16_000_000, 16_000_000, 16_000_000, 16_000_000}, 1, false},
		{1_000_000, 0, []int64{0, 1_000_000, 1_000_000, 1_000_000, 1_000_000, 1_000_000}, 5, true},
		{16_000_000, 20e6, []int64{0, 8_000_000, 16_000_000, 16_000_000, 16_000_000, 16_000_000}, 0, false},
		{1_000_000, 20e6, []int64{0, 1_000_000, 1_000_000, 1_000_000, 1_000_000, 1_000_000}, 4, true},
	} {
		tag := uniqueTag(t, dsn)
		initTag(t, dsn, tag, 1000)
		sm := newSim(func() time.Duration { return 100 * time.Millisecond })
		var mu sync.Mutex
		var steps []int64
		var limits []segment.Limit
		a := sm.newAllocator(t, segment.Config{Store: st, Tag: tag, MaxStep: tt.maxStep, Rate: tt.rate,
			OnFetch: func(f segment.Fetch) {
				mu.Lock()
				steps = append(steps, f.Step)
				mu.Unlock()
			},
			OnLimit: func(l segment.Limit) {
				mu.Lock()
				limits = append(limits, l)
				mu.Unlock()
			},
		})
		sm.consume(t, a, 20e6, 4096, 5)
		s := a.Stats()
		mu.Lock()
		if !slices.Equal(steps, tt.steps) {
			t.Errorf("max step %d, rate %v: steps asked = %v; want %v", tt.maxStep, tt.rate, steps, tt.steps)
		}
		if s.Waits != tt.waits || s.StepBoundTooSmall != tt.limited || s.P99FetchLatency != 100*time.Millisecond || s.FetchErrors != 0 {
			t.Errorf("max step %d, rate %v: Stats() = %+v; want Waits %d, StepBoundTooSmall %t, P99FetchLatency 100ms, FetchErrors 0",
				tt.maxStep, tt.rate, s, tt.waits, tt.limited)
		}
		// Each rate is k runs over the time of k or k-1 runs (the clock
		// moves after a run), k >= 25: 20 M IDs/s and at most 0.5 % above.
		if s.Rate < 20e6 || s.Rate > 20.1e6 {
			t.Errorf("max step %d, rate %v: Stats().Rate = %v; want 20 M IDs/s, +0.5 %%", tt.maxStep, tt.rate, s.Rate)
		}
		switch {
		case !tt.limited && len(limits) != 0:
			t.Errorf("max step %d, rate %v: OnLimit calls %+v; want none", tt.maxStep, tt.rate, limits)
		case tt.limited && (len(limits) != 1 || !limits[0].Limited || limits[0].MaxStep != tt.maxStep || limits[0].Tag != tag ||
			limits[0].P99 != 100*time.Millisecond || !strings.Contains(limits[0].String(), "step bound too small for this rate")):
			t.Errorf("max step %d, rate %v: OnLimit calls %+v; want one, Limited, with the max step, the tag and p99 100ms", tt.maxStep, tt.rate, limits)
		}
		mu.Unlock()
		a.Close()
	}
}

// planRun is one allocator run on a simulated clock: the steps it asked
// for and its Stats.
type planRun struct {
	steps []int64
	stats segment.Stats
}

// runPlan consumes a tag whose row's step is row with the adaptive
// prefetcher (max step maxStep), every fetch taking lat of the simulated
// clock, through phases of (rate IDs/s, run IDs per call, until this many
// segments past the first are fetched).
func runPlan(t *testing.T, row, maxStep int64, lat time.Duration, phases ...[3]float64) planRun {
	t.Helper()
	dsn := redisDSN(t)
	st, err := segment.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tag := uniqueTag(t, dsn)
	initTag(t, dsn, tag, row)
	sm := newSim(func() time.Duration { return lat })
	var mu sync.Mutex
	var r planRun
	a := sm.newAllocator(t, segment.Config{Store: st, Tag: tag, MaxStep: maxStep,
		OnFetch: func(f segment.Fetch) {
			mu.Lock()
			r.steps = append(r.steps, f.Step)
			mu.Unlock()
		}})
	for _, ph := range phases {
		sm.consume(t, a, ph[0], int(ph[1]), int(ph[2]))
	}
	r.stats = a.Stats()
	a.Close()
	mu.Lock()
	defer mu.Unlock()
	r.steps = slices.Clone(r.steps)
	return r
}

// The second fetch starts once segment.FirstSample (256) IDs of the first
// segment are issued, not at 10 % of it: a tag whose row's step is 100,000
// used at 1 M IDs/s (in runs of 64) with 95 ms fetches. Its 256th ID comes
// 192 µs in, a burst (under prefetch.MinUseSpan), so the second step is the
// max step, 1,000,000, and it returns at 95.2 ms, before the first segment
// runs out at 100 ms: no wait. Before, the fetch started at the 10,000th
// ID, 10 ms in, asked 382,436 (2 × 1 M/s × 95 ms × 2, the rate measured
// over whole runs a little above 1 M/s) and returned at 105 ms, 5 ms after
// the first segment ran out: the first switch waited.
func TestPrefetchFirstSample(t *testing.T) {
	r := runPlan(t, 100_000, 1_000_000, 95*time.Millisecond, [3]float64{1e6, 64, 3})
	if want := []int64{0, 1_000_000, 1_000_000, 1_000_000}; !slices.Equal(r.steps, want) || r.stats.Waits != 0 {
		t.Errorf("steps %v, waits %d; want %v, 0", r.steps, r.stats.Waits, want)
	}
}

// A slow tag's steps follow Leaf's rule alone: at 10 IDs/s with 100 ms
// fetches the adaptive figure (2 × 10 × 0.1 s × 2 = 4 IDs) is far below
// the step. A step doubles while the segment before was fetched under 15
// minutes earlier (at the 10 % of the one before that: 8000 IDs, 90 % of
// them, and 1600 of the next last 14 min 40 s) and stays between 15 and 30
// (90 % of 16,000 and 3200: 29 min 20 s).
func TestPrefetchSlowTag(t *testing.T) {
	r := runPlan(t, 1000, 16_000_000, 100*time.Millisecond, [3]float64{10, 1, 6})
	if want := []int64{0, 2000, 4000, 8000, 16000, 32000, 32000}; !slices.Equal(r.steps, want) || r.stats.Waits != 0 {
		t.Errorf("steps %v, waits %d; want %v, 0", r.steps, r.stats.Waits, want)
	}
}

// Steps shrink when the rate falls, however slowly the rate's moving
// average follows: 20 M IDs/s (in runs of 4096) takes the step to the max,
// 16,000,000, then 10 IDs/s (in runs of 10,000) halves it at each segment
// (each lasted past 30 minutes), with 2 s fetches. The raise to twice
// rate × p99 × Safety is capped by what lasts 30 minutes at the newest
// rate measured (prefetch.Planner.Latest). Before, the cap came from the
// average alone, which halves once per observation (twice per segment):
// 2 × 2 s × 2 × the average kept the step at 16,000,000, 18.5 days of IDs
// at 10 IDs/s, for 4 segments more ([0, 16 M × 7, 8 M, 4 M, 2 M]).
func TestPrefetchStepShrinks(t *testing.T) {
	r := runPlan(t, 1000, 16_000_000, 2*time.Second, [3]float64{20e6, 4096, 3}, [3]float64{10, 10_000, 10})
	want := []int64{0, 16_000_000, 16_000_000, 16_000_000, 16_000_000, 8_000_000, 4_000_000, 2_000_000, 1_000_000, 500_000, 250_000}
	if !slices.Equal(r.steps, want) {
		t.Errorf("steps %v; want %v", r.steps, want)
	}
}

// A segment fetched while no rate is known (every use observed so far a
// burst) starts the next fetch after segment.FirstSample IDs, as the first
// does: at 20 M IDs/s (runs of 4096) with 100 ms fetches and a max step of
// 2,100,000 (105 ms of IDs, not Limited), the second segment, the max step
// after the first segment's burst, fetches the third at its 256th ID,
// 12.8 µs in, and it returns 4.8 ms before the second runs out. Only the
// first switch waits (the first call asks 4096 of the 1000 the first
// segment holds). Before, the second segment's fetch started at its 10 %,
// 10.5 ms in, and returned 5.5 ms after it ran out: 2 waits.
func TestPrefetchUnknownRateSample(t *testing.T) {
	r := runPlan(t, 1000, 2_100_000, 100*time.Millisecond, [3]float64{20e6, 4096, 5})
	if want := []int64{0, 2_100_000, 2_100_000, 2_100_000, 2_100_000, 2_100_000}; !slices.Equal(r.steps, want) || r.stats.Waits != 1 || r.stats.StepBoundTooSmall {
		t.Errorf("steps %v, waits %d, step bound too small %t; want %v, 1, false", r.steps, r.stats.Waits, r.stats.StepBoundTooSmall, want)
	}
}
