package prefetch_test

import (
	"errors"
	"testing"
	"time"

	"github.com/idgenkit/idgen/prefetch"
)

func TestPlanner(t *testing.T) {
	p, err := prefetch.New(prefetch.Config{Min: 1000, Max: 10_000_000, Samples: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Size(); got != 1000 {
		t.Errorf("Size() before figures = %d; want Min 1000", got)
	}
	if got := p.Threshold(); got != 0 {
		t.Errorf("Threshold() before figures = %d; want 0", got)
	}
	for i := range 100 { // 1..100 ms: p99 is 99 ms
		p.ObserveFetch(time.Duration(i+1) * time.Millisecond)
	}
	p.ObserveUse(1_000_000, time.Second) // 1 M IDs/s
	if rate, p99 := p.Figures(); rate != 1e6 || p99 != 99*time.Millisecond {
		t.Errorf("Figures() = %v, %v; want 1e6, 99ms", rate, p99)
	}
	tests := []struct {
		name string
		got  int64
		want int64
	}{
		{"Need", p.Need(), 198_000},
		{"Threshold", p.Threshold(), 198_000},
		{"Size", p.Size(), 396_000},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s() = %d; want %d", tt.name, tt.got, tt.want)
		}
	}
	p.ObserveUse(300_000_000, time.Second) // the average goes to 150.5 M IDs/s
	if got, want := p.Size(), int64(10_000_000); got != want || !p.Limited() {
		t.Errorf("Size() = %d, Limited() = %t at 150 M IDs/s; want Max %d, true", got, p.Limited(), want)
	}
}

func TestPlannerWindow(t *testing.T) {
	p, _ := prefetch.New(prefetch.Config{Min: 1, Max: 1 << 40, Samples: 4})
	for _, ms := range []int{500, 1, 1, 1, 1} { // the 500 ms outlier leaves the window
		p.ObserveFetch(time.Duration(ms) * time.Millisecond)
	}
	if _, p99 := p.Figures(); p99 != time.Millisecond {
		t.Errorf("p99 over the last 4 of 500,1,1,1,1 ms = %v; want 1ms", p99)
	}
}

func TestNewBadConfig(t *testing.T) {
	for _, c := range []prefetch.Config{{Min: 0, Max: 1}, {Min: 2, Max: 1}, {Min: 1, Max: 1, Safety: 0.5}, {Min: 1, Max: 1, Samples: 5000}} {
		if _, err := prefetch.New(c); !errors.Is(err, prefetch.ErrConfig) {
			t.Errorf("New(%+v) = %v; want ErrConfig", c, err)
		}
	}
}

func TestObserveUseShortSpan(t *testing.T) {
	p, _ := prefetch.New(prefetch.Config{Min: 1, Max: 1 << 40})
	p.ObserveUse(1000, 10*time.Microsecond) // a burst: ignored
	if rate, _ := p.Figures(); rate != 0 {
		t.Errorf("rate after 1000 IDs in 10µs = %v; want 0 (ignored, under %v)", rate, prefetch.MinUseSpan)
	}
}

// A burst sets the floor Burst reports while no rate is measured; the
// first measured rate ends it. Limited compares rate × p99 with Max.
func TestPlannerBurst(t *testing.T) {
	p, _ := prefetch.New(prefetch.Config{Min: 1000, Max: 1_000_000})
	if floor, ok := p.Burst(); ok || floor != 0 {
		t.Errorf("Burst() before any use = %v, %t; want 0, false", floor, ok)
	}
	p.ObserveUse(1000, 0)                   // 1000 IDs at once: at least 1000 / 1 ms
	p.ObserveUse(500, 100*time.Microsecond) // a smaller burst leaves the floor
	if floor, ok := p.Burst(); !ok || floor != 1e6 {
		t.Errorf("Burst() after 1000 IDs at once = %v, %t; want 1e6, true", floor, ok)
	}
	if rate, _ := p.Figures(); rate != 0 {
		t.Errorf("rate after bursts only = %v; want 0", rate)
	}
	p.ObserveFetch(100 * time.Millisecond)
	p.ObserveUse(1_000_000, 100*time.Millisecond) // 10 M IDs/s: one Max lasts exactly one fetch
	if _, ok := p.Burst(); ok {
		t.Error("Burst() after a measured rate = true; want false")
	}
	if p.Limited() {
		t.Error("Limited() with Max lasting exactly the p99 latency = true; want false")
	}
	p.ObserveUse(3_000_000, 100*time.Millisecond) // 30 M IDs/s: the average goes to 20 M
	if rate, _ := p.Figures(); rate != 20e6 || !p.Limited() {
		t.Errorf("Figures() rate = %v, Limited() = %t; want 2e7, true (1 M IDs last 50 ms, under the 100 ms p99)", rate, p.Limited())
	}
}

// Latest is the newest measured rate, while the moving average halves its
// way down: after 20 M IDs/s, one observation of 10 IDs/s leaves the
// average at 10,000,005. Bursts leave both alone.
func TestPlannerLatest(t *testing.T) {
	p, _ := prefetch.New(prefetch.Config{Min: 1, Max: 1 << 40})
	if got := p.Latest(); got != 0 {
		t.Errorf("Latest() before any use = %v; want 0", got)
	}
	p.ObserveUse(20_000_000, time.Second)
	p.ObserveUse(10_000, 1000*time.Second)
	p.ObserveUse(1000, 0) // a burst
	if rate, _ := p.Figures(); rate != 10_000_005 || p.Latest() != 10 {
		t.Errorf("after 20 M IDs/s, 10 IDs/s and a burst: rate %v, Latest() %v; want 10000005, 10", rate, p.Latest())
	}
}
