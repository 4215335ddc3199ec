package compare

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteTable writes the report as aligned text tables: the metrics with
// ratios to the Baseline ("×bs"), rows/s per tenth of the run, the harness
// check (Baseline against Reference) and the notes.
func (r *Report) WriteTable(w io.Writer) error {
	bs := r.Find(Baseline)
	var b strings.Builder
	fmt.Fprintf(&b, "idgen compare: %d rows (+%d preloaded), %d writers, batch %d, shared_buffers %s\n",
		r.Rows, r.Preload, r.Writers, r.Batch, r.SharedBuffers)
	fmt.Fprintf(&b, "%s\n\n", r.Server)

	head := []string{"strategy", "key B", "rows/s", "×bs", "p50 ms", "p99 ms", "index MB", "×bs", "B/row",
		"leaf pages", "density %", "frag %", "splits", "WAL splits", "WAL MB", "×bs", "FPI", "idx read", "idx hit"}
	rows := [][]string{head}
	for _, x := range r.Results {
		row := []string{
			x.Strategy, fmt.Sprint(x.KeyBytes),
			fmt.Sprintf("%.0f", x.RowsPerSec), ratio(x.RowsPerSec, bs, func(b *Result) float64 { return b.RowsPerSec }),
			optF(x.P50Ms, 2), optF(x.P99Ms, 2),
			fmt.Sprintf("%.1f", float64(x.IndexBytes)/(1<<20)), ratio(float64(x.IndexBytes), bs, func(b *Result) float64 { return float64(b.IndexBytes) }),
			fmt.Sprintf("%.1f", x.IndexBytesPerRow),
			optI(x.LeafPages), optF(x.AvgLeafDensity, 1), optF(x.LeafFragmentation, 1),
			optI(x.PageSplits), optI(x.WALPageSplits),
			fmt.Sprintf("%.1f", float64(x.WALBytes)/(1<<20)), ratio(float64(x.WALBytes), bs, func(b *Result) float64 { return float64(b.WALBytes) }),
			optI(x.WALFPI), optI(x.IdxBlksRead), optI(x.IdxBlksHit),
		}
		rows = append(rows, row)
	}
	writeAligned(&b, rows)

	b.WriteString("\nrows/s by tenth of the measured rows\n")
	tenths := [][]string{{"strategy", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}}
	for _, x := range r.Results {
		if len(x.RowsPerSecTenths) == 0 {
			continue
		}
		row := []string{x.Strategy}
		for _, v := range x.RowsPerSecTenths {
			row = append(row, fmt.Sprintf("%.0f", v))
		}
		tenths = append(tenths, row)
	}
	writeAligned(&b, tenths)

	if ref := r.Find(Reference); bs != nil && ref != nil && ref.RowsPerSec > 0 {
		fmt.Fprintf(&b, "\nharness check: %s by COPY %.0f rows/s, plain INSERT ... SELECT generate_series %.0f rows/s: %.2f× (within 20%% when ≥ 0.80)\n",
			Baseline, bs.RowsPerSec, ref.RowsPerSec, bs.RowsPerSec/ref.RowsPerSec)
		for _, x := range r.Results {
			if x.Scheme != Baseline && x.Column == "bigint" && x.Method == "copy" {
				fmt.Fprintf(&b, "               same harness, keys from the client (%s): %.0f rows/s: %.2f×\n",
					x.Strategy, x.RowsPerSec, x.RowsPerSec/ref.RowsPerSec)
				break
			}
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func ratio(v float64, bs *Result, f func(*Result) float64) string {
	if bs == nil || f(bs) == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v/f(bs))
}

func optF(v *float64, prec int) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", prec, *v)
}

func optI(v *int64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprint(*v)
}

// writeAligned writes rows as columns: the first left-aligned, the others
// right-aligned, two spaces apart.
func writeAligned(b *strings.Builder, rows [][]string) {
	var width []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i == 0:
				line.WriteString(c + pad)
			default:
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
