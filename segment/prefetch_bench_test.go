package segment_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/segment"
)

// slowStore is a real store whose Reserve takes 50 to 150 ms more: a store
// under load, far away, or both.
type slowStore struct{ segment.Store }

func (s slowStore) Reserve(ctx context.Context, tag string, step int64) (int64, int64, error) {
	d := 50*time.Millisecond + rand.N(100*time.Millisecond)
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	return s.Store.Reserve(ctx, tag, step)
}

// BenchmarkPrefetchSwitches consumes a tag at 20 M IDs/s, in runs of 4096
// IDs, from a store with 50-150 ms of injected fetch latency, and reports
// the waits per 100 segment switches, over all 30 and over those after the
// first 10 (the step starts at 1000 and must grow first): with the fixed 10 % prefetch and
// Leaf's doubling ("fixed") and with the adaptive prefetcher ("adaptive").
// At the default max step (1,000,000: 50 ms of IDs at 20 M/s, less than
// one fetch) no prefetch timing can avoid the waits; the max step of
// 16,000,000 lets the step grow past rate × p99 latency.
func BenchmarkPrefetchSwitches(b *testing.B) {
	const rate, run, switches, warmup = 20e6, 4096, 30, 10
	for _, maxStep := range []int64{segment.DefaultMaxStep, 16_000_000} {
		for _, fixed := range []bool{true, false} {
			name := fmt.Sprintf("max=%d/adaptive", maxStep)
			if fixed {
				name = fmt.Sprintf("max=%d/fixed", maxStep)
			}
			b.Run(name, func(b *testing.B) {
				dsn := redisDSN(b)
				for b.Loop() {
					tag := uniqueTag(b, dsn)
					initTag(b, dsn, tag, 1000)
					st, err := segment.Open(context.Background(), dsn)
					if err != nil {
						b.Fatal(err)
					}
					a, err := segment.New(context.Background(), segment.Config{Store: slowStore{st}, Tag: tag,
						MaxStep: maxStep, FixedPrefetch: fixed})
					if err != nil {
						b.Fatal(err)
					}
					dst := make([]idgen.ID, run)
					ctx := context.Background()
					start, issued, began, total := time.Now(), 0.0, time.Now(), 0
					var warmWaits int64 = -1
					for a.Stats().Segments <= switches {
						if warmWaits < 0 && a.Stats().Segments > warmup {
							warmWaits = a.Stats().Waits
						}
						t0 := time.Now()
						if _, err := a.NextN(ctx, dst); err != nil {
							b.Fatal(err)
						}
						if time.Since(t0) > time.Millisecond { // waited: pace from here, no catching up
							start, issued = time.Now(), 0
						}
						issued += run
						total += run
						if ahead := time.Duration(issued/rate*1e9) - time.Since(start); ahead > 0 {
							time.Sleep(ahead)
						}
					}
					s := a.Stats()
					b.ReportMetric(float64(s.Waits)*100/float64(s.Segments-1), "waits/100-switches")
					b.ReportMetric(float64(s.Waits-warmWaits)*100/float64(s.Segments-1-warmup), "waits/100-switches-after-10")
					b.ReportMetric(float64(s.Step), "last-step")
					b.ReportMetric(float64(total)/time.Since(began).Seconds(), "ids/s")
					a.Close()
					st.Close()
				}
			})
		}
	}
}
