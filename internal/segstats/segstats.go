// Package segstats holds the counters of a segment allocator (package
// segment's Stats), apart from the allocator, so that a server reads them
// without linking the store drivers.
package segstats

import "time"

// Stats are a segment Allocator's counters, a plain value (see
// segment.Allocator.Stats; segment.Stats is this type).
type Stats struct {
	Segments        int64         // segments fetched, the first included
	FetchErrors     int64         // failed fetch attempts
	FetchLatency    time.Duration // total latency of successful fetches
	MaxFetchLatency time.Duration // the slowest successful fetch
	Remaining       int64         // IDs left in the current and next segments
	Step            int64         // the latest segment's step
	Waits           int64         // calls that found both segments empty and waited for a fetch
	Unavailable     int64         // calls that got idgen.ErrUnavailable

	// The adaptive prefetcher's figures (zero with FixedPrefetch): the
	// consumption rate in IDs/s (moving average), the p99 of the recent
	// fetch latencies, and the "step bound too small for this rate"
	// condition: MaxStep IDs last less than P99FetchLatency at Rate, so
	// callers wait at each switch whatever the timing (see segment.Config.OnLimit).
	Rate              float64
	P99FetchLatency   time.Duration
	StepBoundTooSmall bool
}

// MeanFetchLatency returns FetchLatency / Segments.
func (s Stats) MeanFetchLatency() time.Duration {
	if s.Segments == 0 {
		return 0
	}
	return s.FetchLatency / time.Duration(s.Segments)
}
