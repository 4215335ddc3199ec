// Package report writes a compare.Report for people: the text tables
// (WriteTable), the decision table and its recommendation (Decide), the
// verdicts in plain words (Verdict), the self-contained report.html with
// its inline SVG charts (WriteHTML), and the charts as PNG and SVG
// (gonum.org/v1/plot). It is apart from compare so that a program
// importing compare (the harness and its results) pulls in no plotting
// library and no wording.
package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/idgenkit/idgen/compare"
)

// ChartFiles returns the charts WriteCharts draws into its directory, in a
// new slice.
func ChartFiles() []string {
	return []string{
		"throughput.png", "throughput.svg",
		"index_size.png", "index_size.svg",
		"leaf_density.png", "leaf_density.svg",
	}
}

// OutputFiles returns the files WriteFiles writes into its directory, in a
// new slice: compare.DataFiles(), report.html, then ChartFiles.
func OutputFiles() []string {
	return slices.Concat(compare.DataFiles(), []string{"report.html"}, ChartFiles())
}

// WriteFiles writes r into dir, creating it: r.WriteFiles's results.json
// and results.csv, report.html (WriteHTML), then the charts of
// WriteCharts. Errors are the file system's, or the chart's named.
// The decision table keeps the schemes that meet every one of require.
func WriteFiles(r *compare.Report, dir string, require ...string) error {
	if err := r.WriteFiles(dir); err != nil {
		return err
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, r, require...); err != nil {
		return fmt.Errorf("compare/report: report.html: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), page.Bytes(), 0o644); err != nil {
		return err
	}
	return WriteCharts(r, dir)
}
