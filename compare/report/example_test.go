package report_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/compare/report"
	"github.com/idgenkit/idgen/internal/stats"
)

// WriteFiles writes a Report's data files, report.html and the charts.
func ExampleWriteFiles() {
	density := 90.1
	rep := &compare.Report{Engine: compare.EnginePostgres, ServerVersion: "17.2", SharedBuffers: "128MB",
		Rows: 1000, Writers: 1, Batch: 100, Runs: 1,
		Results: []compare.Result{{Engine: compare.EnginePostgres, Strategy: compare.Baseline, Rows: 1000, RowsPerSec: 50000,
			RowsPerSecTenths: []float64{50000, 50000, 50000, 50000, 50000, 50000, 50000, 50000, 50000, 50000},
			IndexBytes:       40960, AvgLeafDensity: &density}}}
	dir, err := os.MkdirTemp("", "report")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if err := report.WriteFiles(rep, dir); err != nil {
		panic(err)
	}
	for _, f := range report.OutputFiles() {
		fi, err := os.Stat(filepath.Join(dir, f))
		fmt.Println(f, err == nil && fi.Size() > 0)
	}
	// Output:
	// results.json true
	// results.csv true
	// report.html true
	// throughput.png true
	// throughput.svg true
	// index_size.png true
	// index_size.svg true
	// leaf_density.png true
	// leaf_density.svg true
}

// A ratio to the baseline prints as a number when its interval excludes
// 1, and as "≈" (no significant difference) when it contains 1.
func ExampleFormatRatio() {
	uuidv4 := stats.Ratios([]float64{70, 66, 74}, []float64{100, 100, 100})
	uuidv7 := stats.Ratios([]float64{98, 104, 101}, []float64{100, 100, 100})
	for _, rs := range [][]float64{uuidv4, uuidv7} {
		e := compare.Estimate{Median: stats.Median(rs), CI: stats.BootstrapCI(rs, 7)}
		fmt.Printf("%s (median %.2f, CI [%.2f–%.2f])\n", report.FormatRatio(e), e.Median, e.CI[0], e.CI[1])
	}
	// Output:
	// 0.70 (median 0.70, CI [0.66–0.74])
	// ≈ (median 1.01, CI [0.98–1.04])
}
