package compare_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/internal/testenv"
)

// BenchmarkHarness runs the harness check alone: the keys 1..N sent by the
// harness (binary COPY, batches of 1000) against the same keys generated
// by the server (INSERT ... SELECT generate_series per batch), with the
// same writers, over 3 shuffled rounds. The ratio should stay ≥ 0.80.
func BenchmarkHarness(b *testing.B) {
	dsn := testenv.PostgresDSN(b)
	for _, writers := range []int{1, 4} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			for b.Loop() {
				rep, err := compare.Run(context.Background(), compare.Config{
					DSN: dsn, Rows: 200_000, Writers: writers, Strategies: []string{compare.Baseline},
				})
				if err != nil {
					b.Fatal(err)
				}
				cs, ref := rep.Find(compare.ClientSeries), rep.Find(compare.Reference)
				b.ReportMetric(cs.RowsPerSec, "harness-rows/s")
				b.ReportMetric(ref.RowsPerSec, "server-rows/s")
				b.ReportMetric(rep.Harness.Ratio.Median, "harness/server")
			}
		})
	}
}
