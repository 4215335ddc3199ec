package segment_test

import (
	"context"
	"math/bits"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/snowflake"
)

// benchAllocator returns an allocator with a fixed step on a fresh tag.
func benchAllocator(b *testing.B, dsn string, step int64) *segment.Allocator {
	b.Helper()
	tag := uniqueTag(b, dsn)
	initTag(b, dsn, tag, step)
	return dial(b, dsn, segment.Config{Tag: tag, MinStep: step, MaxStep: step})
}

func report(b *testing.B, ids int, a *segment.Allocator) {
	b.ReportMetric(float64(ids)/b.Elapsed().Seconds(), "ids/s")
	if a != nil {
		st := a.Stats()
		b.ReportMetric(float64(st.Segments)*1e6/float64(ids), "round-trips/1M-ids")
		b.ReportMetric(float64(st.Waits), "waits")
	}
}

// Next from the buffer, one goroutine: the store is touched once per
// 1,000,000 IDs.
func BenchmarkNext(b *testing.B) {
	a := benchAllocator(b, redisDSN(b), 1_000_000)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		if _, err := a.Next(ctx); err != nil {
			b.Fatal(err)
		}
		n++
	}
	report(b, n, a)
}

// The peer in the same run: idgen's own Snowflake (twitter layout), which
// needs no store but waits for the next ms after 4,096 IDs.
func BenchmarkNextSnowflakePeer(b *testing.B) {
	l, _ := snowflake.Preset("twitter")
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: l})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	n := 0
	for b.Loop() {
		if _, err := g.Next(ctx); err != nil {
			b.Fatal(err)
		}
		n++
	}
	report(b, n, nil)
}

func BenchmarkNextParallel(b *testing.B) {
	a := benchAllocator(b, redisDSN(b), 1_000_000)
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := a.Next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	report(b, b.N, a)
}

func BenchmarkNextN4096(b *testing.B) {
	a := benchAllocator(b, redisDSN(b), 1_000_000)
	ctx := context.Background()
	dst := make([]idgen.ID, 4096)
	n := 0
	for b.Loop() {
		if _, err := a.NextN(ctx, dst); err != nil {
			b.Fatal(err)
		}
		n += len(dst)
	}
	report(b, n, a)
}

// Each store at step 10,000: what the fetches cost at full speed.
func BenchmarkStore(b *testing.B) {
	for _, s := range stores {
		b.Run(s.name, func(b *testing.B) {
			a := benchAllocator(b, s.dsn(b), 10_000)
			ctx := context.Background()
			n := 0
			for b.Loop() {
				if _, err := a.Next(ctx); err != nil {
					b.Fatal(err)
				}
				n++
			}
			report(b, n, a)
			b.ReportMetric(float64(a.Stats().MeanFetchLatency().Microseconds()), "µs/fetch")
		})
	}
}

// hist is a log-linear latency histogram: 16 sub-buckets per power of two.
type hist struct {
	counts [64 * 16]int64
	total  int64
	max    time.Duration
}

func (h *hist) add(d time.Duration) {
	v := uint64(max(d, 1))
	e := bits.Len64(v) - 1
	sub := 0
	if e >= 4 {
		sub = int(v>>uint(e-4)) & 15
	}
	h.counts[e*16+sub]++
	h.total++
	h.max = max(h.max, d)
}

// quantile returns the upper bound of the bucket holding quantile q.
func (h *hist) quantile(q float64) time.Duration {
	want := int64(q * float64(h.total))
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen > want {
			e, sub := i/16, i%16
			if e < 4 {
				return time.Duration(1) << uint(e+1)
			}
			return time.Duration(uint64(16+sub+1) << uint(e-4))
		}
	}
	return h.max
}

// Next latency across 100 segment switches (step 100,000, prefetch at
// 10 %): no call waits on the store while it answers within the window.
func BenchmarkSwitchLatency(b *testing.B) {
	for _, s := range stores {
		b.Run(s.name, func(b *testing.B) {
			const step, switches = 100_000, 100
			ctx := context.Background()
			var h hist
			var waits int64
			var maxFetch time.Duration
			for b.Loop() {
				a := benchAllocator(b, s.dsn(b), step)
				for range step * switches {
					t0 := time.Now()
					_, err := a.Next(ctx)
					h.add(time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
				}
				waits += a.Stats().Waits
				maxFetch = max(maxFetch, a.Stats().MaxFetchLatency)
				a.Close()
			}
			b.ReportMetric(float64(h.max.Nanoseconds()), "max-ns")
			b.ReportMetric(float64(h.quantile(0.999).Nanoseconds()), "p99.9-ns")
			b.ReportMetric(float64(waits), "waits")
			b.ReportMetric(float64(maxFetch.Microseconds()), "max-fetch-µs")
			// The prefetch window: the time the 90 % of a segment left at the
			// prefetch lasts at the measured rate.
			perID := b.Elapsed() / time.Duration(b.N*step*switches)
			b.ReportMetric(float64((perID * step * 9 / 10).Microseconds()), "window-µs")
		})
	}
}

// The floor of any Next that two goroutines may share: one atomic add, in
// the same run, for the ratio Next / floor.
func BenchmarkAtomicAddFloor(b *testing.B) {
	var x atomic.Int64
	n := 0
	for b.Loop() {
		x.Add(1)
		n++
	}
	report(b, n, nil)
}
