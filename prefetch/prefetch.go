// Package prefetch decides when a consumer of IDs fetched in blocks should
// start fetching the next block, and how large that block should be, from
// two measured figures: the consumption rate and the recent p99 fetch
// latency. The segment allocator (package segment) and the Go client
// (package client) share it.
//
// The rule: start the next fetch once the IDs remaining fall below
//
//	Threshold = rate (IDs/s) × p99 fetch latency (s) × Safety
//
// and make the next block Size = 2 × Threshold, within [Min, Max], so
// that the fetch it triggers begins about halfway through it. A block
// smaller than rate × latency runs out before the next fetch returns: when
// Max is below that, waits cannot be avoided (Limited).
//
// Before any rate is measured, a block used up in less than MinUseSpan (a
// burst) proves a rate of at least its size / MinUseSpan but bounds it
// from neither side usefully; Burst reports it, so that a caller can size
// the next block at Max at once instead of doubling towards it.
package prefetch

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/idgenkit/idgen/internal/errclass"
)

// Defaults of Config's zero values.
const (
	DefaultSafety  = 2.0
	DefaultSamples = 64
	// MinUseSpan is the shortest span ObserveUse takes a rate from: a
	// burst of microseconds says little of the rate to come.
	MinUseSpan = time.Millisecond
	// rateWeight is the weight of the newest rate observation in the
	// moving average.
	rateWeight = 0.5
)

// ErrConfig reports a Config that New refuses.
var ErrConfig = errclass.Invalid("prefetch: invalid configuration")

// Config bounds a Planner. Min and Max are required.
type Config struct {
	// Min and Max bound Size, in IDs: 1 <= Min <= Max.
	Min, Max int64
	// Safety multiplies rate × p99 latency, >= 1. Zero means 2.
	Safety float64
	// Samples is how many recent fetch latencies the p99 is taken over,
	// 1 to 4096. Zero means 64.
	Samples int
}

// A Planner holds the figures and answers Threshold and Size. Safe for
// concurrent use; its methods take a mutex and are meant for once per
// block, not once per ID.
type Planner struct {
	cfg Config

	mu    sync.Mutex
	lat   []time.Duration // ring of recent latencies
	pos   int
	rate  float64 // IDs/s, moving average; 0 until observed
	last  float64 // IDs/s, the newest rate observed (not a burst); 0 until observed
	floor float64 // IDs/s at least: the largest burst / MinUseSpan; 0 when none
	p99   time.Duration
}

// New returns a Planner for cfg. Errors wrap ErrConfig and name the field.
func New(cfg Config) (*Planner, error) {
	switch {
	case cfg.Min < 1 || cfg.Max < cfg.Min:
		return nil, fmt.Errorf("%w: Min %d and Max %d: want 1 <= Min <= Max", ErrConfig, cfg.Min, cfg.Max)
	case math.IsNaN(cfg.Safety) || (cfg.Safety != 0 && cfg.Safety < 1):
		return nil, fmt.Errorf("%w: Safety %v: want at least 1 (0: %v)", ErrConfig, cfg.Safety, DefaultSafety)
	case cfg.Samples < 0 || cfg.Samples > 4096:
		return nil, fmt.Errorf("%w: Samples %d: want 1 to 4096 (0: %d)", ErrConfig, cfg.Samples, DefaultSamples)
	}
	if cfg.Safety == 0 {
		cfg.Safety = DefaultSafety
	}
	if cfg.Samples == 0 {
		cfg.Samples = DefaultSamples
	}
	return &Planner{cfg: cfg, lat: make([]time.Duration, 0, cfg.Samples)}, nil
}

// ObserveFetch records the latency of one successful fetch.
func (p *Planner) ObserveFetch(latency time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.lat) < cap(p.lat) {
		p.lat = append(p.lat, latency)
	} else {
		p.lat[p.pos] = latency
		p.pos = (p.pos + 1) % len(p.lat)
	}
	s := slices.Clone(p.lat)
	slices.Sort(s)
	p.p99 = s[(len(s)*99+99)/100-1]
}

// ObserveUse records that n IDs were consumed over d. Observations with
// n <= 0 are ignored; those with d < MinUseSpan (bursts) leave the rate
// alone and raise the floor Burst reports to n / MinUseSpan.
func (p *Planner) ObserveUse(n int64, d time.Duration) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d < MinUseSpan {
		p.floor = max(p.floor, float64(n)/MinUseSpan.Seconds())
		return
	}
	r := float64(n) / d.Seconds()
	p.last = r
	if p.rate == 0 {
		p.rate = r
	} else {
		p.rate = rateWeight*r + (1-rateWeight)*p.rate
	}
}

// Figures returns the consumption rate (IDs/s) and the p99 fetch latency
// the Planner holds; zero before the first observations.
func (p *Planner) Figures() (rate float64, p99 time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rate, p.p99
}

// Latest returns the newest rate observed (IDs/s), bursts aside; zero
// before the first. The moving average Figures returns follows a rate that
// falls by halves, one observation at a time: 20 rounds from 20 M IDs/s to
// 10. A caller that must not keep a large block for a rate that has
// fallen (a block that would last for days) bounds it by Latest.
func (p *Planner) Latest() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// Need returns rate × p99 × Safety, in IDs, uncapped: the IDs that must
// remain when a fetch starts for no consumer to wait. Zero before both
// figures are observed.
func (p *Planner) Need() int64 {
	rate, p99 := p.Figures()
	v := math.Ceil(rate * p99.Seconds() * p.cfg.Safety)
	if v >= math.MaxInt64/4 {
		return math.MaxInt64 / 4
	}
	return int64(v)
}

// Threshold returns the remaining IDs below which the next fetch should
// start: Need, at most Max (a block holds no more).
func (p *Planner) Threshold() int64 { return min(p.Need(), p.cfg.Max) }

// Size returns the next block's size: 2 × Need within [Min, Max].
func (p *Planner) Size() int64 { return min(max(2*p.Need(), p.cfg.Min), p.cfg.Max) }

// Burst reports whether a burst (a block used up in under MinUseSpan) is
// all the use observed so far: no rate is measured, and floor (IDs/s) is
// the least it can be. A block sized from the figures would then be sized
// from nothing; Max is the only size the figures do not rule out.
func (p *Planner) Burst() (floor float64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.floor, p.rate == 0 && p.floor > 0
}

// Limited reports whether Max is below rate × p99 fetch latency: a block
// of Max runs out before a fetch at p99 latency returns even when that
// fetch starts as the block does, so consumers wait by no fault of the
// timing. False before both figures are observed.
func (p *Planner) Limited() bool {
	rate, p99 := p.Figures()
	return rate*p99.Seconds() > float64(p.cfg.Max)
}
