package compare_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/compare"
)

func p64(v int64) *int64    { return &v }
func pf(v float64) *float64 { return &v }
func tenths(v float64) []float64 {
	out := make([]float64, 10)
	for i := range out {
		out[i] = v
	}
	return out
}

func sampleReport() *compare.Report {
	return &compare.Report{
		Server: "PostgreSQL 15.20", SharedBuffers: "128MB", Rows: 1000, Writers: 1, Batch: 100,
		Results: []compare.Result{
			{Strategy: "bigserial", Scheme: "bigserial", Column: "bigint", Method: "copy", Rows: 1000, KeyBytes: 8,
				Seconds: 0.01, RowsPerSec: 100000, RowsPerSecTenths: tenths(100000), P50Ms: pf(1), P99Ms: pf(2),
				IndexBytes: 1 << 20, TableBytes: 4 << 20, LeafPages: p64(100), AvgLeafDensity: pf(90.1),
				LeafFragmentation: pf(0), PageSplits: p64(99), WALPageSplits: p64(99), WALBytes: 2 << 20,
				WALFPI: p64(3), WALFPIBytes: p64(24000), IdxBlksRead: p64(101), IdxBlksHit: p64(2000)},
			{Strategy: "generate_series", Scheme: "bigserial", Column: "bigint", Method: "insert-select", Rows: 1000,
				KeyBytes: 8, Seconds: 0.008, RowsPerSec: 125000, IndexBytes: 1 << 20, TableBytes: 4 << 20, WALBytes: 2 << 20},
			{Strategy: "uuidv4", Scheme: "uuidv4", Column: "uuid", Method: "copy", Rows: 1000, KeyBytes: 16,
				Seconds: 0.02, RowsPerSec: 50000, RowsPerSecTenths: tenths(50000), P50Ms: pf(2), P99Ms: pf(4),
				IndexBytes: 2 << 20, IndexBytesPerRow: 2097.152, TableBytes: 4 << 20, LeafPages: p64(250), AvgLeafDensity: pf(69.5),
				LeafFragmentation: pf(48.2), PageSplits: p64(249), WALBytes: 3 << 20,
				Unavailable: []string{"wal_page_splits", "wal_fpi", "wal_fpi_bytes", "idx_blks_read", "idx_blks_hit"}},
		},
		Notes: []string{"pg_walinspect unavailable (test)"},
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(out, "\n")
	var v4 string
	for _, l := range lines {
		if strings.HasPrefix(l, "uuidv4 ") {
			v4 = l
			break
		}
	}
	// uuidv4: half the rows/s of bigserial, twice its index, 1.5× its WAL.
	fields := strings.Fields(v4)
	want := []string{"uuidv4", "16", "50000", "0.50", "2.00", "4.00", "2.0", "2.00", "2097.2", "250", "69.5", "48.2", "249", "n/a", "3.0", "1.50", "n/a", "n/a", "n/a"}
	if strings.Join(fields, " ") != strings.Join(want, " ") {
		t.Errorf("uuidv4 line = %q; want fields %q", v4, want)
	}
	for _, s := range []string{
		"harness check: bigserial by COPY 100000 rows/s, plain INSERT ... SELECT generate_series 125000 rows/s: 0.80×",
		"  - pg_walinspect unavailable (test)",
		"rows/s by tenth",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("WriteTable output lacks %q:\n%s", s, out)
		}
	}
	// Aligned: every line of the first table has the header's width.
	head := lines[3]
	for _, l := range lines[4:7] {
		if len([]rune(l)) != len([]rune(head)) {
			t.Errorf("line %q is %d runes wide; header is %d", l, len([]rune(l)), len([]rune(head)))
		}
	}
}

func TestWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := sampleReport().WriteFiles(dir); err != nil {
		t.Fatalf("WriteFiles = %v", err)
	}
	for _, f := range compare.OutputFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %d bytes, %v; want a file", f, len(b), err)
			continue
		}
		switch filepath.Ext(f) {
		case ".png":
			if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
				t.Errorf("%s is not a PNG", f)
			}
		case ".svg":
			if !bytes.Contains(b, []byte("<svg")) {
				t.Errorf("%s is not an SVG", f)
			}
		}
	}

	js, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	var arr []map[string]any
	if err := json.Unmarshal(js, &arr); err != nil || len(arr) != 3 {
		t.Fatalf("results.json = %d objects, %v; want an array of 3", len(arr), err)
	}
	for _, k := range []string{"strategy", "rows", "rows_per_sec", "index_bytes", "table_bytes", "leaf_pages",
		"avg_leaf_density", "leaf_fragmentation", "page_splits", "wal_bytes", "wal_fpi", "p50_ms", "p99_ms"} {
		if _, ok := arr[0][k]; !ok {
			t.Errorf("results.json object lacks %q", k)
		}
	}
	if arr[2]["strategy"] != "uuidv4" || arr[2]["avg_leaf_density"] != 69.5 || arr[2]["wal_fpi"] != nil {
		t.Errorf("results.json uuidv4 = %v; want density 69.5 and wal_fpi null", arr[2])
	}

	f, _ := os.Open(filepath.Join(dir, "results.csv"))
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 4 {
		t.Fatalf("results.csv = %d records, %v; want header + 3", len(recs), err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if got := recs[3][col["leaf_fragmentation"]]; got != "48.2" {
		t.Errorf("results.csv uuidv4 leaf_fragmentation = %q; want 48.2", got)
	}
	if got := recs[3][col["wal_fpi"]]; got != "" {
		t.Errorf("results.csv uuidv4 wal_fpi = %q; want empty (unavailable)", got)
	}
	if got := recs[1][col["rows_per_sec_t10"]]; got != "100000" {
		t.Errorf("results.csv bigserial rows_per_sec_t10 = %q; want 100000", got)
	}
}
