package compare_test

import (
	"context"
	"testing"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/internal/testenv"
)

// BenchmarkHarness checks that the harness is not what it measures: the
// bigserial baseline (binary COPY, 4 writers, batches of 1000) against a
// plain INSERT ... SELECT generate_series of the same rows, in the same run.
// baseline/reference should stay ≥ 0.80.
func BenchmarkHarness(b *testing.B) {
	dsn := testenv.PostgresDSN(b)
	for b.Loop() {
		rep, err := compare.Run(context.Background(), compare.Config{
			DSN: dsn, Rows: 200_000, Strategies: []string{compare.Baseline},
		})
		if err != nil {
			b.Fatal(err)
		}
		bs, ref := rep.Find(compare.Baseline), rep.Find(compare.Reference)
		b.ReportMetric(bs.RowsPerSec, "copy-rows/s")
		b.ReportMetric(ref.RowsPerSec, "insert-select-rows/s")
		b.ReportMetric(bs.RowsPerSec/ref.RowsPerSec, "copy/insert-select")
	}
}

// BenchmarkHarnessOneWriter is BenchmarkHarness with a single writer, the
// same concurrency as the INSERT ... SELECT.
func BenchmarkHarnessOneWriter(b *testing.B) {
	dsn := testenv.PostgresDSN(b)
	for b.Loop() {
		rep, err := compare.Run(context.Background(), compare.Config{
			DSN: dsn, Rows: 200_000, Writers: 1, Strategies: []string{compare.Baseline},
		})
		if err != nil {
			b.Fatal(err)
		}
		bs, ref := rep.Find(compare.Baseline), rep.Find(compare.Reference)
		b.ReportMetric(bs.RowsPerSec, "copy-rows/s")
		b.ReportMetric(ref.RowsPerSec, "insert-select-rows/s")
		b.ReportMetric(bs.RowsPerSec/ref.RowsPerSec, "copy/insert-select")
	}
}
