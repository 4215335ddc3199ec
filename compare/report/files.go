// Package report draws a compare.Report for people: the charts of a run
// as PNG and SVG (gonum.org/v1/plot), beside the data files and the
// self-contained report.html that compare writes itself. It is apart from
// compare so that a program importing compare (the harness, statistics
// and results) pulls in no plotting library.
package report

import (
	"slices"

	"github.com/idgenkit/idgen/compare"
)

// ChartFiles are the charts WriteCharts draws into its directory.
var ChartFiles = []string{
	"throughput.png", "throughput.svg",
	"index_size.png", "index_size.svg",
	"leaf_density.png", "leaf_density.svg",
}

// OutputFiles are the files WriteFiles writes into its directory:
// compare.DataFiles, then ChartFiles.
var OutputFiles = slices.Concat(compare.DataFiles, ChartFiles)

// WriteFiles writes r into dir, creating it: r.WriteFiles's results.json,
// results.csv and report.html, then the charts of WriteCharts. Errors are
// the file system's, or the chart's named.
func WriteFiles(r *compare.Report, dir string) error {
	if err := r.WriteFiles(dir); err != nil {
		return err
	}
	return WriteCharts(r, dir)
}
