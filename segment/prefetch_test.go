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
func TestPrefetchPlanFromFirstSwitch(t *testing.T) {
	dsn := redisDSN(t)
	st, err := segment.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tt := range []struct {
		maxStep int64
		waits   int64
		limited bool
	}{
		{16_000_000, 1, false},
		{1_000_000, 5, true},
	} {
		tag := uniqueTag(t, dsn)
		initTag(t, dsn, tag, 1000)
		sm := newSim(func() time.Duration { return 100 * time.Millisecond })
		var mu sync.Mutex
		var steps []int64
		var limits []segment.Limit
		a := sm.newAllocator(t, segment.Config{Store: st, Tag: tag, MaxStep: tt.maxStep,
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
		want := []int64{0, tt.maxStep, tt.maxStep, tt.maxStep, tt.maxStep, tt.maxStep}
		if !slices.Equal(steps, want) {
			t.Errorf("max step %d: steps asked = %v; want %v", tt.maxStep, steps, want)
		}
		if s.Waits != tt.waits || s.StepBoundTooSmall != tt.limited || s.P99FetchLatency != 100*time.Millisecond {
			t.Errorf("max step %d: Stats() = %+v; want Waits %d, StepBoundTooSmall %t, P99FetchLatency 100ms",
				tt.maxStep, s, tt.waits, tt.limited)
		}
		// Each rate is k runs over the time of k or k-1 runs (the clock
		// moves after a run), k >= 25: 20 M IDs/s and at most 0.5 % above.
		if s.Rate < 20e6 || s.Rate > 20.1e6 {
			t.Errorf("max step %d: Stats().Rate = %v; want 20 M IDs/s, +0.5 %%", tt.maxStep, s.Rate)
		}
		switch {
		case !tt.limited && len(limits) != 0:
			t.Errorf("max step %d: OnLimit calls %+v; want none", tt.maxStep, limits)
		case tt.limited && (len(limits) != 1 || !limits[0].Limited || limits[0].MaxStep != tt.maxStep || limits[0].Tag != tag ||
			limits[0].P99 != 100*time.Millisecond || !strings.Contains(limits[0].String(), "step bound too small for this rate")):
			t.Errorf("max step %d: OnLimit calls %+v; want one, Limited, with the max step, the tag and p99 100ms", tt.maxStep, limits)
		}
		mu.Unlock()
		a.Close()
	}
}
