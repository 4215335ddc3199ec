package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/idgenkit/idgen/internal/echo"
)

// DataFiles returns the files WriteFiles writes into its directory, in a
// new slice. What people read (report.html, the charts) is written by
// package compare/report, whose WriteFiles writes these too.
func DataFiles() []string { return []string{"results.json", "results.csv"} }

// WriteFiles writes the report's data into dir, creating it: results.json
// ({"meta": Meta, "results": [Result, ...]}) and results.csv (one row per
// Result, the columns named as the JSON fields, rows_per_sec_t1..t10 for
// the tenths, then engine, trials, rows_per_sec_ci_lo, rows_per_sec_ci_hi,
// scenario, device_reads and device_writes).
func (r *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(struct {
		Meta    Meta     `json:"meta"`
		Results []Result `json:"results"`
	}{r.Meta(), r.Results}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	cs, err := r.csv()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.csv"), cs, 0o644)
}

// CheckOutDir reports whether WriteFiles could write into dir, without
// creating anything that stays: dir, or where it does not exist yet its
// nearest existing parent, must be a directory the process can create a
// file in (one is created and removed). Run it before a run, so that an
// unwritable dir is refused before the work. Errors wrap ErrBadInput and
// name dir (cut to about 64 bytes) and the path at fault.
func CheckOutDir(dir string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: output directory %s: %s", ErrBadInput, echo.Quote(dir), why)
	}
	p := filepath.Clean(dir)
	for {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return bad(p + " is a file, not a directory")
		case err == nil:
			f, err := os.CreateTemp(p, ".idgen-compare-*")
			if err != nil {
				return bad("cannot create files in " + p)
			}
			f.Close()
			os.Remove(f.Name())
			return nil
		case errors.Is(err, fs.ErrPermission):
			return bad("no access to " + p)
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return bad("cannot read " + p)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return bad("no existing parent directory")
		}
		p = parent
	}
}

func (r *Report) csv() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := []string{"strategy", "scheme", "column", "method", "worker_key", "rows", "writers", "batch", "preload", "key_bytes",
		"seconds", "rows_per_sec", "p50_ms", "p99_ms", "index_bytes", "table_bytes", "index_bytes_per_row",
		"leaf_pages", "avg_leaf_density", "leaf_fragmentation", "page_splits", "wal_page_splits",
		"wal_bytes", "wal_fpi", "wal_fpi_bytes", "idx_blks_read", "idx_blks_hit"}
	for i := 1; i <= 10; i++ {
		head = append(head, fmt.Sprintf("rows_per_sec_t%d", i))
	}
	head = append(head, "engine", "trials", "rows_per_sec_ci_lo", "rows_per_sec_ci_hi", "scenario", "device_reads", "device_writes")
	w.Write(head)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	of := func(v *float64) string {
		if v == nil {
			return ""
		}
		return f(*v)
	}
	oi := func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	}
	for _, x := range r.Results {
		row := []string{x.Strategy, x.Scheme, x.Column, x.Method, x.WorkerKey, strconv.Itoa(x.Rows), strconv.Itoa(x.Writers),
			strconv.Itoa(x.Batch), strconv.Itoa(x.Preload), strconv.Itoa(x.KeyBytes),
			f(x.Seconds), f(x.RowsPerSec), of(x.P50Ms), of(x.P99Ms),
			strconv.FormatInt(x.IndexBytes, 10), strconv.FormatInt(x.TableBytes, 10), f(x.IndexBytesPerRow),
			oi(x.LeafPages), of(x.AvgLeafDensity), of(x.LeafFragmentation), oi(x.PageSplits), oi(x.WALPageSplits),
			strconv.FormatInt(x.WALBytes, 10), oi(x.WALFPI), oi(x.WALFPIBytes), oi(x.IdxBlksRead), oi(x.IdxBlksHit)}
		for i := range 10 {
			v := ""
			if i < len(x.RowsPerSecTenths) {
				v = f(x.RowsPerSecTenths[i])
			}
			row = append(row, v)
		}
		lo, hi := "", ""
		if ci := x.RowsPerSecCI; ci != nil {
			lo, hi = f(ci[0]), f(ci[1])
		}
		row = append(row, x.Engine, strconv.Itoa(x.Trials), lo, hi, x.Scenario, oi(x.DeviceReads), oi(x.DeviceWrites))
		w.Write(row)
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}
