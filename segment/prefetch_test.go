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
