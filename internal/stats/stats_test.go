package stats_test

import (
	"math"
	"testing"

	"github.com/idgenkit/idgen/internal/stats"
)

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"odd", []float64{3, 1, 2}, 2},
		{"even", []float64{4, 1, 3, 2}, 2.5},
		{"one", []float64{7}, 7},
		{"repeats", []float64{5, 5, 1, 9, 5}, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := stats.Median(tt.xs); got != tt.want {
				t.Errorf("Median(%v) = %v; want %v", tt.xs, got, tt.want)
			}
		})
	}
	if got := stats.Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v; want NaN", got)
	}
	xs := []float64{3, 1, 2}
	stats.Median(xs)
	if xs[0] != 3 || xs[1] != 1 {
		t.Errorf("Median reordered its input: %v", xs)
	}
}

func TestBootstrapCI(t *testing.T) {
	twenty := []float64{101, 97, 99, 104, 96, 100, 102, 98, 103, 95, 100, 99, 101, 98, 102, 97, 100, 103, 99, 101}
	for _, tt := range []struct {
		name string
		xs   []float64
		seed uint64
		want stats.Interval
	}{
		// With 3 trials a resample's median is one of them, and the
		// smallest is the median with probability 7/27: the range.
		{"three trials: their range", []float64{388_000, 328_000, 350_000}, 1, stats.Interval{328_000, 388_000}},
		{"five trials: their range", []float64{5, 1, 4, 2, 3}, 42, stats.Interval{1, 5}},
		{"one trial", []float64{9}, 1, stats.Interval{9, 9}},
		{"twenty trials", twenty, 7, stats.Interval{98.5, 101}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := stats.BootstrapCI(tt.xs, tt.seed)
			if got != tt.want {
				t.Errorf("BootstrapCI(%v, %d) = %v; want %v", tt.xs, tt.seed, got, tt.want)
			}
			if again := stats.BootstrapCI(tt.xs, tt.seed); again != got {
				t.Errorf("BootstrapCI(%v, %d) again = %v; want %v (seeded)", tt.xs, tt.seed, again, got)
			}
		})
	}
}

func TestRatioSignificance(t *testing.T) {
	for _, tt := range []struct {
		name      string
		xs, base  []float64
		want      bool // significant: the interval excludes 1
		wantRatio float64
	}{
		// uuidv4 at 0.70× bigserial in each round: the interval excludes 1.
		{"slower in every round", []float64{70, 140, 35}, []float64{100, 200, 50}, true, 0.7},
		// Rounds disagree on the sign: the interval contains 1.
		{"noise", []float64{95, 210, 52}, []float64{100, 200, 50}, false, 1.04},
		// The pairs matter: unpaired, 90..110 against 100..200 would overlap.
		{"paired", []float64{110, 220, 121}, []float64{100, 200, 110}, true, 1.1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := stats.Ratios(tt.xs, tt.base)
			e := stats.Estimate{Median: stats.Median(r), CI: stats.BootstrapCI(r, 3)}
			if got := e.Significant(); got != tt.want || math.Abs(e.Median-tt.wantRatio) > 1e-9 {
				t.Errorf("ratio of %v to %v = %v %v (significant %v); want %v (significant %v)", tt.xs, tt.base, e.Median, e.CI, got, tt.wantRatio, tt.want)
			}
		})
	}
}

func TestCVAndSpread(t *testing.T) {
	xs := []float64{90, 100, 110}
	if got := stats.CV(xs); math.Abs(got-0.1) > 1e-12 {
		t.Errorf("CV(%v) = %v; want 0.1", xs, got)
	}
	if got := stats.CV([]float64{5}); got != 0 {
		t.Errorf("CV of one value = %v; want 0", got)
	}
	if got := stats.Spread([]float64{90.1, 89.7, 90.0}); math.Abs(got-0.4) > 1e-9 {
		t.Errorf("Spread = %v; want 0.4", got)
	}
	if got := stats.RelSpread([]float64{1000, 1020, 1010}); math.Abs(got-100*20.0/1010) > 1e-9 {
		t.Errorf("RelSpread = %v; want %v", got, 100*20.0/1010)
	}
}
