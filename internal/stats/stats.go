// Package stats holds the statistics of idgen's measurements: medians,
// seeded percentile-bootstrap confidence intervals of the median, paired
// ratios, the coefficient of variation and spreads. compare reports its
// trials with them; tests that measure (migrate's, workerid's) may too.
package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Resamples is the number of bootstrap resamples behind every confidence
// interval.
const Resamples = 10_000

// Confidence is the level of every confidence interval.
const Confidence = 0.95

// Median returns the median of xs (the mean of the two middle values when
// their count is even); NaN when xs is empty. xs is not modified.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// An Interval is a confidence interval [Lo, Hi], in results.json as
// [lo, hi].
type Interval [2]float64

// Contains reports whether v lies in the interval, bounds included.
func (iv Interval) Contains(v float64) bool { return iv[0] <= v && v <= iv[1] }

// Width returns Hi - Lo.
func (iv Interval) Width() float64 { return iv[1] - iv[0] }

// BootstrapCI returns the 95 % percentile-bootstrap interval of the median
// of xs: Resamples resamples of len(xs) values drawn with replacement, by a
// PCG generator seeded with seed; the bounds are the 2.5th and 97.5th
// percentiles (nearest rank) of the resamples' medians. The same xs and
// seed give the same interval. One value gives [x, x]; none gives NaNs.
func BootstrapCI(xs []float64, seed uint64) Interval {
	n := len(xs)
	switch n {
	case 0:
		return Interval{math.NaN(), math.NaN()}
	case 1:
		return Interval{xs[0], xs[0]}
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	meds := make([]float64, Resamples)
	buf := make([]float64, n)
	for i := range meds {
		for j := range buf {
			buf[j] = xs[rng.IntN(n)]
		}
		meds[i] = Median(buf)
	}
	slices.Sort(meds)
	alpha := (1 - Confidence) / 2
	return Interval{Percentile(meds, alpha), Percentile(meds, 1-alpha)}
}

// Ratios returns xs[i]/base[i] for each round i: the pairs a ratio's
// interval resamples. Rounds where either is missing (NaN) or the base is
// zero are left out.
func Ratios(xs, base []float64) []float64 {
	var out []float64
	for i := range min(len(xs), len(base)) {
		if base[i] == 0 || math.IsNaN(xs[i]) || math.IsNaN(base[i]) {
			continue
		}
		out = append(out, xs[i]/base[i])
	}
	return out
}

// CV returns the coefficient of variation of xs: the sample standard
// deviation over the mean, as a fraction (0.1 = 10 %). Fewer than two
// values, or a zero mean, give 0.
func CV(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / math.Abs(mean)
}

// Spread returns max(xs) - min(xs); 0 for fewer than two values.
func Spread(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	return slices.Max(xs) - slices.Min(xs)
}

// RelSpread returns Spread(xs) as a percentage of the median (in points:
// 1.5 means 1.5 %); 0 when the median is 0.
func RelSpread(xs []float64) float64 {
	m := Median(xs)
	if len(xs) < 2 || m == 0 {
		return 0
	}
	return 100 * Spread(xs) / math.Abs(m)
}

// An Estimate is a figure over the trials: its median and 95 % interval.
type Estimate struct {
	Median float64  `json:"median"`
	CI     Interval `json:"ci"`
}

// EstimateOf returns the median and bootstrap interval of xs.
func EstimateOf(xs []float64, seed uint64) Estimate {
	return Estimate{Median: Median(xs), CI: BootstrapCI(xs, seed)}
}

// Significant reports whether the interval of a ratio excludes 1.0: the two
// rows differ beyond the trials' noise.
func (e Estimate) Significant() bool { return !e.CI.Contains(1) }

// Percentile returns the nearest-rank q-quantile (0 ≤ q ≤ 1) of sorted
// values; 0 when there are none.
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
